"""Storing imported annotations: locate spans, map categories, write in one transaction.

Spans are placed as `validation create-round` places items (app.imports.locate): given
offsets are used when the stored text there is the span's text; otherwise the text is
searched (exact, then whitespace- and quote-tolerant), in the given paragraph when there
is one; several matches use the first and are reported as ambiguous; no match rejects
the annotation. The two spans of a pair with the same text go to distinct occurrences.
For a BooookScore relation or a FALTE pair, the later span is the annotation's span and
the earlier one its paired span (docs/contracts.md#conventions-used-everywhere: the
paired span points back).

A label becomes a category key through `--taxonomy-map` ({label: key}), else as its
lower-cased, hyphenated form ("entity omission" -> "entity-omission"); a label that is
no key of the taxonomy is an error. An annotation read without a label is stored with no
category (app.imports.annotation_formats warns about each). The rows read as one error unit (one
per label of a released span, or our export's records sharing `unit_id`) share
`unit_id` in the database: the id of the unit's first row; a unit of one row keeps it
null (a unit of its own, as every worker's Add). Any problem refuses the whole file and nothing is
written, unless `skip_rejected`, which leaves out the annotations at fault (and reports
them). A document already stored must have the same text as the file gives; an annotator
who already has a session on a document is refused (importing twice would duplicate).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import select

from app.core.errors import ProblemsError
from app.core.extensions import db
from app.imports.annotation_formats import (
    ImportedAnnotation,
    ImportedSession,
    ParsedFile,
    read_annotations,
)
from app.imports.document_formats import DocumentInput
from app.imports.interop_formats import INTEROP_FORMATS, read_interop
from app.imports.locate import Located, ambiguity_notes, locate_pair
from app.models import Annotation, AnnotationSession, Annotator, Document, Paragraph, utcnow
from app.rules.statuses import SessionStatus
from app.studies import current_study_id
from app.taxonomy import current_taxonomy

Progress = Callable[[int], None]


class AnnotationImportError(ProblemsError):
    """The import was refused; nothing was written. `problems`: one line each."""


@dataclass
class AnnotationImportSummary:
    """What an import did, and what it reported."""

    documents_created: list[str] = field(default_factory=list)
    sessions: int = 0
    annotations: int = 0
    ambiguous: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


@dataclass
class _Placed:
    source: ImportedAnnotation
    category: str | None
    span: Located
    paired: Located | None


def category_key(label: str, mapping: Mapping[str, str], keys: set[str]) -> str | None:
    """The taxonomy key a label stands for, or None when there is none."""
    key = mapping.get(label) or "-".join(label.lower().split())
    return key if key in keys else None


@dataclass
class ImportPlan:
    """A checked import, ready to write: `sessions` to store, `store()` writes them."""

    parsed: ParsedFile
    texts: dict[str, tuple[str, ...]]
    rows: dict[str, Document | None]
    placed: dict[tuple, list[_Placed]]
    summary: AnnotationImportSummary

    @property
    def sessions(self) -> int:
        """How many sessions `store` writes (for a progress bar)."""
        return len(self.placed)

    def store(self, progress: Progress | None = None) -> AnnotationImportSummary:
        """Write documents, sessions and annotations in one transaction."""
        advance = progress or (lambda _count: None)
        summary, taxonomy = self.summary, current_taxonomy()
        try:
            summary.documents_created = _store_documents(self.texts, self.rows)
            annotators: dict[tuple[str, str], Annotator] = {}
            for key, placed in self.placed.items():
                session = self.parsed.sessions[key]
                document = self.rows[session.document_id]
                _store_session(session, document, placed, annotators, taxonomy)
                summary.sessions += 1
                summary.annotations += len(placed)
                advance(1)
            db.session.commit()
        except BaseException:
            db.session.rollback()
            raise
        return summary


def prepare_import(
    path: Path,
    fmt: str = "auto",
    id_prefix: str = "",
    taxonomy_map: Mapping[str, str] | None = None,
    skip_rejected: bool = False,
) -> ImportPlan:
    """Read and check the file (a folder for brat), locate every span; raise
    AnnotationImportError on problems."""
    if fmt in INTEROP_FORMATS:
        parsed = read_interop(Path(path), fmt, StoredDocuments(id_prefix), id_prefix)
    else:
        parsed = read_annotations(Path(path), fmt, id_prefix)
    summary = AnnotationImportSummary(warnings=list(parsed.warnings))
    problems = list(parsed.problems)
    texts, rows = _documents(parsed, problems)
    keys = {category.key for category in current_taxonomy().categories}
    placed: dict[tuple, list[_Placed]] = {}
    for key, session in parsed.sessions.items():
        if session.document_id not in texts:
            continue
        placed[key] = []
        for annotation in session.annotations:
            outcome = _place(annotation, session, texts, taxonomy_map or {}, keys, summary)
            if isinstance(outcome, str):
                problems.append(f"{annotation.where}: {outcome}")
            else:
                placed[key].append(outcome)
    for key in _stored_sessions(parsed, texts, problems):
        placed.pop(key, None)  # never a second session for the same pair
    if problems and not skip_rejected:
        raise AnnotationImportError(problems)
    summary.rejected = problems
    return ImportPlan(parsed, texts, rows, placed, summary)


class StoredDocuments(Mapping[str, tuple[str, ...]]):
    """The current study's stored documents as the W3C and brat readers want them: document
    id -> paragraphs, each read from the database when first asked for (a file names a few
    documents of many). `prefix` is --id-prefix: the file's id `x` is the stored `prefix+x`."""

    def __init__(self, prefix: str = "") -> None:
        self.prefix = prefix
        self._cache: dict[str, tuple[str, ...] | None] = {}

    def _load(self, document_id: str) -> tuple[str, ...] | None:
        if document_id not in self._cache:
            row = db.session.scalars(
                select(Document).where(
                    Document.study_id == current_study_id(),
                    Document.external_id == self.prefix + document_id,
                )
            ).first()
            self._cache[document_id] = (
                None
                if row is None
                else tuple(p.text for p in sorted(row.paragraphs, key=lambda p: p.position))
            )
        return self._cache[document_id]

    def __getitem__(self, document_id: str) -> tuple[str, ...]:
        found = self._load(document_id) if isinstance(document_id, str) else None
        if found is None:
            raise KeyError(document_id)
        return found

    def __contains__(self, document_id: object) -> bool:
        return isinstance(document_id, str) and self._load(document_id) is not None

    def __iter__(self) -> Iterator[str]:
        query = select(Document.external_id).where(
            Document.study_id == current_study_id(),
            Document.external_id.startswith(self.prefix),
        )
        return (external[len(self.prefix) :] for external in db.session.scalars(query))

    def __len__(self) -> int:
        return sum(1 for _ in self)


