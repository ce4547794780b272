"""BooookScore's human annotation files, written for a test: one book's summary, its single
annotations and its relations (two spans that share a label), in the released files' shape
(tests/fixtures/booookscore holds real ones)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def single(id_: str, span: str, labels: Sequence[str], questions: Any = "Who?") -> dict:
    """One annotation of one span."""
    return {"id": id_, "span": span, "questions": questions, "labels": list(labels)}


def relation(
    ids: tuple[str, str], spans: tuple[str, str], labels: Sequence[str], questions: Any
) -> dict:
    """One annotation of two spans (the same error, `same: true`)."""
    return {
        "id_a": ids[0],
        "id_b": ids[1],
        "span_a": spans[0],
        "span_b": spans[1],
        "shared_questions": questions,
        "same": True,
        "shared_labels": list(labels),
    }


def write_human_file(
    path: Path,
    summary: str,
    singles: Sequence[dict] = (),
    relations: Sequence[dict] = (),
    others: dict[str, Any] | None = None,
) -> Path:
    """A human annotation file at `path` with the book `book` (after the entries `others`)."""
    book = {"summary": summary, "singles": list(singles), "relations": list(relations)}
    path.write_text(json.dumps({**(others or {}), "book": book}), "utf-8")
    return path
