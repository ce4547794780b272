"""The Alternative Annotator Test on a hand-computed example: the t statistics, Student's
t with 4 degrees of freedom in closed form, the Benjamini-Yekutieli adjustment and the
winning rate, with scipy only as a cross-check; then alignment scores from spans."""

from __future__ import annotations

import math

import pytest
from scipy import stats

from app.analysis.alttest import (
    alignment_scores,
    alt_test,
    alt_test_from_scores,
    benjamini_yekutieli,
    one_sided_t,
)
from app.analysis.matching import Mark


def student_t4_cdf(t: float) -> float:
    """Student's t distribution function with 4 degrees of freedom, in closed form."""
    x = t * t / (1 + t * t / 4)
    return 0.5 + 3 / 8 * (t / math.sqrt(1 + t * t / 4)) * (1 - x / 12)


# Five documents per left-out human, as (judge's alignment, human's alignment). With
# d = [human >= judge] - [judge >= human]: ann is beaten 4 times and ties once, bob is
# beaten twice and ties three times, cyd is beaten once, ties three times, wins once.
SCORES = {
    "ann": [(1.0, 0.5)] * 4 + [(0.5, 0.5)],
    "bob": [(0.8, 0.4)] * 2 + [(0.6, 0.6)] * 3,
    "cyd": [(1.0, 0.0), (0.5, 0.5), (0.5, 0.5), (0.5, 0.5), (0.0, 1.0)],
}


def test_t_statistics_by_hand():
    # ann: d = (-1, -1, -1, -1, 0), mean -0.8, s^2 = (4 * 0.04 + 0.64) / 4 = 0.2,
    # SE = sqrt(0.2 / 5) = 0.2, t = (-0.8 - 0.2) / 0.2 = -5.
    t, p = one_sided_t([-1, -1, -1, -1, 0], 0.2)
    assert t == pytest.approx(-5.0)
    assert p == pytest.approx(student_t4_cdf(-5.0))
    # bob: d = (-1, -1, 0, 0, 0), mean -0.4, s^2 = (2 * 0.36 + 3 * 0.16) / 4 = 0.3.
    t, p = one_sided_t([-1, -1, 0, 0, 0], 0.2)
    assert t == pytest.approx(-0.6 / math.sqrt(0.3 / 5))
    assert p == pytest.approx(student_t4_cdf(-0.6 / math.sqrt(0.06)))
    # scipy's one-sample t-test, H1: mean < epsilon, agrees.
    reference = stats.ttest_1samp([-1, -1, 0, 0, 0], 0.2, alternative="less")
    assert (t, p) == pytest.approx((reference.statistic, reference.pvalue))


def test_zero_spread_decides_by_the_mean():
    assert one_sided_t([-1, -1, -1], 0.2) == (-math.inf, 0.0)
    assert one_sided_t([1, 1, 1], 0.2) == (math.inf, 1.0)
    with pytest.raises(ValueError):
        one_sided_t([0.0], 0.2)


def test_benjamini_yekutieli_by_hand():
    # m = 3, c(3) = 1 + 1/2 + 1/3 = 11/6; adjusted p_(k) = min_{l >= k} p_(l) * 3 * c / l.
    p = [0.004, 0.2, 0.03]
    c = 11 / 6
    high = 0.2 * 3 * c / 3
    middle = min(high, 0.03 * 3 * c / 2)
    low = min(middle, 0.004 * 3 * c / 1)
    assert benjamini_yekutieli(p) == pytest.approx([low, high, middle])
    assert benjamini_yekutieli(p) == pytest.approx(
        list(stats.false_discovery_control(p, method="by"))
    )
    assert benjamini_yekutieli([]) == []


