"""Reading and storing suggestions: `flask import-suggestions PATH --source NAME`.

Formats: BooookScore's GPT-4 model files (``{book: {sentence: {"questions", "types"}}}``:
the span is the whole sentence) and our generic items JSONL
(docs/contracts.md#validation-items), read by app.imports.item_formats as `create-round`
reads them. Every label is mapped to a category key as `import-annotations` maps them
(app.imports.annotation_store.category_key: `--taxonomy-map`, else the lower-cased,
hyphenated label);
the first is the suggestion's category, all are kept as its labels. Spans are located as
`create-round` locates them (app.imports.locate): given offsets when the stored text
there is the span's, else the text, exactly first; several matches use the first and are
reported as ambiguous. Each suggestion must pass the rules an annotation passes (app.rules.spans),
so that Accept can store it as it is. `id_prefix` is put before every document id of the
file, as `import-annotations --id-prefix` does (so that GPT-4's file attaches to summaries
imported under `inc-`/`hier-`). `decoy` marks every suggestion of the file as a decoy
(planted deliberately wrong: app.suggestions.decoys counts how often workers take them;
what they make from one counts in no figure). Atomic: any problem refuses the file (unless
`skip_rejected`) and nothing is written; a suggestion id already stored with the same
content is left as it is (the import can be run again).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import insert, select

from app.core.extensions import db
from app.imports.annotation_store import category_key
from app.imports.item_formats import ItemInput, detect_format, read_items
from app.imports.locate import Located, ambiguity_notes, locate_pair
from app.models import Document, Paragraph, Suggestion, utcnow
from app.rules.spans import Span, SpanError, check_annotation
from app.studies import current_study_id
from app.taxonomy import Taxonomy, current_taxonomy

FORMATS = ("auto", "jsonl", "booookscore-model")
SUGGESTIONS = Suggestion.__table__


class SuggestionImportError(Exception):
    """The import was refused; nothing was written. `problems`: one line each."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


@dataclass
class SuggestionPlan:
    """A checked import: the rows to insert and what was reported."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    unchanged: int = 0
    ambiguous: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def store(self, progress: Callable[[int], None] | None = None) -> int:
        """Insert the rows in one transaction; returns how many."""
        try:
            for start in range(0, len(self.rows), 500):
                batch = self.rows[start : start + 500]
                db.session.execute(insert(SUGGESTIONS), batch)
                if progress:
                    progress(len(batch))
            db.session.commit()
        except BaseException:
            db.session.rollback()
            raise
        return len(self.rows)


def prepare_suggestions(
    path: Path,
    source: str,
    fmt: str = "auto",
    taxonomy_map: Mapping[str, str] | None = None,
    skip_rejected: bool = False,
    id_prefix: str = "",
    decoy: bool = False,
) -> SuggestionPlan:
    """Read and check the file; raise SuggestionImportError listing every problem.
    `decoy`: the file's suggestions are decoys (planted deliberately wrong)."""
    source = source.strip()
    if not source or len(source) > 100:
        raise SuggestionImportError([f"{path.name}: --source: give a name of 1-100 characters"])
    problems: list[str] = []
    plan = SuggestionPlan()
    if fmt == "auto":
        fmt = _detected(path, problems)
    items: list[ItemInput] = []
    if not problems:
        items, read_problems = read_items(path, fmt, plan.warnings)
        problems += read_problems
    for item in items:
        item.document_id = id_prefix + item.document_id
    taxonomy = current_taxonomy()
    texts = _texts({item.document_id for item in items})
    rows = []
    for item in items:
        outcome = _row(item, source, texts, taxonomy, taxonomy_map or {}, plan)
        if isinstance(outcome, str):
            problems.append(f"{item.where}: {outcome}")
        else:
            rows.append((item, {**outcome, "decoy": decoy}))
    stored = _stored({row["external_id"] for _item, row in rows})
    seen: set[str] = set()
    for item, outcome in rows:
        key = outcome["external_id"]
        if key in seen:
            problems.append(f"{item.where}: id: {key!r} occurs twice in the file")
        elif key in stored:
            if stored[key] != _content(outcome):
                problems.append(f"{item.where}: id: {key!r} is stored with other content")
            else:
                plan.unchanged += 1
        else:
            plan.rows.append(outcome)
        seen.add(key)
    if problems and not skip_rejected:
        raise SuggestionImportError(problems)
    plan.rejected = problems
    return plan


def _detected(path: Path, problems: list[str]) -> str:
    """`auto`: a BooookScore model file, else our items JSONL; other BooookScore files are
    no suggestions."""
    import json

    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return "jsonl"
    found = detect_format(data)
    if found not in FORMATS:
        problems.append(
            f"{path.name}: a {found} file holds no model suggestions "
            "(give a booookscore-model file or items JSONL)"
        )
    return found


