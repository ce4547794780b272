"""Reading pace rules (app/research/pacing.py): words per minute, rushing, fatigue."""

from __future__ import annotations

import pytest

from app.research.pacing import (
    ParagraphTime,
    by_position,
    is_rushing,
    position_groups,
    summarise,
    words_per_minute,
)


def test_words_per_minute_and_the_rushing_rule():
    assert words_per_minute(300, 60) == 300
    assert words_per_minute(100, 30) == 200
    assert words_per_minute(100, 0) is None
    assert is_rushing(301, 300)
    assert not is_rushing(300, 300)  # at the limit is not faster than it
    assert not is_rushing(5000, None)  # no setting, no flag
    assert not is_rushing(None, 300)  # nothing timed


def rows(session: str, seconds: list[float | None], words: int = 30, errors: int = 0):
    return [
        ParagraphTime(session, "doc", index, value, errors, words)
        for index, value in enumerate(seconds)
    ]


def test_summary_flags_the_fast_session_and_compares_halves():
    fast = rows("1", [2, 2, 2, 2])  # 120 words in 8 s = 900 wpm
    slow = rows("2", [30, 30, 60, None], errors=1)  # untimed paragraph left out
    summary = summarise(fast + slow, {"1": "ann", "2": "bob"}, {"doc": 4}, limit=400)
    assert summary.sessions["1"].speed == pytest.approx(900)
    assert summary.sessions["2"].speed == pytest.approx(90 * 60 / 120)
    assert summary.rushing() == [("1", "ann", pytest.approx(900))]
    bob = summary.workers["bob"]
    assert bob.half_means(0) == (30, 1)  # paragraphs 0 and 1 of 4
    assert bob.half_means(1) == (60, 1)  # paragraph 2 (3 has no timing)
    assert [f.label for f in summary.positions] == [
        "Paragraph 1",
        "Paragraph 2",
        "Paragraph 3",
        "Paragraph 4",
    ]
    assert summary.positions[2].seconds == 31 and summary.positions[2].errors == 0.5
    assert summary.positions[3].paragraphs == 1


def test_long_documents_are_grouped_into_at_most_ten_ranges():
    assert position_groups(10) == 1 and position_groups(11) == 2 and position_groups(95) == 10
    figures = by_position(rows("1", [1.0] * 25), longest=25)
    assert len(figures) == 9
    assert figures[0].label == "Paragraphs 1–3" and figures[-1].label == "Paragraph 25"
