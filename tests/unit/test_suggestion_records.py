"""The suggestion figures' arithmetic and the suggestions export read as validation items."""

from __future__ import annotations

import json

from app.imports.item_formats import read_items
from app.suggestions.records import SourceCounts, source_shares


def test_shares_of_decisions_and_of_kept_annotations():
    shares = source_shares(SourceCounts(accepted=6, edited=2, rejected=2, worker_added=2))
    assert shares == {"accepted": 60.0, "edited": 20.0, "rejected": 20.0, "worker_added": 20.0}


def test_nothing_to_divide_by_is_null():
    assert source_shares(SourceCounts()) == {
        "accepted": None,
        "edited": None,
        "rejected": None,
        "worker_added": None,
    }
    assert source_shares(SourceCounts(worker_added=3))["worker_added"] == 100.0


def _record(**changes):
    record = {
        "suggestion_id": "gpt-4-0001",
        "source": "gpt-4",
        "document_id": "book",
        "category": "entity-omission",
        "span": {"paragraph_id": 0, "start": 0, "end": 5, "text": "Snow."},
        "paired_span": None,
        "question": "Who is Snow?",
        "decisions": [
            {
                "session_id": "1",
                "decision": "accepted",
                "annotation_id": "a",
                "at": "x",
                "withdrawn_at": None,
            },
            {
                "session_id": "2",
                "decision": "rejected",
                "annotation_id": None,
                "at": "x",
                "withdrawn_at": "y",
            },
        ],
    }
    record.update(changes)
    return record


def test_a_suggestion_record_is_one_item_with_its_standing_decisions(tmp_path):
    path = tmp_path / "suggestions.jsonl"
    path.write_text(json.dumps(_record()) + "\n", encoding="utf-8")
    [item], problems = read_items(path)
    assert problems == []
    assert (item.external_id, item.source, item.labels) == (
        "gpt-4-0001",
        "gpt-4",
        ["entity-omission"],
    )
    assert item.question == "Who is Snow?"
    assert (item.span.paragraph_id, item.span.start, item.span.end) == (0, 0, 5)
    assert item.decisions == ("accepted",)  # the withdrawn rejection does not stand
    assert item.has_decision("accepted") and item.has_decision("decided")
    assert not item.has_decision("rejected")
    assert item.has_decision("all")


def test_a_bad_suggestion_record_names_its_line(tmp_path):
    path = tmp_path / "suggestions.jsonl"
    path.write_text(json.dumps(_record(decisions="many", extra=1)) + "\n", encoding="utf-8")
    items, problems = read_items(path)
    assert items == []
    assert problems == [
        "suggestions.jsonl:line 1: unknown key(s) extra",
        "suggestions.jsonl:line 1: decisions: must be a list of objects",
    ]
