"""Helpers of the suggestion tests: BooookScore's taxonomy with suggestions shown, one of
the sample's summaries as a document, and its GPT-4 annotations as suggestions."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.apps import BOOOOKSCORE_SAMPLE, ROOT

BOOOOKSCORE_TAXONOMY = ROOT / "config" / "taxonomies" / "booookscore.yaml"
BOOK = "the-golden-doves.epub"


def taxonomy_showing(tmp_path: Path, *lines: str) -> Path:
    """BooookScore's taxonomy with these lines added to its study section (default:
    `suggestions: show`)."""
    text = BOOOOKSCORE_TAXONOMY.read_text(encoding="utf-8")
    added = "".join(f"  {line}\n" for line in (lines or ("suggestions: show",)))
    path = tmp_path / "taxonomy-suggestions.yaml"
    path.write_text(text.replace("\nstudy:\n", f"\nstudy:\n{added}", 1), encoding="utf-8")
    return path


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
