"""A small study as plain data for the interop formats (app.interop): documents with
emoji, combining marks, repeated phrases and single line breaks inside a paragraph, and
export records in app.exports.record's shape (paired errors, a unit with two labels,
severities, comments with quotes and line breaks, a unit without a label).

`record(...)` builds one export record with every FIELDS key, as the export writes it.
`projection(records)` keeps what a format carries back (app.interop.records.READ_KEYS
but unit_id) and `units(records)` which rows share a unit, so round-trip tests can say
"identical but the ids" as the issue allows.
"""

from __future__ import annotations

import importlib
import re
import unicodedata
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume
from hypothesis import strategies as st

from app.interop.records import READ_KEYS

STUDY = "demo"
# Stored text is NFC (app.imports.document_formats): "Zoë" and "café" below are composed.
DOCUMENTS: dict[str, list[str]] = {
    "ch-1": [
        "Zoë met Łukasz 🚢 at the harbour. The ship left at dawn.",
        "He waved at the ship.\nThen he waved again, and the ship was gone.",
        "Later, Zoë said the ship had never left. 👋🏽 Nobody answered.",
    ],
    "ch-2": [
        "The café opened at nine; the café closed at noon; the café is gone.",
        "Nobody came to the café.",
    ],
}
TAXONOMY: dict[str, Any] = {
    "categories": [
        {
            "key": "new-person",
            "name": "New person",
            "type": "singleton",
            "description": "A person appears without introduction.",
        },
        {
            "key": "missing-info",
            "name": "Missing info",
            "type": "singleton",
            "description": "Key information is missing.",
        },
        {
            "key": "repetition",
            "name": "Repetition",
            "type": "paired",
            "description": "The text repeats an earlier passage.",
        },
        {
            "key": "inconsistency",
            "name": "Inconsistency",
            "type": "paired",
            "description": "The text contradicts an earlier passage.",
        },
    ],
    "severities": [
        {"key": "minor", "name": "Minor", "weight": 1},
        {"key": "major", "name": "Major", "weight": 5},
    ],
}
FIELD_KEYS = (
    "document_id", "paragraph_id", "category", "category_name", "category_type", "span",
    "paired_span", "comment", "severity", "annotator_id", "platform", "session_id",
    "unit_id", "submitted", "created_at", "taxonomy_version", "origin", "suggestion_id",
    "flagged",
)  # fmt: skip


def span(document_id: str, paragraph_id: int, text: str, occurrence: int = 0) -> dict:
    """The span of the `occurrence`th `text` in a paragraph of DOCUMENTS."""
    paragraph = DOCUMENTS[document_id][paragraph_id]
    start = -1
    for _ in range(occurrence + 1):
        start = paragraph.index(text, start + 1)
    return {"paragraph_id": paragraph_id, "start": start, "end": start + len(text), "text": text}


def record(
    document_id: str,
    span_: dict,
    category: str | None,
    *,
    annotator: str = "prolific:5f3c0a1b2c3d4e5f60718293",
    session_id: str = "1",
    unit_id: int,
    paired: dict | None = None,
    comment: str | None = None,
    severity: str | None = None,
    created_at: str = "2025-03-01T10:00:00.000000+00:00",
) -> dict[str, Any]:
    """One export record, every FIELDS key in order, as export-annotations writes it."""
    categories = {c["key"]: c for c in TAXONOMY["categories"]}
    known = categories.get(category or "")
    return {
        "document_id": document_id,
        "paragraph_id": span_["paragraph_id"],
        "category": category,
        "category_name": known["name"] if known else None,
        "category_type": known["type"] if known else None,
        "span": span_,
        "paired_span": paired,
        "comment": comment,
        "severity": severity,
        "annotator_id": annotator,
        "platform": annotator.split(":", 1)[0],
        "session_id": session_id,
        "unit_id": unit_id,
        "submitted": True,
        "created_at": created_at,
        "taxonomy_version": "abc123",
        "origin": "worker",
        "suggestion_id": None,
        "flagged": False,
    }


ALICE = "prolific:5f3c0a1b2c3d4e5f60718293"
BOB = "mturk:A1B2C3D4E5F6G7"


