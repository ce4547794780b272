"""The arm rule (app.suggestions.arms.choose_arm): deterministic, within one of the shares."""

from __future__ import annotations

from collections import Counter

from app.suggestions.arms import choose_arm


def _arrivals(arms, count):
    workers: Counter = Counter()
    order = []
    for _ in range(count):
        arm = choose_arm(arms, workers)
        workers[arm] += 1
        order.append(arm)
    return order, workers


def test_half_and_half_alternates_from_show():
    order, workers = _arrivals((("show", 0.5), ("none", 0.5)), 20)
    assert order[:4] == ["show", "none", "show", "none"]
    assert workers == Counter({"show": 10, "none": 10})


def test_every_prefix_is_within_one_of_the_shares():
    arms = (("show", 0.3), ("none", 0.7))
    order, _ = _arrivals(arms, 50)
    for n in range(1, 51):
        shown = order[:n].count("show")
        assert abs(shown - 0.3 * n) <= 1


def test_one_arm():
    assert _arrivals((("show", 1.0),), 3)[0] == ["show"] * 3
