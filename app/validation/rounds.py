"""Creating a validation round: resolve documents and spans, shuffle, store all at once.

Nothing is written unless every item is usable, or the caller asked to skip the
rejected ones (`skip_rejected`); either way the summary lists every rejected item with
its file and line or record, and every ambiguous span (its text occurs more than once:
the first occurrence is used).

As every study figure, a round leaves out (and counts in its summary) the items on
attention-check documents (documents of this database with gold spans) and the
annotations of workers the study leaves out (app.crowd.checks.flagged): those marked
`flagged` in our export, and those of this database's sessions whose worker is left out
now; and decoys (issue 32): annotations our export marks `decoy` (made from a decoy
suggestion) and decoy suggestions of the suggestions export.

A round of a validation study (kind validation, docs/validation-rounds.md "Validation
studies") judges the annotation study it names (`judges_study_id`): its items' documents
are that study's (then the validation study's own, for documents given inline), their
annotations and left-out workers are that study's; the round itself, and documents given
inline that neither holds, belong to the validation study.
"""

from __future__ import annotations

import random
import re
import secrets
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import func, insert, select

from app.core.errors import ProblemsError
from app.core.extensions import db
from app.crowd.checks.flagged import left_out_workers
from app.crowd.settings import study_settings
from app.exports.record import ANNOTATOR_ID, annotation_select
from app.imports.document_formats import DocumentInput, content_hash
from app.imports.item_formats import ItemInput, SpanInput, generated_id, read_items
from app.imports.locate import Located, locate, overlap, place_pair
from app.models import (
    Annotation,
    AnnotationSession,
    Document,
    Paragraph,
    Study,
    ValidationItem,
    ValidationJudgment,
    ValidationRound,
)
from app.studies import current_study, current_study_id, use_study
from app.taxonomy import Taxonomy

ROUND_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$")


class RoundError(ProblemsError):
    """The round was not created; `problems` says why (one line each)."""


@dataclass
class RoundSummary:
    """What create_round did: items per source, ambiguous spans, rejected items."""

    name: str
    seed: int
    items_by_source: dict[str, int] = field(default_factory=dict)
    ambiguous: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # e.g. BooookScore's null books
    rejected: list[str] = field(default_factory=list)
    documents_imported: list[str] = field(default_factory=list)
    # Annotations of sessions not submitted (our export's `"submitted": false`), left out.
    unsubmitted_left_out: int = 0
    # Items on attention-check documents, and annotations of workers left out
    # (app.crowd.checks.flagged), left out.
    checks_left_out: int = 0
    flagged_left_out: int = 0
    decoys_left_out: int = 0  # made from, or being, a decoy suggestion

    @property
    def total(self) -> int:
        """Items stored in the round."""
        return sum(self.items_by_source.values())


def left_out_lines(summary: RoundSummary) -> list[str]:
    """What the round left out as every study figure does, one line each (CLI, console)."""
    lines = []
    if summary.checks_left_out:
        lines.append(f"{summary.checks_left_out} item(s) on attention-check documents")
    if summary.flagged_left_out:
        lines.append(
            f"{summary.flagged_left_out} annotation(s) of workers left out of the study's "
            "figures (failed checks, failed training, flagged)"
        )
    if summary.decoys_left_out:
        lines.append(
            f"{summary.decoys_left_out} decoy suggestion(s) or annotation(s) made from one"
        )
    return lines


@dataclass
class _Doc:
    external_id: str
    paragraphs: tuple[str, ...]
    row: Document | None  # None: to be imported with the round


@dataclass
class _Resolved:
    item: ItemInput
    doc: _Doc
    span: Located
    paired: Located | None
    external_id: str = ""
    annotation_id: int | None = None


@dataclass(frozen=True)
class RoundOverview:
    """One line of the list of rounds."""

    name: str
    judgments_per_item: int
    created_at: object
    items: int
    judgments: int


