"""Helpers of the suggestion tests: BooookScore's taxonomy with suggestions shown, one of
the sample's summaries as a document, and its GPT-4 annotations as suggestions."""

from __future__ import annotations

import contextlib
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

from tests.support.apps import BOOOOKSCORE_SAMPLE, ROOT
from tests.support.live_server import serving

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


@contextlib.contextmanager
def serving_with_suggestions(tmp_path: Path, sqlite_template: Path, *lines: str) -> Iterator:
    """The app on a fresh SQLite copy with BooookScore's taxonomy (suggestions shown, or
    these study lines), the sample summary and GPT-4's suggestions on it imported."""
    path = tmp_path / "e2e.sqlite3"
    shutil.copy(sqlite_template, path)
    taxonomy = taxonomy_showing(tmp_path, *lines)
    with serving(f"sqlite:///{path}", TAXONOMY_PATH=str(taxonomy)) as server:
        runner = server.app.test_cli_runner()
        result = runner.invoke(args=["import-documents", str(write_summary(tmp_path))])
        assert result.exit_code == 0, result.output
        args = ["import-suggestions", str(model_file(tmp_path)), "--source", "gpt-4"]
        result = runner.invoke(args=args)
        assert result.exit_code == 0, result.output
        yield server