def _texts(document_ids: set[str]) -> dict[str, tuple[int, tuple[str, ...]]]:
    """document external id -> (database id, paragraph texts), for those imported."""
    if not document_ids:
        return {}
    query = (
        select(Document.external_id, Document.id, Paragraph.text)
        .join(Paragraph, Paragraph.document_id == Document.id)
        .where(Document.study_id == current_study_id(), Document.external_id.in_(document_ids))
        .order_by(Document.id, Paragraph.position)
    )
    texts: dict[str, tuple[int, list[str]]] = {}
    for external_id, pk, text in db.session.execute(query):
        texts.setdefault(external_id, (pk, []))[1].append(text)
    return {key: (pk, tuple(paragraphs)) for key, (pk, paragraphs) in texts.items()}


def _content(row: Mapping[str, Any]) -> tuple:
    # A suggestion imported as a decoy and again as a real one (or back) is other content.
    keys = ("document_id", "paragraph_id", "span_start", "span_end", "category", "question")
    return (*(row[key] for key in keys), bool(row["decoy"]))


def _stored(ids: set[str]) -> dict[str, tuple]:
    """Suggestions already stored under these ids: id -> their content key."""
    if not ids:
        return {}
    rows = db.session.scalars(
        select(Suggestion).where(
            Suggestion.study_id == current_study_id(), Suggestion.external_id.in_(ids)
        )
    )
    return {row.external_id: _content(row.__dict__) for row in rows}


def _row(
    item: ItemInput,
    source: str,
    texts: dict[str, tuple[int, tuple[str, ...]]],
    taxonomy: Taxonomy,
    mapping: Mapping[str, str],
    plan: SuggestionPlan,
) -> dict[str, Any] | str:
    """The suggestions row for an item, or what is wrong with it."""
    if item.document_id not in texts:
        hint = f" ({item.document_hint})" if item.document_hint else ""
        return f"document_id: {item.document_id!r} is not imported{hint}"
    pk, paragraphs = texts[item.document_id]
    if item.paragraphs is not None and item.paragraphs != paragraphs:
        return f"document: {item.document_id!r} is stored with another text"
    if not item.labels:
        return "category: missing (give category, labels or types)"
    keys = set(taxonomy.keys)
    labels = []
    for label in item.labels:
        key = category_key(label, mapping, keys)
        if key is None:
            return (
                f"category: {label!r} is no category of the taxonomy "
                f"({', '.join(sorted(keys))}); map it with --taxonomy-map"
            )
        if key not in labels:
            labels.append(key)
    placed = locate_pair(item.span, item.paired_span, paragraphs, item.document_id)
    if isinstance(placed, str):
        return placed
    span, paired = placed
    category = labels[0]
    comment = item.comment or item.question
    problem = _rule_problem(taxonomy, category, span, paired, comment, paragraphs)
    if problem:
        return problem
    plan.ambiguous += ambiguity_notes(item.where, item.document_id, span, paired)
    return {
        "external_id": item.external_id or _generated_id(source, item, span),
        "study_id": current_study_id(),
        "source": source,
        "document_id": pk,
        "paragraph_id": span.paragraph_id,
        "span_start": span.start,
        "span_end": span.end,
        "span_text": span.text,
        "category": category,
        "labels": labels,
        "paired_paragraph_id": paired.paragraph_id if paired else None,
        "paired_start": paired.start if paired else None,
        "paired_end": paired.end if paired else None,
        "paired_text": paired.text if paired else None,
        "question": item.question,
        "comment": item.comment,
        "ambiguous": span.ambiguous or bool(paired and paired.ambiguous),
        "created_at": utcnow(),
    }


def _rule_problem(
    taxonomy: Taxonomy,
    category: str,
    span: Located,
    paired: Located | None,
    comment: str | None,
    paragraphs: tuple[str, ...],
) -> str | None:
    """What the annotation rules (app.rules.spans) say against accepting it as it is."""
    as_span = Span(span.paragraph_id, span.start, span.end, span.text)
    as_paired = (
        None if paired is None else Span(paired.paragraph_id, paired.start, paired.end, paired.text)
    )
    try:
        check_annotation(
            category=taxonomy.category(category),
            known_categories=list(taxonomy.keys),
            category_key=category,
            span=as_span,
            paired_span=as_paired,
            comment=comment,
            comment_required=taxonomy.comment.required,
            comment_label=taxonomy.comment.label,
            max_comment_length=taxonomy.comment.max_length,
            texts=dict(enumerate(paragraphs)),
            furthest=len(paragraphs) - 1,
        )
    except SpanError as error:
        return f"{error.field or 'span'}: {error.message}"
    return None


def _generated_id(source: str, item: ItemInput, span: Located) -> str:
    """A stable id from the source, document and place (the same file gives the same ids)."""
    parts = [source, item.document_id, str(span.paragraph_id), str(span.start), str(span.end)]
    parts.append(item.paired_span.text if item.paired_span else "")
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()
    return f"{source[:60]}-{digest[:16]}"