def round_overview() -> list[RoundOverview]:
    """Every round of the current study with its item and judgment counts, oldest first
    (two GROUP BYs)."""
    items = (
        select(ValidationItem.round_id, func.count().label("n"))
        .group_by(ValidationItem.round_id)
        .subquery()
    )
    judgments = (
        select(ValidationItem.round_id, func.count().label("n"))
        .join(ValidationJudgment, ValidationJudgment.item_id == ValidationItem.id)
        .group_by(ValidationItem.round_id)
        .subquery()
    )
    rows = db.session.execute(
        select(
            ValidationRound.name,
            ValidationRound.judgments_per_item,
            ValidationRound.created_at,
            func.coalesce(items.c.n, 0),
            func.coalesce(judgments.c.n, 0),
        )
        .outerjoin(items, items.c.round_id == ValidationRound.id)
        .outerjoin(judgments, judgments.c.round_id == ValidationRound.id)
        .where(ValidationRound.study_id == current_study_id())
        .order_by(ValidationRound.created_at, ValidationRound.id)
    ).all()
    return [RoundOverview(*row) for row in rows]


def find_round(name: str) -> ValidationRound | None:
    """The round with this name, or None."""
    return db.session.scalars(
        select(ValidationRound).filter_by(name=name, study_id=current_study_id())
    ).first()


def round_settings(taxonomy: Taxonomy) -> dict:
    """The taxonomy's validation settings, copied into the round when it is created."""
    return {
        "reasons": list(taxonomy.validation.reasons),
        "category_reasons": list(taxonomy.validation.category_reasons),
        "partial_counts_as_valid": taxonomy.validation.partial_counts_as_valid,
        "taxonomy_version": taxonomy.version,
    }


def create_round(
    name: str,
    paths: Sequence[Path],
    taxonomy: Taxonomy,
    *,
    fmt: str = "auto",
    source: str | None = None,
    judgments_per_item: int = 1,
    sample: int | None = None,
    seed: int | None = None,
    skip_rejected: bool = False,
    include_unsubmitted: bool = False,
    decision: str = "all",
) -> RoundSummary:
    """Build and store a round from item files; raise RoundError and write nothing on failure.

    Annotations of sessions that were not submitted (still open or abandoned) are left out
    unless `include_unsubmitted`: their workers may still change or remove them. From the
    suggestions export, `decision` keeps the suggestions some worker accepted, edited or
    rejected (a standing decision), any decided one, or all.
    """
    _check_arguments(name, judgments_per_item, sample)
    items: list[ItemInput] = []
    problems: list[str] = []
    skipped: list[str] = []
    for path in paths:
        found, trouble = read_items(Path(path), fmt, skipped)
        items += found
        problems += trouble
    left_out = 0
    if not include_unsubmitted:
        kept = [item for item in items if item.submitted is not False]
        left_out, items = len(items) - len(kept), kept
    items = [item for item in items if item.has_decision(decision)]
    study = current_study()
    judged = judged_study(study)
    docs, doc_problems = _documents(items, [s.id for s in (judged, study) if s is not None])
    resolved, ambiguous = [], []
    seen: set[str] = set()
    for item in items:
        outcome = _resolve(item, docs, doc_problems, source)
        if isinstance(outcome, str):
            problems.append(outcome)
            continue
        outcome.external_id = item.external_id or _unique(
            generated_id(item, outcome.doc.external_id), seen
        )
        if outcome.external_id in seen:
            problems.append(f"{item.where}: id {outcome.external_id!r} is used twice")
            continue
        seen.add(outcome.external_id)
        for label, located in (("span", outcome.span), ("paired_span", outcome.paired)):
            if located is not None and located.ambiguous:
                ambiguous.append(
                    f"{item.where}: {label} occurs {located.matches} times in "
                    f"{outcome.doc.external_id}; the first one is used "
                    f"(paragraph {located.paragraph_id}, {located.start}-{located.end})"
                )
        resolved.append(outcome)
    if problems and not skip_rejected:
        raise RoundError(problems)
    with working_on(judged or study):
        _link_annotations(resolved)
        decoys = sum(r.item.decoy for r in resolved)
        resolved = [r for r in resolved if not r.item.decoy]
        resolved, checks, flagged = _leave_out(resolved)
    if not resolved:
        why = "no usable items: the round was not created"
        if left_out:
            why += (
                f" ({left_out} annotation(s) of unsubmitted sessions left out; "
                "--include-unsubmitted keeps them)"
            )
        if checks or flagged or decoys:
            why += (
                f" ({checks} item(s) on attention-check documents, {flagged} "
                f"annotation(s) of flagged workers and {decoys} decoy(s) left out)"
            )
        raise RoundError([*problems, why])
    seed = seed if seed is not None else secrets.randbelow(2**31)
    chosen = list(resolved)
    random.Random(seed).shuffle(chosen)
    if sample is not None:
        chosen = chosen[:sample]
    summary = RoundSummary(
        name=name,
        seed=seed,
        ambiguous=ambiguous,
        rejected=problems,
        unsubmitted_left_out=left_out,
        checks_left_out=checks,
        flagged_left_out=flagged,
        decoys_left_out=decoys,
    )
    summary.skipped = skipped
    try:
        summary.documents_imported = _store_new_documents(chosen)
        summary.items_by_source = _store_round(name, chosen, taxonomy, judgments_per_item, seed)
        db.session.commit()
    except BaseException:
        db.session.rollback()
        raise
    return summary


