"""Chart geometry (app/research/charts.py): every coordinate the SVG templates place is
computed here, so the templates hold no arithmetic."""

from __future__ import annotations

import pytest

from app.research.charts import (
    BAR_HEIGHT,
    CHART_WIDTH,
    VALUE_GUTTER,
    bar_chart,
    precision_chart,
    short_labels,
    stacked_bar,
)


def test_bar_chart_rows_and_track():
    chart = bar_chart("c", "Title", [("a", 2, "#111"), ("b", 1, "")], lambda v: f"{v:.0f}")
    assert chart.track_width == CHART_WIDTH - VALUE_GUTTER
    first, second = chart.bars
    assert first.width == pytest.approx(chart.track_width)  # the largest value fills the track
    assert second.width == pytest.approx(chart.track_width / 2)
    assert second.bar_y - first.bar_y == chart.height / 2
    assert chart.description == "a: 2; b: 1"


def test_precision_chart_whiskers_grid_and_values():
    stats = {"human": {"precision": 0.5, "ci95": [0.25, 0.75], "judgments": 8}}
    chart = precision_chart("p", "Precision", [("source", "By source", stats)])
    (group,) = chart.groups
    (row,) = group.rows
    assert row.width == pytest.approx(chart.plot_width / 2)
    assert (row.ci_low, row.ci_high) == (
        pytest.approx(chart.plot_width / 4),
        pytest.approx(chart.plot_width * 3 / 4),
    )
    assert row.y < row.whisker_top < row.mid_y < row.whisker_bottom < row.y + BAR_HEIGHT
    assert group.grid_top < group.top and group.grid_bottom > group.bottom
    assert chart.value_x > chart.plot_width
    assert [label for _, label in chart.ticks] == ["0%", "25%", "50%", "75%", "100%"]


def test_stacked_bar_segments_fill_its_width():
    mix = stacked_bar([("a", 3, "#111"), ("b", 1, ""), ("none", 0, "#222")])
    assert [s.label for s in mix.segments] == ["a", "b"]
    assert sum(s.width for s in mix.segments) == pytest.approx(mix.width)
    assert mix.segments[1].x == pytest.approx(mix.segments[0].width)
    assert mix.description == "a: 3, b: 1"
    assert stacked_bar([]).description == "no annotations"


PROLIFIC_IDS = [f"prolific:60aa0000000000000000{n:04x}" for n in (1, 2, 0xBEEF)]


def test_long_labels_lose_their_middle_and_stay_distinguishable():
    """Issue 27.11: the round report cut Prolific ids to identical "prolific:60aa000…"."""
    labels = short_labels(PROLIFIC_IDS)
    assert len(set(labels)) == 3 and all(len(label) <= 28 for label in labels)
    assert labels[2].startswith("prolific:") and labels[2].endswith("beef")
    assert short_labels(["human", "gpt-4"]) == ["human", "gpt-4"]  # short names as they are
    # Names that differ only in the middle: their whole names.
    same_ends = ["p" * 20 + "1" + "q" * 30, "p" * 20 + "2" + "q" * 30]
    assert short_labels(same_ends) == same_ends


def test_precision_chart_rows_keep_the_whole_name_for_a_tooltip():
    stats = {"precision": 0.5, "ci95": [0.25, 0.75], "judgments": 8}
    chart = precision_chart(
        "p", "Precision", [("annotator", "By annotator", dict.fromkeys(PROLIFIC_IDS, stats))]
    )
    (group,) = chart.groups
    assert [row.name for row in group.rows] == PROLIFIC_IDS
    assert len({row.label for row in group.rows}) == 3
