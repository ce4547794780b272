"""Reading validation items from files. Pure: no app, no database.

Formats (`--format`, or `auto`: told apart by content):

- ``jsonl``: one item a line, the generic item of docs/contracts.md#validation-items, or a
  record of our own export as it is (it has ``annotator_id``: source "human", the
  annotator kept as origin); a record of the gold export (`flask export-gold`, it has
  ``provenance``) has source "gold".
- ``booookscore-human``: ``{book: {"summary", "singles", "relations"}}``; a relation
  becomes one item whose second span is the paired span.
- ``booookscore-model``: ``{book: {sentence: {"questions", "types"}}}``; the span is the
  sentence; the book's document must already be imported.
- ``booookscore-validation``: ``{book: {"summary", "annotations": [...]}}``; each entry
  is an item with its own ``source``; its id is ``BOOK#N`` (N from 0, its position), so
  that `import-judgments` can match the recorded judgments by position.

Every problem and every item names its place (``file:line 3`` or ``file:BOOK singles[2]``) for
error messages.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.imports.document_formats import normalise_text, split_paragraphs
from app.rules.jsonl import json_object_lines
from app.rules.safe_text import json_text_problems

FORMATS = ("auto", "jsonl", "booookscore-human", "booookscore-model", "booookscore-validation")
SPAN_KEYS = {"text", "paragraph_id", "start", "end"}
GENERIC_KEYS = {
    "id",
    "source",
    "document_id",
    "document",
    "span",
    "paired_span",
    "labels",
    "category",
    "question",
    "comment",
    "annotator_id",
}
EXPORT_KEYS = {
    "paragraph_id",
    "category_name",
    "category_type",
    "platform",
    "session_id",
    "submitted",
    "created_at",
    "taxonomy_version",
    "removed_at",
    "severity",  # taxonomies with severities (docs/severities.md); not judged
    "origin",  # issue 18: worker | suggestion-accepted | suggestion-edited
    "suggestion_id",
    "flagged",  # issue 28: the worker is left out of the study's figures (rounds too)
    "decoy",  # issue 32: made from a decoy suggestion (left out of rounds too)
    "provenance",  # gold exports (app.adjudication.gold): export records plus provenance
    "unit_id",  # issue 28: the error unit (rows of one span with several labels share it)
}

# The suggestions export (app.suggestions.records): a record is one item, the model's
# suggestion, with the workers' decisions on it (rounds may keep only some: DECISIONS).
SUGGESTION_KEYS = {
    "suggestion_id",
    "source",
    "document_id",
    "category",
    "labels",  # issue 28: every type of the suggestion (category is the first)
    "span",
    "paired_span",
    "question",
    "decoy",  # issue 32: a decoy suggestion (rounds leave it out)
    "decisions",
}
DECISIONS = ("all", "decided", "accepted", "edited", "rejected")

WARNING = "warning: "  # marks a note among a reader's problems: it rejects nothing
MODEL_HINT = (
    "BooookScore model files hold no summary text: import the book's summary first "
    "(`flask import-documents`, or a round made from human-annotations.json or "
    "validation-judgments.json, which carry it)"
)


@dataclass(frozen=True)
class SpanInput:
    """A span as given: its text, and its offsets when known."""

    text: str
    paragraph_id: int | None = None
    start: int | None = None
    end: int | None = None

    @property
    def has_offsets(self) -> bool:
        """True when paragraph, start and end are all given."""
        return None not in (self.paragraph_id, self.start, self.end)


@dataclass
class ItemInput:
    """One item read from a file, before its document and offsets are resolved."""

    where: str
    external_id: str | None
    source: str | None
    document_id: str
    span: SpanInput
    paired_span: SpanInput | None = None
    paragraphs: tuple[str, ...] | None = None  # inline document, normalised
    labels: list[str] = field(default_factory=list)
    question: str | None = None
    comment: str | None = None
    origin_annotator: str | None = None
    removed: bool = False
    # Our export's `submitted` (None for other formats): rounds leave out unsubmitted work.
    submitted: bool | None = None
    # Our export's `flagged`: the worker is left out of the figures (rounds too).
    flagged: bool = False
    # Our exports' `decoy`: made from (or being) a decoy suggestion; rounds leave it out.
    decoy: bool = False
    # Said when the item's document is not imported (e.g. model files carry no text).
    document_hint: str | None = None
    # From the suggestions export: the standing decisions of the workers on it; else None.
    decisions: tuple[str, ...] | None = None

    def has_decision(self, wanted: str) -> bool:
        """Whether the item passes `create-round --decision` (items other than suggestions
        always do)."""
        if self.decisions is None or wanted == "all":
            return True
        if wanted == "decided":
            return bool(self.decisions)
        return wanted in self.decisions


def detect_format(data: Any) -> str:
    """Which BooookScore file a parsed JSON object is, or "jsonl" for anything else.

    Told by structure: an object of books whose values are objects; books that are
    ``null`` (six in BooookScore's GPT-4 file) are skipped by the readers, not counted here.
    """
    books = [v for v in data.values() if v is not None] if isinstance(data, dict) else []
    if books and all(isinstance(v, dict) for v in books):
        first = next((v for v in books if v), books[0])
        if "singles" in first or "relations" in first:
            return "booookscore-human"
        if "annotations" in first:
            return "booookscore-validation"
        if all(isinstance(v, dict) and "questions" in v for v in first.values()):
            return "booookscore-model"
    return "jsonl"


def read_items(
    path: Path, fmt: str = "auto", warnings: list[str] | None = None
) -> tuple[list[ItemInput], list[str]]:
    """Every readable item of a file, and a problem line for each record that is not.

    Notes that reject nothing (a BooookScore book that is null) go to `warnings`.
    """
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        return [], [f"{path.name}: cannot read the file ({exc})"]
    unstorable = json_text_problems(text)
    if unstorable:
        return [], [f"{path.name}:{line}: {name}: {problem}" for line, name, problem in unstorable]
    data: Any = None
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        if fmt not in ("auto", "jsonl"):
            return [], [f"{path.name}: not a JSON file ({fmt} expected)"]
    if fmt == "auto":
        fmt = detect_format(data) if data is not None else "jsonl"
    problems: list[str] = []
    reader = {
        "jsonl": _read_jsonl,
        "booookscore-human": _read_human,
        "booookscore-model": _read_model,
        "booookscore-validation": _read_validation,
    }[fmt]
    items = reader(path.name, text, data, problems)
    if warnings is not None:
        warnings += [p.removeprefix(WARNING) for p in problems if p.startswith(WARNING)]
    return items, [p for p in problems if not p.startswith(WARNING)]


def _string(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _span(value: Any, where: str, name: str, problems: list[str]) -> SpanInput | None:
    if isinstance(value, str):
        value = {"text": value}
    if not isinstance(value, dict):
        problems.append(f"{where}: {name}: must be an object with text")
        return None
    unknown = sorted(set(value) - SPAN_KEYS)
    if unknown:
        problems.append(f"{where}: {name}: unknown key(s) {', '.join(unknown)}")
    text = value.get("text")
    if not isinstance(text, str) or not text.strip():
        problems.append(f"{where}: {name}.text: missing or empty")
        return None
    numbers = {}
    for key in ("paragraph_id", "start", "end"):
        number = value.get(key)
        if number is not None and (not _is_int(number) or number < 0):
            problems.append(f"{where}: {name}.{key}: must be a whole number >= 0")
            return None
        numbers[key] = number
    if numbers["paragraph_id"] is None and numbers["start"] is not None:
        problems.append(f"{where}: {name}: start and end need paragraph_id")
        return None
    if (numbers["start"] is None) != (numbers["end"] is None):
        problems.append(f"{where}: {name}: give both start and end, or neither")
        return None
    return SpanInput(text=normalise_text(text), **numbers)


def _inline_document(value: Any, where: str, problems: list[str]) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, dict) and isinstance(value.get("text"), str):
        paragraphs = split_paragraphs(value["text"])
    elif isinstance(value, dict) and isinstance(value.get("paragraphs"), list):
        raw = value["paragraphs"]
        if not all(isinstance(p, str) for p in raw):
            problems.append(f"{where}: document.paragraphs: must be strings")
            return None
        paragraphs = tuple(p for p in (normalise_text(p).strip() for p in raw) if p)
    else:
        problems.append(f"{where}: document: give {{'paragraphs': [...]}} or {{'text': ...}}")
        return None
    if not paragraphs:
        problems.append(f"{where}: document: no text")
        return None
    return paragraphs


def _labels(record: dict[str, Any], where: str, problems: list[str]) -> list[str]:
    labels = record.get("labels") or []
    if not isinstance(labels, list) or not all(_string(label) for label in labels):
        problems.append(f"{where}: labels: must be a list of non-empty strings")
        return []
    labels = [label.strip() for label in labels]
    category = record.get("category")
    if category is not None:
        if not _string(category):
            problems.append(f"{where}: category: must be a non-empty string")
        elif category.strip() not in labels:
            labels.append(category.strip())
    return labels


def _optional_text(record: dict[str, Any], key: str, where: str, problems: list[str]) -> str | None:
    value = record.get(key)
    if value is not None and not isinstance(value, str):
        problems.append(f"{where}: {key}: must be a string")
        return None
    return normalise_text(value).strip() or None if value else None


def _read_jsonl(name: str, text: str, data: Any, problems: list[str]) -> list[ItemInput]:
    if isinstance(data, list):  # a JSON list of items is accepted too
        records = [(f"{name}:record {n}", record) for n, record in enumerate(data, 1)]
    elif isinstance(data, dict) and "span" in data:  # a one-line file
        records = [(f"{name}:line 1", data)]
    else:
        records = []
        for where, record in json_object_lines(text, f"{name}:line "):
            if isinstance(record, str):
                problems.append(f"{where}: {record}")
            else:
                records.append((where, record))
    items = []
    for where, record in records:
        item = _generic_item(where, record, problems)
        if item is not None:
            items.append(item)
    return items


def _export_source(record: dict[str, Any]) -> str:
    # A gold export's record (app.adjudication.gold) carries its provenance.
    return "gold" if "provenance" in record else "human"


def _suggestion_item(where: str, record: dict, problems: list[str]) -> ItemInput | None:
    """A record of the suggestions export: the suggestion is the item (id, source,
    category, question), its standing decisions kept for `--decision`."""
    before = len(problems)
    unknown = sorted(set(record) - SUGGESTION_KEYS)
    if unknown:
        problems.append(f"{where}: unknown key(s) {', '.join(unknown)}")
    item = _generic_item(
        where,
        {
            "id": record.get("suggestion_id"),
            **{k: record.get(k) for k in ("source", "document_id", "span", "category", "labels")},
            **{k: record[k] for k in ("paired_span", "question") if record.get(k) is not None},
        },
        problems,
    )
    decisions = record.get("decisions")
    if not isinstance(decisions, list) or not all(isinstance(d, dict) for d in decisions):
        problems.append(f"{where}: decisions: must be a list of objects")
        return None
    if item is None or len(problems) > before:
        return None
    item.decisions = tuple(
        str(d.get("decision")) for d in decisions if d.get("withdrawn_at") is None
    )
    item.decoy = record.get("decoy") is True
    return item


def _generic_item(where: str, record: Any, problems: list[str]) -> ItemInput | None:
    if not isinstance(record, dict):
        problems.append(f"{where}: must be a JSON object")
        return None
    if "suggestion_id" in record and "decisions" in record:
        return _suggestion_item(where, record, problems)
    before = len(problems)
    is_export = "annotator_id" in record and "session_id" in record
    allowed = GENERIC_KEYS | EXPORT_KEYS if is_export else GENERIC_KEYS
    unknown = sorted(set(record) - allowed)
    if unknown:
        problems.append(f"{where}: unknown key(s) {', '.join(unknown)}")
    document_id = _string(record.get("document_id"))
    if document_id is None:
        problems.append(f"{where}: document_id: missing or empty")
    item_id = record.get("id")
    if item_id is not None and not _string(str(item_id)):
        problems.append(f"{where}: id: must be a non-empty string")
    source = record.get("source")
    if source is not None and not _string(source):
        problems.append(f"{where}: source: must be a non-empty string")
    span = _span(record.get("span"), where, "span", problems)
    paired = record.get("paired_span")
    paired_span = None if paired is None else _span(paired, where, "paired_span", problems)
    paragraphs = _inline_document(record.get("document"), where, problems)
    labels = _labels(record, where, problems)
    question = _optional_text(record, "question", where, problems)
    comment = _optional_text(record, "comment", where, problems)
    submitted = record.get("submitted") if is_export else None
    if submitted is not None and not isinstance(submitted, bool):
        problems.append(f"{where}: submitted: must be true or false")
    flagged = record.get("flagged") if is_export else None
    if flagged is not None and not isinstance(flagged, bool):
        problems.append(f"{where}: flagged: must be true or false")
    decoy = record.get("decoy") if is_export else None
    if decoy is not None and not isinstance(decoy, bool):
        problems.append(f"{where}: decoy: must be true or false")
    if len(problems) > before or span is None or document_id is None:
        return None
    return ItemInput(
        where=where,
        external_id=str(item_id).strip() if item_id is not None else None,
        source=source.strip() if source else _export_source(record) if is_export else None,
        document_id=document_id,
        span=span,
        paired_span=paired_span,
        paragraphs=paragraphs,
        labels=labels,
        question=question,
        comment=comment,
        origin_annotator=_string(record.get("annotator_id")),
        removed=is_export and record.get("removed_at") is not None,
        submitted=submitted,
        flagged=flagged is True,
        decoy=decoy is True,
    )


def _book_summary(name: str, book: str, entry: dict, problems: list[str]) -> tuple[str, ...]:
    summary = entry.get("summary")
    if not isinstance(summary, str) or not split_paragraphs(summary):
        problems.append(f"{name}:{book}: summary: missing or empty")
        return ()
    return split_paragraphs(summary)


def _question(value: Any) -> str | None:
    if isinstance(value, list):
        value = " ".join(v for v in value if isinstance(v, str))
    return normalise_text(value).strip() or None if isinstance(value, str) else None


def _label_list(value: Any) -> list[str]:
    if not isinstance(value, list):
        return []
    return [v.strip() for v in value if isinstance(v, str) and v.strip()]


def _book_item(
    where: str, book: str, anno: Any, paragraphs: tuple[str, ...] | None, problems: list[str]
) -> ItemInput | None:
    """A BooookScore annotation: {span, questions, labels} or {span_a, span_b, shared_*}."""
    if not isinstance(anno, dict):
        problems.append(f"{where}: must be an object")
        return None
    first = anno.get("span", anno.get("span_a"))
    if not isinstance(first, str) or not first.strip():
        problems.append(f"{where}: span: missing or empty")
        return None
    second = anno.get("span_b") if "span" not in anno else None
    return ItemInput(
        where=where,
        external_id=None,
        source=None,
        document_id=book,
        span=SpanInput(normalise_text(first)),
        paired_span=SpanInput(normalise_text(second)) if isinstance(second, str) else None,
        paragraphs=paragraphs,
        labels=_label_list(anno.get("labels", anno.get("shared_labels", anno.get("types")))),
        question=_question(anno.get("questions", anno.get("shared_questions"))),
    )


def _books(name: str, data: Any, problems: list[str]) -> list[tuple[str, dict]]:
    if not isinstance(data, dict):
        problems.append(f"{name}: must be a JSON object keyed by book id")
        return []
    books = []
    for book, entry in data.items():
        if entry is None:
            problems.append(f"{WARNING}{name}:{book}: null: skipped (the file has no entry)")
        elif not isinstance(entry, dict):
            problems.append(f"{name}:{book}: must be an object")
        else:
            books.append((book, entry))
    return books


def _read_human(name: str, text: str, data: Any, problems: list[str]) -> list[ItemInput]:
    items = []
    for book, entry in _books(name, data, problems):
        paragraphs = _book_summary(name, book, entry, problems)
        annotations = [("singles", a) for a in entry.get("singles") or []]
        annotations += [("relations", a) for a in entry.get("relations") or []]
        counters = {"singles": 0, "relations": 0}
        for kind, anno in annotations:
            where = f"{name}:{book} {kind}[{counters[kind]}]"
            counters[kind] += 1
            item = _book_item(where, book, anno, paragraphs or None, problems)
            if item is not None:
                item.source = "human"
                items.append(item)
    return items


def _read_model(name: str, text: str, data: Any, problems: list[str]) -> list[ItemInput]:
    items = []
    for book, entry in _books(name, data, problems):
        for number, (sentence, anno) in enumerate(entry.items()):
            where = f"{name}:{book} sentence {number}"
            if not isinstance(anno, dict):
                problems.append(f"{where}: must be an object with questions and types")
                continue
            item = _book_item(where, book, {"span": sentence, **anno}, None, problems)
            if item is not None:
                item.source = "model"
                item.document_hint = MODEL_HINT
                items.append(item)
    return items


def _read_validation(name: str, text: str, data: Any, problems: list[str]) -> list[ItemInput]:
    items = []
    for book, entry in _books(name, data, problems):
        paragraphs = _book_summary(name, book, entry, problems)
        for number, record in enumerate(entry.get("annotations") or []):
            where = f"{name}:{book} annotations[{number}]"
            if not isinstance(record, dict):
                problems.append(f"{where}: must be an object")
                continue
            item = _book_item(where, book, record.get("anno"), paragraphs or None, problems)
            source = _string(record.get("source"))
            if source is None:
                problems.append(f"{where}: source: missing")
            if item is not None and source is not None:
                item.source = source
                item.external_id = validation_item_id(book, number)
                items.append(item)
    return items


def validation_item_id(book: str, position: int) -> str:
    """The id of the N-th annotation of a book in a BooookScore validation file."""
    return f"{book}#{position}"


def generated_id(item: ItemInput, document_id: str) -> str:
    """An opaque, stable id from the item's content (it must not reveal the source)."""
    parts = [
        item.source or "",
        document_id,
        item.span.text,
        item.paired_span.text if item.paired_span else "",
        item.question or "",
        item.comment or "",
        "|".join(item.labels),
        item.origin_annotator or "",
        str(item.span.paragraph_id),
        str(item.span.start),
    ]
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()
    return f"item-{digest[:16]}"