def judged_study(study: Study) -> Study | None:
    """The annotation study a validation study judges (None: the study judges its own)."""
    if study.judges_study_id is None:
        return None
    return db.session.get(Study, study.judges_study_id)


@contextmanager
def working_on(study: Study) -> Iterator[None]:
    """Read as `study` for the block (its annotations, workers and settings), then go
    back to the study the round is made in."""
    before = current_study()
    use_study(study)
    try:
        yield
    finally:
        use_study(before)


def _check_arguments(name: str, judgments_per_item: int, sample: int | None) -> None:
    problems = []
    if not ROUND_NAME.match(name):
        problems.append(
            f"round name {name!r}: use 1-200 letters, digits, '.', '_' or '-' "
            "(it is part of the validators' address /validate/NAME)"
        )
    elif db.session.scalar(
        select(ValidationRound.id).where(
            ValidationRound.name == name, ValidationRound.study_id == current_study_id()
        )
    ):
        problems.append(f"a round named {name!r} already exists")
    if judgments_per_item < 1:
        problems.append("--judgments-per-item must be at least 1")
    if sample is not None and sample < 1:
        problems.append("--sample must be at least 1")
    if problems:
        raise RoundError(problems)


def _unique(candidate: str, seen: set[str]) -> str:
    number, base = 2, candidate
    while candidate in seen:
        candidate, number = f"{base}-{number}", number + 1
    return candidate


def _documents(items: list[ItemInput], pool: list[int]) -> tuple[dict[str, _Doc], dict[str, str]]:
    """Each referenced document id -> its text; problems by document id. The documents
    are looked up in the studies of `pool`, the first holding an id giving it."""
    wanted = {item.document_id for item in items}
    stored = _load_documents(
        select(Document).where(Document.study_id.in_(pool), Document.external_id.in_(wanted)),
        pool,
    )
    inline: dict[str, tuple[str, ...]] = {}
    problems: dict[str, str] = {}
    for item in items:
        if item.paragraphs is None:
            continue
        previous = inline.setdefault(item.document_id, item.paragraphs)
        if previous != item.paragraphs:
            problems[item.document_id] = (
                f"document {item.document_id!r} is given inline with two different texts"
            )
    hashes = {content_hash(p): doc_id for doc_id, p in inline.items() if doc_id not in stored}
    by_hash = _load_documents(
        select(Document).where(Document.study_id.in_(pool), Document.content_hash.in_(hashes)),
        pool,
    )
    same_text = {doc.row.content_hash: doc for doc in by_hash.values() if doc.row}
    docs: dict[str, _Doc] = {}
    for doc_id in wanted:
        paragraphs = inline.get(doc_id)
        if doc_id in stored:
            docs[doc_id] = stored[doc_id]
            if paragraphs is not None and paragraphs != stored[doc_id].paragraphs:
                problems.setdefault(
                    doc_id,
                    f"document {doc_id!r} is already imported with a different text",
                )
        elif paragraphs is not None:
            docs[doc_id] = same_text.get(content_hash(paragraphs)) or _Doc(doc_id, paragraphs, None)
    return docs, problems


