"""Spans into errors: the attention-check rule's IoU, connected components of matches
between annotators, and the precision/recall counts of one pair."""

from __future__ import annotations

import pytest

from app.analysis.matching import (
    Mark,
    PairCounts,
    f1_score,
    group_matches,
    iou,
    iou_match,
    pair_counts,
)


def test_iou_is_shared_characters_over_covered_characters():
    assert iou((0, 0, 10, "a"), (0, 5, 15, "a")) == pytest.approx(5 / 15)
    assert iou((0, 0, 10, "a"), (0, 0, 10, "b")) == 1.0
    assert iou((0, 0, 10, "a"), (1, 0, 10, "a")) == 0.0  # another paragraph
    assert iou((0, 0, 10, "a"), (0, 10, 20, "a")) == 0.0  # touching, nothing shared


def test_the_rule_needs_half_the_union_and_the_same_category():
    assert iou_match((0, 0, 10, "a"), (0, 0, 20, "a"))  # 10 / 20 = 0.5
    assert not iou_match((0, 0, 10, "a"), (0, 0, 21, "a"))  # 10 / 21
    assert not iou_match((0, 0, 10, "a"), (0, 0, 10, "b"))
    assert iou_match(Mark(2, 4, 9, None), Mark(2, 4, 9, None))  # a unit without a label


def test_a_chain_of_matches_is_one_error():
    # A ~ B (IoU 7/13), B ~ C (7/13), but A and C share only 4 of 16 characters.
    readings = {
        "ann": [Mark(0, 0, 10, "a")],
        "bob": [Mark(0, 3, 13, "a")],
        "cyd": [Mark(0, 6, 16, "a"), Mark(0, 40, 50, "a")],
    }
    assert not iou_match(readings["ann"][0], readings["cyd"][0])
    components = group_matches(readings)
    assert [c.annotators for c in components] == [
        frozenset({"ann", "bob", "cyd"}),
        frozenset({"cyd"}),
    ]
    assert components[0].members == (("ann", 0), ("bob", 0), ("cyd", 0))


def test_two_spans_of_one_annotator_are_not_linked_to_each_other():
    # The worker marked two overlapping units; with no other worker they stay two errors,
    # and another worker matching both joins them through the chain.
    alone = {"ann": [Mark(0, 0, 10, "a"), Mark(0, 0, 10, "a")]}
    assert len(group_matches(alone)) == 2
    joined = {**alone, "bob": [Mark(0, 0, 10, "a")]}
    assert len(group_matches(joined)) == 1


def test_categories_and_paragraphs_keep_errors_apart():
    readings = {
        "ann": [Mark(0, 0, 10, "a"), Mark(1, 0, 10, "a")],
        "bob": [Mark(0, 0, 10, "b"), Mark(1, 0, 10, "a")],
    }
    sizes = sorted(len(c.annotators) for c in group_matches(readings))
    assert sizes == [1, 1, 2]


def test_pair_counts_and_f1_by_hand():
    judge = [Mark(0, 0, 10, "a"), Mark(0, 20, 30, "a"), Mark(1, 0, 5, "b")]
    human = [Mark(0, 1, 10, "a"), Mark(1, 0, 5, "a")]
    counts = pair_counts(judge, human)
    # Judge's first matches the human's first; its third has the wrong category.
    assert counts == PairCounts(1, 3, 1, 2)
    precision, recall = 1 / 3, 1 / 2
    assert f1_score(counts) == pytest.approx(2 * precision * recall / (precision + recall))
    assert f1_score(PairCounts(0, 0, 0, 0)) == 1.0  # both marked nothing: they agree
    assert f1_score(PairCounts(0, 2, 0, 0)) == 0.0


def test_weighted_counts_use_the_severity_weight():
    judge = [Mark(0, 0, 10, "a", 5.0), Mark(0, 20, 30, "a", 1.0)]
    human = [Mark(0, 0, 10, "a", 5.0), Mark(0, 50, 60, "a", 1.0)]
    assert pair_counts(judge, human, weighted=True) == PairCounts(5, 6, 5, 6)
    assert pair_counts(judge, human) == PairCounts(1, 2, 1, 2)
