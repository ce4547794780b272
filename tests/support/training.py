"""Helpers of the training tests: a taxonomy with a `training:` section, a practice
document with explained gold spans, and practice answers in the API's shape."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from tests.support.taxonomies import taxonomy_variant

PRACTICE_ID = "practice-1"
PRACTICE_PARAGRAPHS = [
    "Mara opened the bakery at dawn. Lord Findon bought three loaves.",
    "The oven was cold that morning. Mara opened the bakery at dawn.",
]
# Lord Findon was never introduced; the second sentence of paragraph 1 repeats the first
# sentence of the text.
PRACTICE_GOLD = [
    {
        "paragraph_id": 0,
        "start": 32,
        "end": 43,
        "category": "new-person",
        "explanation": "Lord Findon appears without any introduction.",
    },
    {
        "paragraph_id": 1,
        "start": 32,
        "end": 63,
        "category": "repetition",
        "paired_span": {"paragraph_id": 0, "start": 0, "end": 31},
        "explanation": "The first sentence of the text is said again.",
    },
]


def training_section(*, attempts: int = 2, recall=1.0, precision=0.5) -> str:
    """A `training:` section on PRACTICE_ID."""
    return (
        f"training:\n  documents: [{PRACTICE_ID}]\n"
        f"  pass: {{recall: {recall}, precision: {precision}}}\n  attempts: {attempts}\n"
    )


def training_taxonomy(
    tmp_path: Path, *, attempts: int = 2, recall=1.0, precision=0.5, study_lines: str = ""
) -> str:
    """The default taxonomy with a training section on PRACTICE_ID (and `study_lines`)."""
    section = training_section(attempts=attempts, recall=recall, precision=precision)
    path = taxonomy_variant(
        tmp_path, study_lines=study_lines, append=section, name="training-taxonomy.yaml"
    )
    return str(path)


def practice_record() -> dict:
    """The practice document as an import record."""
    return {"id": PRACTICE_ID, "paragraphs": PRACTICE_PARAGRAPHS, "gold": PRACTICE_GOLD}


def import_practice(app, tmp_path: Path, *extra: dict) -> None:
    """Import the practice document (and `extra` records) with `flask import-documents`."""
    path = tmp_path / "documents.jsonl"
    records = [practice_record(), *extra]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    result = app.test_cli_runner().invoke(args=["import-documents", str(path)])
    assert result.exit_code == 0, result.output


def answer(paragraph_id: int, start: int, end: int, category: str, paired=None) -> dict:
    """One practice annotation as the page sends it."""
    text = PRACTICE_PARAGRAPHS[paragraph_id]
    body = {
        "id": str(uuid.uuid4()),
        "category": category,
        "span": {"paragraph_id": paragraph_id, "start": start, "end": end, "text": text[start:end]},
        "paired_span": None,
        "comment": None,
    }
    if paired is not None:
        p, s, e = paired
        body["paired_span"] = {
            "paragraph_id": p,
            "start": s,
            "end": e,
            "text": PRACTICE_PARAGRAPHS[p][s:e],
        }
    return body


def right_answers() -> list[dict]:
    """Both gold spans, with their categories."""
    return [
        answer(0, 32, 43, "new-person"),
        answer(1, 32, 63, "repetition", paired=(0, 0, 31)),
    ]
