"""Helpers of the suggestion tests: BooookScore's taxonomy with suggestions shown, one of
the sample's summaries as a document, and its GPT-4 annotations as suggestions."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.support.apps import BOOOOKSCORE_SAMPLE
from tests.support.live_server import LiveServer, run_commands
from tests.support.taxonomies import BOOOOKSCORE_TAXONOMY, taxonomy_variant

BOOK = "the-golden-doves.epub"
# Two of GPT-4's suggestions on the book's summary (the first one's sentence, and a later
# one the tests edit down to its start).
FIRST = "Anderson accepts a promotion and a mission to find Nazi scientist Dr."
SHIFT = "The story shifts to Josie, now Captain Anderson, in a Paris hotel."
SHIFT_START = "The story shifts to Josie"


def taxonomy_showing(tmp_path: Path, *lines: str, append: str = "") -> Path:
    """BooookScore's taxonomy with these lines added to its study section (default:
    `suggestions: show`) and `append`ed sections."""
    added = "".join(f"  {line}\n" for line in (lines or ("suggestions: show",)))
    return taxonomy_variant(
        tmp_path,
        base=BOOOOKSCORE_TAXONOMY,
        study_lines=added,
        append=append,
        name="taxonomy-suggestions.yaml",
    )


def summary_paragraphs(book: str = BOOK) -> list[str]:
    """The book's summary from the human-annotations file, cut at blank lines."""
    data = json.loads((BOOOOKSCORE_SAMPLE / "human-annotations.json").read_text("utf-8"))
    return [p.strip() for p in data[book]["summary"].split("\n\n") if p.strip()]


def write_summary(tmp_path: Path, book: str = BOOK) -> Path:
    """The book's summary as a documents JSONL file (`flask import-documents`)."""
    path = tmp_path / "summary.jsonl"
    record = {"id": book, "paragraphs": summary_paragraphs(book)}
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    return path


def model_file(tmp_path: Path, book: str = BOOK) -> Path:
    """GPT-4's annotations of that one book (the released file, cut to it)."""
    data = json.loads((BOOOOKSCORE_SAMPLE / "model-annotations.json").read_text("utf-8"))
    path = tmp_path / "model-one-book.json"
    path.write_text(json.dumps({book: data[book]}), encoding="utf-8")
    return path


def model_sentences(book: str = BOOK) -> dict:
    """{sentence: {"questions", "types"}} of GPT-4's file for the book."""
    data = json.loads((BOOOOKSCORE_SAMPLE / "model-annotations.json").read_text("utf-8"))
    return data[book]


def serve_with_suggestions(
    live_app: Callable[..., LiveServer], tmp_path: Path, *lines: str, append: str = ""
) -> LiveServer:
    """Start the app (the e2e `live_app` fixture) with BooookScore's taxonomy (suggestions
    shown, or these study lines; `append`ed sections), the sample summary and GPT-4's
    suggestions on it imported."""
    live = live_app(taxonomy=taxonomy_showing(tmp_path, *lines, append=append))
    run_commands(
        live,
        ["import-documents", write_summary(tmp_path)],
        ["import-suggestions", model_file(tmp_path), "--source", "gpt-4"],
    )
    return live