def _load_documents(query, pool: list[int]) -> dict[str, _Doc]:
    # The earlier study of the pool wins an id both hold: read it last.
    rows = sorted(db.session.scalars(query), key=lambda row: -pool.index(row.study_id))
    if not rows:
        return {}
    texts: dict[int, list[str]] = {row.id: [] for row in rows}
    paragraphs = select(Paragraph.document_id, Paragraph.text).where(
        Paragraph.document_id.in_(texts)
    )
    for document_id, text in db.session.execute(paragraphs.order_by(Paragraph.position)):
        texts[document_id].append(text)
    return {row.external_id: _Doc(row.external_id, tuple(texts[row.id]), row) for row in rows}


def _resolve(
    item: ItemInput, docs: dict[str, _Doc], doc_problems: dict[str, str], source: str | None
) -> _Resolved | str:
    """The item with its document and offsets, or the problem that rejects it."""
    if item.document_id in doc_problems:
        return f"{item.where}: {doc_problems[item.document_id]}"
    doc = docs.get(item.document_id)
    if doc is None:
        hint = item.document_hint or (
            "import it first with `flask import-documents`, or give it inline"
        )
        return f"{item.where}: document {item.document_id!r} is not imported ({hint})"
    if item.removed:
        return f"{item.where}: the annotation was removed (removed_at is set)"
    if not (item.source or source):
        return f"{item.where}: source: missing (give it in the item or with --source)"
    item.source = item.source or source
    span = _place(item.span, doc)
    if isinstance(span, str):
        return f"{item.where}: span: {span}"
    paired = None
    if item.paired_span is not None:
        paired = _place(item.paired_span, doc)
        if isinstance(paired, str):
            return f"{item.where}: paired_span: {paired}"
        if overlap(span, paired) and not (item.span.has_offsets or item.paired_span.has_offsets):
            # Two spans of a pair with the same text: put them at distinct occurrences.
            span, paired = place_pair(
                doc.paragraphs,
                (item.span.text, item.span.paragraph_id),
                (item.paired_span.text, item.paired_span.paragraph_id),
            ) or (span, paired)
    return _Resolved(item, doc, span, paired)


def _place(span: SpanInput, doc: _Doc) -> Located | str:
    paragraphs = doc.paragraphs
    if span.paragraph_id is not None and span.paragraph_id >= len(paragraphs):
        return f"no paragraph {span.paragraph_id} in {doc.external_id} ({len(paragraphs)} in all)"
    if span.has_offsets:
        stored = paragraphs[span.paragraph_id][span.start : span.end]
        if stored != span.text:
            return (
                f"text {span.text[:60]!r} is not paragraph {span.paragraph_id}"
                f"[{span.start}:{span.end}] of {doc.external_id} ({stored[:60]!r})"
            )
        return Located(span.paragraph_id, span.start, span.end, stored, 1)
    found = locate(paragraphs, span.text, span.paragraph_id)
    if found is None:
        return f"text {span.text[:60]!r} not found in document {doc.external_id}"
    return found