def test_winning_rate_of_the_hand_example():
    result = alt_test_from_scores(SCORES, epsilon=0.2)
    rows = {row["annotator_id"]: row for row in result["annotators"]}
    t_ann, t_bob, t_cyd = -5.0, -0.6 / math.sqrt(0.06), -0.2 / math.sqrt(0.5 / 5)
    assert [rows[a]["t"] for a in ("ann", "bob", "cyd")] == pytest.approx([t_ann, t_bob, t_cyd])
    raw = [student_t4_cdf(t) for t in (t_ann, t_bob, t_cyd)]  # 0.0038, 0.035, 0.28
    c = 11 / 6
    adjusted_cyd = raw[2] * 3 * c / 3
    adjusted_bob = min(adjusted_cyd, raw[1] * 3 * c / 2)
    adjusted_ann = min(adjusted_bob, raw[0] * 3 * c / 1)
    assert [rows[a]["p_value"] for a in ("ann", "bob", "cyd")] == pytest.approx(
        [adjusted_ann, adjusted_bob, adjusted_cyd]
    )
    # bob's raw p-value is below 0.05 but not after the correction: only ann is beaten.
    assert raw[1] < 0.05 < adjusted_bob
    assert [rows[a]["won"] for a in ("ann", "bob", "cyd")] == [True, False, False]
    assert result["winning_rate"] == pytest.approx(1 / 3)
    assert result["passed"] is False
    # rho: the judge's score >= the human's on 5/5, 5/5 and 4/5 documents.
    assert result["rho"] == pytest.approx((1 + 1 + 0.8) / 3)
    assert result["epsilon"] == 0.2


def test_a_judge_beating_two_of_three_passes():
    scores = {**SCORES, "bob": SCORES["ann"]}
    result = alt_test_from_scores(scores, epsilon=0.2)
    assert result["winning_rate"] == pytest.approx(2 / 3)
    assert result["passed"] is True
    # A smaller epsilon (the paper's 0.1 for crowd-workers) asks more of the judge.
    assert one_sided_t([-1, -1, 0, 0, 0], 0.1)[1] > one_sided_t([-1, -1, 0, 0, 0], 0.2)[1]


def _document(judge, ann, bob, cyd):
    return {"judge": judge, "ann": ann, "bob": bob, "cyd": cyd}


ERROR = Mark(0, 0, 10, "coherence")
OTHER = Mark(1, 5, 20, "omission")


def test_alignment_is_the_mean_span_f1_with_the_remaining_humans():
    readings = {"d1": _document([ERROR], [ERROR], [ERROR], [])}
    scores = alignment_scores(readings, "judge")
    # Leaving ann out: judge vs (bob: F1 1, cyd: 0) = 0.5; ann vs the same = 0.5.
    assert scores["ann"] == [(0.5, 0.5)]
    assert scores["bob"] == [(0.5, 0.5)]
    # Leaving cyd out: the judge agrees with ann and bob (1.0), cyd with neither (0.0).
    assert scores["cyd"] == [(1.0, 0.0)]


def test_alt_test_from_spans_matches_the_scores_route():
    documents = {
        "d1": _document([ERROR], [ERROR], [ERROR], []),
        "d2": _document([ERROR, OTHER], [ERROR, OTHER], [OTHER], [ERROR]),
        "d3": _document([], [], [OTHER], []),
        "d4": _document([OTHER], [OTHER], [OTHER], [ERROR]),
    }
    result, reason = alt_test(documents, "judge", min_instances=4)
    assert reason is None
    expected = alt_test_from_scores(alignment_scores(documents, "judge"))
    assert result["winning_rate"] == expected["winning_rate"]
    assert result["rho"] == pytest.approx(expected["rho"])
    assert result["skipped"] == []


def test_fewer_than_three_humans_say_so():
    documents = {"d1": {"judge": [ERROR], "ann": [ERROR], "bob": []}}
    result, reason = alt_test(documents, "judge", min_instances=1)
    assert result is None
    assert "at least 3 human annotators" in reason
    # Humans with fewer shared documents than the minimum (30 by default) do not count.
    four = {"d1": _document([ERROR], [ERROR], [ERROR], [])}
    result, reason = alt_test(four, "judge")
    assert result is None and "30 documents" in reason