def study_records() -> list[dict[str, Any]]:
    """Export records of two annotators over both documents, in the export's order
    (document, session, paragraph, start)."""
    return [
        record("ch-1", span("ch-1", 0, "Łukasz"), "new-person", unit_id=1, severity="minor",
               comment='Who is "Łukasz"?'),
        # One unit with two labels: two rows, same span, comment and severity.
        record("ch-1", span("ch-1", 0, "🚢 at the harbour"), "missing-info", unit_id=2,
               severity="major", comment="Which harbour?\nAnd which ship?"),
        record("ch-1", span("ch-1", 0, "🚢 at the harbour"), "new-person", unit_id=2,
               severity="major", comment="Which harbour?\nAnd which ship?"),
        # A span over a line break inside a paragraph.
        record("ch-1", span("ch-1", 1, "ship.\nThen he waved"), "missing-info", unit_id=3,
               severity="minor"),
        record("ch-1", span("ch-1", 1, "waved again"), "repetition", unit_id=4,
               paired=span("ch-1", 1, "waved at the ship"), severity="minor"),
        record("ch-1", span("ch-1", 2, "the ship had never left"), "inconsistency", unit_id=5,
               paired=span("ch-1", 0, "The ship left at dawn"), severity="major",
               comment="Contradicts paragraph 1."),
        # A unit without a label (imported BooookScore relation with no shared label).
        record("ch-1", span("ch-1", 2, "👋🏽 Nobody answered."), None, unit_id=6),
        record("ch-1", span("ch-1", 0, "Zoë"), "new-person", annotator=BOB, session_id="2",
               unit_id=7, severity="minor", created_at="2025-03-02T09:30:00.250000+00:00"),
        # The repeated "café": the second occurrence, prefix and suffix tell them apart.
        record("ch-2", span("ch-2", 0, "the café", occurrence=1), "repetition",
               annotator=BOB, session_id="3", unit_id=8,
               paired=span("ch-2", 0, "The café"), severity="minor", comment="=SUM(A1:A3)"),
        record("ch-2", span("ch-2", 1, "café"), "missing-info", annotator=BOB, session_id="3",
               unit_id=9, severity="minor"),
    ]  # fmt: skip


def projection(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """What a format carries back: READ_KEYS but unit_id (numbers are the file's own)."""
    return [{key: r.get(key) for key in READ_KEYS if key != "unit_id"} for r in records]


def units(records: Sequence[dict[str, Any]]) -> list[tuple[int, ...]]:
    """Which rows share a unit, as groups of row positions (sessions kept apart)."""
    groups: dict[tuple, list[int]] = {}
    for index, r in enumerate(records):
        groups.setdefault((r.get("annotator_id"), r["unit_id"]), []).append(index)
    return sorted(tuple(g) for g in groups.values())


def nfd(text: str) -> str:
    """`text` decomposed (combining marks apart), as some tools write it."""
    return unicodedata.normalize("NFD", text)


def random_study(draw: Any, spans: int = 4) -> tuple[dict[str, list[str]], list[dict]]:
    """A document of stored paragraphs (NFC, single line breaks inside, no blank line) and
    export records of one annotator on it, drawn by a Hypothesis `draw` (st.data().draw):
    emoji, combining marks and line breaks anywhere, spans anywhere in a paragraph, some
    paired with an earlier span. Each record has its own comment, so no two are one unit."""
    line = st.text(alphabet="ab  é\u0301🚢👋🏽\"'<", min_size=1, max_size=12)
    paragraph = st.lists(line, min_size=1, max_size=3).map(
        lambda lines: unicodedata.normalize("NFC", "\n".join(lines)).strip()
    )
    paragraphs = draw(st.lists(paragraph, min_size=1, max_size=3))
    assume(all(p and not re.search(r"\n\s*\n", p) for p in paragraphs))
    records = []
    for unit in range(1, spans + 1):
        pid = draw(st.integers(0, len(paragraphs) - 1))
        text = paragraphs[pid]
        start = draw(st.integers(0, len(text) - 1))
        end = draw(st.integers(start + 1, len(text)))
        paired = None
        if draw(st.booleans()):
            ppid = draw(st.integers(0, pid))
            pstart = draw(st.integers(0, len(paragraphs[ppid]) - 1))
            pend = draw(st.integers(pstart + 1, len(paragraphs[ppid])))
            paired = {"paragraph_id": ppid, "start": pstart, "end": pend,
                      "text": paragraphs[ppid][pstart:pend]}  # fmt: skip
        span_ = {"paragraph_id": pid, "start": start, "end": end, "text": text[start:end]}
        records.append(
            record(
                "doc",
                span_,
                draw(st.sampled_from(["new-person", "repetition", None])),
                unit_id=unit,
                paired=paired,
                comment=f"note {unit}\nline 2",
                severity=draw(st.sampled_from(["minor", "major", None])),
            )
        )
    return {"doc": paragraphs}, records


def offline_datasets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The `datasets` library, offline (HF_DATASETS_OFFLINE, HF_HUB_OFFLINE), caching under
    tmp_path: the body of a test file's `datasets` fixture."""
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf-cache"))
    library = importlib.import_module("datasets")
    # The library read the environment when first imported; make sure it is offline.
    monkeypatch.setattr(library.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(library.config, "HF_DATASETS_OFFLINE", True)
    library.disable_progress_bars()
    return library