def _leave_out(resolved: list[_Resolved]) -> tuple[list[_Resolved], int, int]:
    """The items a round keeps, then how many it leaves out on attention-check documents
    and how many annotations of workers left out (see the module docstring)."""
    on_checks = [r for r in resolved if r.doc.row is not None and r.doc.row.gold]
    rest = [r for r in resolved if r.doc.row is None or not r.doc.row.gold]
    labels = set()
    if any(r.annotation_id is not None for r in rest):
        labels = {worker.label for worker in left_out_workers(study_settings()).values()}
    kept = [
        r
        for r in rest
        if not r.item.flagged
        and not (r.annotation_id is not None and r.item.origin_annotator in labels)
    ]
    return kept, len(on_checks), len(rest) - len(kept)


def _link_annotations(chosen: list[_Resolved]) -> None:
    """Point items made from our own export at the annotation row they came from."""
    wanted = [r for r in chosen if r.item.origin_annotator and r.doc.row is not None]
    if not wanted:
        return
    query = (
        annotation_select(
            Annotation.id,
            AnnotationSession.document_id,
            ANNOTATOR_ID,
            Annotation.paragraph_id,
            Annotation.span_start,
            Annotation.span_end,
        )
        .where(AnnotationSession.document_id.in_({r.doc.row.id for r in wanted}))
        .order_by(Annotation.deleted_at.is_not(None), Annotation.id)
    )
    found: dict[tuple, int] = {}
    for ann_id, doc_id, annotator, par, start, end in db.session.execute(query):
        found.setdefault((doc_id, annotator, par, start, end), ann_id)
    for r in wanted:
        key = (r.doc.row.id, r.item.origin_annotator, r.span.paragraph_id, r.span.start, r.span.end)
        r.annotation_id = found.get(key)


def _store_new_documents(chosen: list[_Resolved]) -> list[str]:
    new: dict[str, _Doc] = {r.doc.external_id: r.doc for r in chosen if r.doc.row is None}
    for doc in new.values():
        source = DocumentInput(doc.external_id, None, doc.paragraphs)
        row = Document(
            study_id=current_study_id(),
            external_id=doc.external_id,
            content_hash=source.content_hash,
            paragraph_count=len(doc.paragraphs),
            paragraphs=[Paragraph(position=n, text=t) for n, t in enumerate(doc.paragraphs)],
        )
        db.session.add(row)
        doc.row = row
    db.session.flush()
    return sorted(new)


def _store_round(
    name: str, chosen: list[_Resolved], taxonomy: Taxonomy, judgments_per_item: int, seed: int
) -> dict[str, int]:
    round_ = ValidationRound(
        study_id=current_study_id(),
        name=name,
        judgments_per_item=judgments_per_item,
        settings=round_settings(taxonomy),
        seed=seed,
    )
    db.session.add(round_)
    db.session.flush()
    rows = []
    for order_key, r in enumerate(chosen):
        paired = r.paired
        rows.append(
            {
                "round_id": round_.id,
                "external_id": r.external_id,
                "source": r.item.source,
                "document_id": r.doc.row.id,
                "order_key": order_key,
                "labels": list(r.item.labels),
                "question": r.item.question,
                "comment": r.item.comment,
                "paragraph_id": r.span.paragraph_id,
                "span_start": r.span.start,
                "span_end": r.span.end,
                "span_text": r.span.text,
                "paired_paragraph_id": paired.paragraph_id if paired else None,
                "paired_start": paired.start if paired else None,
                "paired_end": paired.end if paired else None,
                "paired_text": paired.text if paired else None,
                "ambiguous": r.span.ambiguous or bool(paired and paired.ambiguous),
                "origin_annotator": r.item.origin_annotator,
                "annotation_id": r.annotation_id,
            }
        )
    for start in range(0, len(rows), 500):
        db.session.execute(insert(ValidationItem), rows[start : start + 500])
    return dict(sorted(Counter(r.item.source for r in chosen).items()))