def import_annotations(
    path: Path,
    fmt: str = "auto",
    id_prefix: str = "",
    taxonomy_map: Mapping[str, str] | None = None,
    skip_rejected: bool = False,
    progress: Progress | None = None,
) -> AnnotationImportSummary:
    """Import the file's annotations as submitted sessions; raise AnnotationImportError."""
    plan = prepare_import(path, fmt, id_prefix, taxonomy_map, skip_rejected)
    return plan.store(progress)


def _documents(
    parsed: ParsedFile, problems: list[str]
) -> tuple[dict[str, tuple[str, ...]], dict[str, Document | None]]:
    """Each session's document text, from the database or the file; problems for the rest."""
    wanted = {session.document_id: session.where for session in parsed.sessions.values()}
    stored = {
        doc.external_id: doc
        for doc in db.session.scalars(
            select(Document).where(
                Document.study_id == current_study_id(), Document.external_id.in_(wanted)
            )
        )
    }
    texts: dict[str, tuple[str, ...]] = {}
    rows: dict[str, Document | None] = {}
    for document_id, where in wanted.items():
        row = stored.get(document_id)
        given = parsed.texts.get(document_id)
        if row is not None:
            paragraphs = tuple(p.text for p in sorted(row.paragraphs, key=lambda p: p.position))
            if given is not None and given != paragraphs:
                problems.append(
                    f"{where}: document {document_id!r} is stored with another text "
                    "(use --id-prefix to import this one beside it)"
                )
                continue
            texts[document_id], rows[document_id] = paragraphs, row
        elif given is not None:
            if len(document_id) > 200 or "/" in document_id:
                problems.append(f"{where}: document id {document_id!r}: at most 200, no '/'")
                continue
            texts[document_id], rows[document_id] = given, None
        else:
            problems.append(
                f"{where}: document {document_id!r} is not imported (the file holds no text: "
                "`flask import-documents` it first)"
            )
    return texts, rows


def _stored_sessions(
    parsed: ParsedFile, texts: dict[str, tuple[str, ...]], problems: list[str]
) -> list[tuple]:
    """The file's (document, annotator) pairs that already have a session, as problems."""
    keys = [key for key in parsed.sessions if key[0] in texts]
    if not keys:
        return []
    query = (
        select(Document.external_id, Annotator.platform, Annotator.external_id)
        .join(AnnotationSession, AnnotationSession.document_id == Document.id)
        .join(Annotator, Annotator.id == AnnotationSession.annotator_id)
        .where(
            Document.study_id == current_study_id(),
            Document.external_id.in_({key[0] for key in keys}),
        )
    )
    existing = {(doc, (platform, ext)) for doc, platform, ext in db.session.execute(query)}
    clashes = [key for key in keys if key in existing]
    for key in clashes:
        problems.append(
            f"{parsed.sessions[key].where}: annotator {':'.join(key[1])} already has a "
            f"session on {key[0]!r} (imported before?)"
        )
    return clashes


