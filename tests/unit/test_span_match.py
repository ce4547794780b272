"""The one rule that says whether a worker's span marks a known error (app.rules.spans.locates):
character intersection over union >= 0.5, same paragraph; with the same category the
error is found. Attention checks (metrics.gold_recall) and training use it."""

from __future__ import annotations

import pytest

from app.rules.metrics import attention_flagged, gold_recall
from app.rules.spans import MIN_MATCH_IOU, locates, matches, span_iou

GOLD = [{"paragraph_id": 0, "start": 10, "end": 20, "category": "new-person"}]


def found(span: tuple[int, int, int], category: str = "new-person") -> bool:
    return gold_recall(GOLD, [(*span, category)]).found_same_category == 1


def test_the_rule_at_one_half():
    assert MIN_MATCH_IOU == 0.5
    # Exactly one half: 10 shared of 20 covered together (a superset twice as long).
    assert span_iou((0, 10, 30), (0, 10, 20)) == 0.5
    assert locates((0, 10, 30), (0, 10, 20))
    # One character more around it: 10 of 21, below one half.
    assert not locates((0, 10, 31), (0, 10, 20))
    assert not locates((0, 9, 30), (0, 10, 20))
    # Inside the gold span: 5 of its 10 characters is one half, 4 is not.
    assert locates((0, 15, 20), (0, 10, 20))
    assert not locates((0, 16, 20), (0, 10, 20))
    # Shifted: 6 shared of 14 covered (0.43) is not enough, 7 of 13 (0.54) is.
    assert not locates((0, 14, 24), (0, 10, 20))
    assert locates((0, 13, 23), (0, 10, 20))
    # The rule is symmetric, and another paragraph never matches.
    assert locates((0, 10, 20), (0, 10, 30))
    assert not locates((1, 10, 20), (0, 10, 20))
    assert span_iou((1, 10, 20), (0, 10, 20)) == 0.0
    # Touching is not overlapping.
    assert not locates((0, 20, 21), (0, 20, 20)) and not locates((0, 0, 10), (0, 10, 20))


def test_a_superset_no_longer_finds_the_error():
    # Under the earlier rule (half of the shorter span), any span around the gold span
    # matched it: a whole 100-character paragraph found a 10-character error.
    assert not found((0, 0, 100))
    assert not found((0, 5, 40))
    assert found((0, 10, 20)) and found((0, 9, 21)) and found((0, 12, 19))


def test_category_decides_found_not_located():
    assert matches((0, 10, 20), "new-person", (0, 10, 20), "new-person")
    assert not matches((0, 10, 20), "repetition", (0, 10, 20), "new-person")
    score = gold_recall(GOLD, [(0, 10, 20, "repetition")])
    assert (score.found_any, score.found_same_category, score.unmatched) == (1, 0, 1)


def test_highlighting_everything_is_flagged():
    # One span per sentence of a long paragraph in the gold category: the gold span is
    # found, but 9 of the worker's 10 spans match nothing.
    spans = [(0, start, start + 10, "new-person") for start in range(0, 100, 10)]
    score = gold_recall(GOLD, spans)
    assert score.recall_category == 1.0
    assert score.precision == pytest.approx(1 / 10)
    assert attention_flagged(score, 0.5, 0.5)
    careful = gold_recall(GOLD, [(0, 10, 20, "new-person")])
    assert not attention_flagged(careful, 0.5, 0.5)
    assert attention_flagged(gold_recall(GOLD, []), 0.5, 0.5)  # found nothing
    assert not attention_flagged(gold_recall([], spans), 0.5, 0.5)  # no check: no flag
    # The whole paragraph in one span: nothing found, nothing precise.
    whole = gold_recall(GOLD, [(0, 0, 100, "new-person")])
    assert (whole.recall_category, whole.precision) == (0.0, 0.0)
    assert attention_flagged(whole, 0.5, 0.5)
