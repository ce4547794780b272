"""BooookScore's definitions (Chang et al., ICLR 2024) on hand-made cases.

The score is the release's `Scorer.get_score` (booookscore/legacy/get_booookscore_v1.py):
1 - (singles + relations) / sentences per book, i.e. every error unit counts once, whatever
it spans and however many labels it has; a book without annotations scores 1; not clipped.
Table 1: errors per sentence = occurrences of a category / all sentences.
"""

from __future__ import annotations

import pytest

from app.rules.metrics import Reading, booookscore, error_units, error_units_of, span_f1, unit_rows


def test_every_unit_counts_once_whatever_it_spans():
    # A single over three sentences, a relation across paragraphs and a one-word span are
    # three units: 3 of 10 sentences, not the sentences they touch (footnote 12).
    assert booookscore(10, error_units(["a", "b", "c"])) == pytest.approx(70.0)


def test_rows_of_one_unit_count_once_and_two_units_on_one_span_twice():
    # One released span with two labels = two rows sharing a unit: one error.
    assert error_units([7, 7]) == 1
    # Two singles with the same text are two units (the release counts both).
    assert error_units([7, 8]) == 2
    rows = [(0, 0, 5, "salience"), (0, 0, 5, "language"), (0, 0, 5, "salience")]
    assert unit_rows(rows, [1, 1, 2]) == [rows[0], rows[2]]
    assert error_units_of(rows, [1, 1, 2]) == [
        ((0, 0, 5), frozenset({"salience", "language"})),
        ((0, 0, 5), frozenset({"salience"})),
    ]


def test_the_score_is_not_clipped_and_no_error_scores_100():
    assert booookscore(25, 2) == pytest.approx(92.0)  # Figure 2: 23/25 error-free, 92%
    assert booookscore(4, 6) == pytest.approx(-50.0)  # more units than sentences
    assert booookscore(4, 0) == 100.0
    assert booookscore(0, 0) == 100.0  # a book without annotations scores 1
    assert booookscore(0, 1) is None


def test_span_f1_counts_units_and_the_category_aware_figure_needs_a_shared_category():
    # Annotator a: one unit with two labels; b: one span of one of them, overlapping by
    # one character; c: the same place, another category.
    a = Reading.of_units(error_units_of([(0, 0, 5, "x"), (0, 0, 5, "y")], [1, 1]))
    b = Reading.of_units(error_units_of([(0, 4, 9, "y")], [2]))
    c = Reading.of_units(error_units_of([(0, 4, 9, "z")], [3]))
    assert span_f1(a, b) == 1.0  # one unit each, overlapping: not 2 spans of which 1 matches
    assert span_f1(a, b, same_category=True) == 1.0
    assert span_f1(a, c) == 1.0
    assert span_f1(a, c, same_category=True) == 0.0
