"""The study planner: the per-document variance by hand, the fewest documents, cost, and
simulated pilots whose forecast intervals cover the truth."""

from __future__ import annotations

import math
from itertools import combinations
from statistics import mean, pvariance, variance

import numpy as np
import pytest
from scipy.stats import t as student_t

from app.analysis.planner import (
    Forecaster,
    cost,
    mean_of_readings,
    plan_study,
    ratio_of_readings,
    reading_minutes,
)
from tests.support.simulated_studies import booookscore_readings, true_booookscore

SCORE = mean_of_readings(lambda reading: reading)
PILOT = [[80.0, 90.0, 70.0], [60.0, 65.0, 40.0], [95.0, 85.0, 90.0], [50.0, 70.0, 75.0]]


def test_variance_of_a_mean_is_between_plus_within_over_k():
    # For a mean of readings, every document's k-sets average to its mean, and their
    # variance is s^2 (m - k) / ((m - 1) k) with s^2 the document's population variance.
    forecaster = Forecaster.of(PILOT, SCORE)
    between = variance([mean(doc) for doc in PILOT])
    for k in (1, 2, 3):
        within = mean(pvariance(doc) * (3 - k) / (2 * k) for doc in PILOT)
        assert forecaster.variance[k] == pytest.approx(between + within)
        sets = [[mean(s) for s in combinations(doc, k)] for doc in PILOT]
        assert within == pytest.approx(mean(pvariance(values) for values in sets))
    assert forecaster.pilot_documents == 4


def test_half_width_uses_students_t_with_the_pilots_degrees_of_freedom():
    forecaster = Forecaster.of(PILOT, SCORE)
    quantile = student_t.ppf(0.975, 3)
    assert forecaster.half_width(3, 25) == pytest.approx(
        quantile * math.sqrt(forecaster.variance[3] / 25)
    )


def test_a_ratio_is_linearised():
    # Two readings per document as (errors, sentences); the document's part with both
    # readings is (sum of errors, sum of sentences); z = errors - R * sentences.
    pilot = [[(2, 10), (4, 10)], [(1, 20), (3, 20)], [(6, 15), (2, 15)]]
    rate = ratio_of_readings(lambda r: r[0], lambda r: r[1])
    parts = [(6, 20), (4, 40), (8, 30)]
    ratio = mean(p[0] for p in parts) / mean(p[1] for p in parts)
    expected = variance([n - ratio * d for n, d in parts])
    forecaster = Forecaster.of(pilot, rate)
    assert forecaster.variance[2] == pytest.approx(expected / 30**2)
    assert forecaster.half_width(2, 10) == pytest.approx(
        student_t.ppf(0.975, 2) * math.sqrt(expected / 10) / 30
    )
    # One reading per document: parts (num, den) of each reading, denominator 15.
    singles = [r for doc in pilot for r in doc]
    ratio_one = sum(n for n, _ in singles) / sum(d for _, d in singles)
    means = [mean(n - ratio_one * d for n, d in doc) for doc in pilot]
    within = mean(pvariance([n - ratio_one * d for n, d in doc]) for doc in pilot)
    assert forecaster.variance[1] == pytest.approx((variance(means) + within) / 15**2)


def test_the_fewest_documents_meet_the_target():
    forecaster = Forecaster.of(PILOT, SCORE)
    for target in (2.0, 5.0, 11.0):
        needed = forecaster.documents_needed(3, target)
        assert forecaster.half_width(3, needed) <= target
        assert needed == 2 or forecaster.half_width(3, needed - 1) > target


def test_plan_study_json_and_cost():
    minutes = [reading_minutes([60, 120, 180])] * 12  # 6 minutes per reading
    plan = plan_study(PILOT, SCORE, "booookscore", 5.0, minutes, hourly_rate=12, fee_percent=33)
    assert plan["figure"] == "booookscore" and plan["half_width"] == 5.0
    rows = plan["plans"]
    assert [r["annotators_per_document"] for r in rows] == [2, 3, 4, 5, 6]
    assert [r["extrapolated"] for r in rows] == [False, False, True, True, True]
    for row in rows:
        assert row["expected_half_width"] <= 5.0
        assert row["worker_minutes"] == pytest.approx(
            6 * row["annotators_per_document"] * row["documents"]
        )
        assert row["cost"] == pytest.approx(round(row["worker_minutes"] / 60 * 12 * 1.33, 2))
    documents = [r["documents"] for r in rows]
    assert documents == sorted(documents, reverse=True)  # more annotators, fewer documents
    assert cost(90, None) is None
    assert cost(90, 10, 0) == 15.0
    with pytest.raises(ValueError):
        plan_study(PILOT, SCORE, "booookscore", 0, minutes)


def test_a_figure_callable_sees_k_readings():
    seen = set()

    def spread(readings):
        seen.add(len(readings))
        return (max(readings) - min(readings), 1.0) if len(readings) >= 2 else None

    plan = plan_study(PILOT, spread, "gamma", 20.0, [5.0])
    assert seen == {1, 2, 3}
    assert [r["extrapolated"] for r in plan["plans"]] == [False, False, True, True, True]


def test_forecast_intervals_cover_the_true_mean():
    # Done-when of issue 32: from a pilot of 15 documents x 3 annotators (each finding an
    # error with probability 0.3-0.8, 5-30 errors per document), forecast the half-width
    # for 40 documents with 3 and with 5 annotators; a new study of that design gives its
    # figure, and figure +- forecast covers the true mean in at least 90 of 100 studies.
    rng = np.random.default_rng(0)
    truth = true_booookscore()
    covered = {3: 0, 5: 0}
    forecasts: dict[int, list[float]] = {3: [], 5: []}
    for _ in range(100):
        pilot = Forecaster.of([list(row) for row in booookscore_readings(rng, 15, 3)], SCORE)
        for k in (3, 5):
            half_width = pilot.half_width(k, 40)
            forecasts[k].append(half_width)
            figure = booookscore_readings(rng, 40, k).mean()
            covered[k] += abs(figure - truth) <= half_width
    assert covered[3] >= 90 and covered[5] >= 90
    # And the forecasts are not merely wide: on average within 15% of the true half-width
    # (1.96 standard deviations of the figure over many studies of that design).
    for k in (3, 5):
        figures = [booookscore_readings(rng, 40, k).mean() for _ in range(2000)]
        true_half_width = 1.96 * np.std(figures)
        assert np.mean(forecasts[k]) == pytest.approx(true_half_width, rel=0.15)
