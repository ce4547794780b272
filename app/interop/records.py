"""What the readers of app.interop give back, and how they refuse a file.

A reader (W3C Web Annotation, brat) returns plain records whose keys are a subset of the
annotation export record's (app.exports.record.FIELDS, in that order), so the import that
stores them can treat them as it treats our own JSONL export:

    {"document_id": str, "paragraph_id": int, "category": key | None,
     "span": {"paragraph_id", "start", "end", "text"},
     "paired_span": None | {"paragraph_id", "start", "end", "text"},
     "comment": str | None, "severity": key | None, "annotator_id": str | None,
     "unit_id": int, "created_at": ISO-8601 str | None}

Offsets are Unicode code points into the stored paragraph, end exclusive, and
``span.text == paragraphs[paragraph_id][start:end]``. ``unit_id`` numbers the error units
within what was read (rows of one error with several labels share it, as in the export);
it is not a database id. Category and severity keys are as the file gives them: the
import checks them against the taxonomy (and maps labels) as it does for other files.

A file is refused whole: the reader collects every problem, each naming where it is
(``FILE:LINE``, ``FILE: items[3]``), the field and what is wrong, and raises
InteropError with all of them; nothing is half-read.

Every writer of the package writes JSON Lines with app.rules.jsonl.json_line (U+2028, U+2029
and NEL escaped), as the app's other writers do.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

# The keys of a record read back, in the export record's order.
READ_KEYS = (
    "document_id",
    "paragraph_id",
    "category",
    "span",
    "paired_span",
    "comment",
    "severity",
    "annotator_id",
    "unit_id",
    "created_at",
)


@dataclass(frozen=True)
class Problem:
    """One refusal: where (file and line or item), the field at fault, what is wrong."""

    where: str
    field: str
    message: str

    def __str__(self) -> str:
        return ": ".join(part for part in (self.where, self.field, self.message) if part)


class InteropError(ValueError):
    """A file was refused; `problems` lists every Problem found, str() one per line."""

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(str(problem) for problem in self.problems))


def span_dict(paragraph_id: int, start: int, end: int, text: str) -> dict[str, Any]:
    """A span in the export record's form."""
    return {"paragraph_id": paragraph_id, "start": start, "end": end, "text": text}


def read_record(
    *,
    document_id: str,
    span: dict[str, Any],
    category: str | None,
    paired_span: dict[str, Any] | None = None,
    comment: str | None = None,
    severity: str | None = None,
    annotator_id: str | None = None,
    unit_id: int,
    created_at: str | None = None,
) -> dict[str, Any]:
    """A record read back, keys in READ_KEYS order (paragraph_id is the span's)."""
    return {
        "document_id": document_id,
        "paragraph_id": span["paragraph_id"],
        "category": category,
        "span": span,
        "paired_span": paired_span,
        "comment": comment,
        "severity": severity,
        "annotator_id": annotator_id,
        "unit_id": unit_id,
        "created_at": created_at,
    }


def same_unit_key(record: dict[str, Any]) -> tuple:
    """What rows of one error unit share: document, annotator, spans, comment, severity.

    Rows of one unit differ only by category (one row per label, app.exports.record);
    the formats write each label on its own, and readers group labels back by this key.
    """
    span, paired = record["span"], record.get("paired_span")
    return (
        record.get("document_id"),
        record.get("annotator_id"),
        (span["paragraph_id"], span["start"], span["end"]),
        None if paired is None else (paired["paragraph_id"], paired["start"], paired["end"]),
        record.get("comment"),
        record.get("severity"),
    )