def _place(
    annotation: ImportedAnnotation,
    session: ImportedSession,
    texts: dict[str, tuple[str, ...]],
    mapping: Mapping[str, str],
    keys: set[str],
    summary: AnnotationImportSummary,
) -> _Placed | str:
    category = None if annotation.label is None else category_key(annotation.label, mapping, keys)
    if category is None and annotation.label is not None:
        return (
            f"category: {annotation.label!r} is no category of the taxonomy "
            f"({', '.join(sorted(keys))}); map it with --taxonomy-map"
        )
    severities = current_taxonomy().severity_weights
    if annotation.severity is not None and annotation.severity not in severities:
        known = ", ".join(severities) or "none"
        return f"severity: {annotation.severity!r} is no severity of the taxonomy ({known})"
    paragraphs = texts[session.document_id]
    placed = locate_pair(annotation.span, annotation.paired, paragraphs, session.document_id)
    if isinstance(placed, str):
        return placed
    span, paired = placed
    if paired is not None and annotation.order_pair and _key(paired) > _key(span):
        span, paired = paired, span
    summary.ambiguous += ambiguity_notes(annotation.where, session.document_id, span, paired)
    return _Placed(annotation, category, span, paired)


def _key(located: Located) -> tuple[int, int]:
    return (located.paragraph_id, located.start)


def _store_documents(
    texts: dict[str, tuple[str, ...]], rows: dict[str, Document | None]
) -> list[str]:
    created = []
    for document_id, paragraphs in texts.items():
        if rows[document_id] is not None:
            continue
        row = Document(
            study_id=current_study_id(),
            external_id=document_id,
            content_hash=DocumentInput(document_id, None, paragraphs).content_hash,
            paragraph_count=len(paragraphs),
            paragraphs=[Paragraph(position=n, text=t) for n, t in enumerate(paragraphs)],
        )
        db.session.add(row)
        rows[document_id] = row
        created.append(document_id)
    db.session.flush()
    return created


def _annotator(key: tuple[str, str], cache: dict[tuple[str, str], Annotator]) -> Annotator:
    if key not in cache:
        platform, external_id = key
        row = db.session.scalars(
            select(Annotator).filter_by(platform=platform, external_id=external_id)
        ).first()
        if row is None:
            row = Annotator(platform=platform, external_id=external_id)
            db.session.add(row)
        cache[key] = row
    return cache[key]


def _store_session(
    session: ImportedSession,
    document: Document,
    placed: list[_Placed],
    annotators: dict[tuple[str, str], Annotator],
    taxonomy,
) -> None:
    last = max(document.paragraph_count - 1, 0)
    now = utcnow()
    row = AnnotationSession(
        study_id=document.study_id,
        document=document,
        annotator=_annotator(session.annotator, annotators),
        status=SessionStatus.SUBMITTED,
        position=last,
        furthest=last,
        taxonomy_version=session.taxonomy_version or taxonomy.version,
        platform=session.platform[:20],
        submitted_at=now,
    )
    db.session.add(row)
    units: dict[object, list[Annotation]] = {}
    for number, item in enumerate(placed):
        paired = item.paired
        unit = item.source.unit if item.source.unit is not None else ("row", number)
        units.setdefault(unit, []).append(
            Annotation(
                session=row,
                client_id=str(uuid.uuid4()),
                paragraph_id=item.span.paragraph_id,
                span_start=item.span.start,
                span_end=item.span.end,
                span_text=item.span.text,
                category=item.category,
                paired_paragraph_id=paired.paragraph_id if paired else None,
                paired_start=paired.start if paired else None,
                paired_end=paired.end if paired else None,
                paired_text=paired.text if paired else None,
                comment=item.source.comment,
                severity=item.source.severity,
                deleted_at=_moment(item.source.removed_at),
                **_created(item.source.created_at),
            )
        )
    rows = [annotation for unit in units.values() for annotation in unit]
    db.session.add_all(rows)
    db.session.flush()
    for unit in units.values():
        if len(unit) > 1:  # one span, several labels: the rows share the first one's id
            for annotation in unit:
                annotation.unit_id = unit[0].id
    db.session.flush()


def _created(value: str | None) -> dict[str, datetime]:
    """created_at when the file gives it (W3C `created`), else the column's default (now)."""
    moment = _moment(value)
    if moment is not None and moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)  # a time without its zone is read as UTC
    return {} if moment is None else {"created_at": moment}


def _moment(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
