"""Gamma (Mathet et al. 2015) against pygamma-agreement 0.5.9 on its own example, the
linked-pair F1 and the document bootstrap; identical units counted once, the windowed
alignment of long continua, the Monte-Carlo error, and the analysis limits."""

from __future__ import annotations

import random
import time
from statistics import fmean, stdev

import pytest

from app.adjudication.gamma import (
    EXACT,
    EXACT_UNIT_LIMIT,
    WINDOWED,
    Dissimilarity,
    Unit,
    best_alignment,
    distinct_units,
    gamma,
    linked_pair_f1,
    pooled_mc_se,
    windowed_alignment,
)
from app.adjudication.gamma_runner import BoundedGamma, Limits
from app.rules.intervals import bootstrap_mean_ci

# pygamma-agreement's test continuum tests/data/AlexPaulSuzan.csv: annotator, category,
# start, end (the example of Mathet et al. 2015's figures).
ALEX_PAUL_SUZAN = """
Alex,1,2,9 Alex,2,11,17 Alex,5,24,30 Alex,6,32,36 Alex,6,36,44 Alex,7,44,60
Paul,1,2,9 Paul,3,11,17 Paul,5,19,25 Paul,6,32,44
Suzan,1,2,9 Suzan,4,11,17 Suzan,5,21,27 Suzan,6,32,36 Suzan,6,36,40 Suzan,6,40,44
"""
UNITS = [
    Unit(name, float(start), float(end), category)
    for name, category, start, end in (row.split(",") for row in ALEX_PAUL_SUZAN.split())
]
# Measured here with pygamma-agreement 0.5.9 (HiGHS as the MIP solver; numpy seed 0,
# 100 samples): best-alignment disorder and gamma.
PACKAGE_ALPHA3 = {"observed": 0.96062493, "gamma": 0.4206347}
PACKAGE_DEFAULT = {"observed": 0.6535417, "gamma": 0.5174383}


def test_dissimilarity_follows_the_combined_definition():
    d = Dissimilarity(alpha=3, beta=1)
    same = Unit("a", 2, 9, "x")
    assert d(same, same) == 0
    # ((|2-4| + |9-9|) / (7 + 5))^2 * 3 + 1 (other category)
    assert d(same, Unit("b", 4, 9, "y")) == pytest.approx(3 * (2 / 12) ** 2 + 1)


def test_best_alignment_disorder_equals_pygamma():
    observed, _ = best_alignment(UNITS, Dissimilarity(alpha=3, beta=1))
    assert observed == pytest.approx(PACKAGE_ALPHA3["observed"], abs=1e-6)
    observed, _ = best_alignment(UNITS, Dissimilarity())
    assert observed == pytest.approx(PACKAGE_DEFAULT["observed"], abs=1e-6)


def test_gamma_agrees_with_pygamma_within_sampling_error():
    result = gamma(UNITS, Dissimilarity(alpha=3, beta=1), samples=200, seed=1)
    assert result.gamma == pytest.approx(PACKAGE_ALPHA3["gamma"], abs=0.02)
    result = gamma(UNITS, samples=200, seed=1)
    assert result.gamma == pytest.approx(PACKAGE_DEFAULT["gamma"], abs=0.02)


def test_gamma_is_seeded_and_one_for_identical_annotations():
    assert gamma(UNITS, samples=20, seed=3) == gamma(UNITS, samples=20, seed=3)
    twins = [Unit(name, 0, 5, "x") for name in ("a", "b", "c")]
    assert gamma(twins, samples=5).gamma == 1.0


def test_gamma_needs_two_annotators():
    with pytest.raises(ValueError, match="two annotators"):
        best_alignment([Unit("a", 0, 1, "x")])


def test_linked_pair_f1_matches_both_spans_and_category():
    a = [((1, 0, 5), (0, 0, 4), "repetition"), ((1, 10, 12), (0, 6, 8), "repetition")]
    b = [((1, 2, 6), (0, 1, 3), "repetition")]
    # a's first pair matches b's; a's second does not: precision 1/2, recall 1/1.
    assert linked_pair_f1(a, b) == pytest.approx(2 / 3)
    assert linked_pair_f1(a, [((1, 2, 6), (0, 1, 3), "contradiction")]) == 0.0
    assert linked_pair_f1([], []) is None


def test_bootstrap_resamples_documents_with_a_seed():
    values = [0.2, 0.4, 0.6, 0.8]
    low, high = bootstrap_mean_ci(values, seed=7)
    assert low < 0.5 < high
    assert bootstrap_mean_ci(values, seed=7) == (low, high)
    assert bootstrap_mean_ci([0.5]) is None


# --- worker data cannot stall gamma (issue 26 point 4) ------------------------------------


@pytest.mark.timeout(60)
def test_identical_units_of_one_annotator_count_once():
    once = [Unit("a", 10, 20, "x"), Unit("b", 11, 20, "x"), Unit("a", 30, 35, "y")]
    copies = once + [Unit("a", 10, 20, "x")] * 19 + [Unit("b", 11, 20, "x")] * 19
    assert gamma(copies, samples=20, seed=4) == gamma(once, samples=20, seed=4)
    assert distinct_units(copies) == once
    # Another annotator's identical unit is agreement, not a copy.
    assert len(distinct_units([Unit("a", 1, 2, "x"), Unit("b", 1, 2, "x")])) == 2


def _long_continuum(units_per_annotator: int, seed: int = 5) -> list[Unit]:
    """Three annotators marking about the same spans along a long text."""
    rng = random.Random(seed)
    units = []
    for k in range(units_per_annotator):
        for name in ("a", "b", "c"):
            if rng.random() < 0.9:
                start = k * 60 + rng.randint(0, 12)
                category = "x" if rng.random() < 0.8 else rng.choice("yz")
                units.append(Unit(name, start, start + 15 + rng.randint(0, 30), category))
    return units


def test_the_windowed_alignment_equals_the_exact_one_on_local_data():
    # pygamma-agreement's fast-gamma: exact on real (local) data, its documentation says.
    for seed in range(3):
        units = _long_continuum(220, seed)
        assert len(units) > EXACT_UNIT_LIMIT
        exact = best_alignment(units)
        windowed = windowed_alignment(units)
        assert windowed[0] == pytest.approx(exact[0], abs=1e-12)
        assert windowed[1] == exact[1]


@pytest.mark.timeout(120)
def test_more_than_500_units_are_aligned_by_windows():
    large = _long_continuum(220)
    result = gamma(large, samples=5)
    assert result.method == WINDOWED and len(large) > EXACT_UNIT_LIMIT
    assert result.observed == pytest.approx(best_alignment(large)[0])
    small = _long_continuum(100)
    assert len(small) <= EXACT_UNIT_LIMIT and gamma(small, samples=5).method == EXACT


# --- gamma's Monte-Carlo error (issue 28 point 8) ------------------------------------------


def test_the_monte_carlo_error_is_the_spread_of_gamma_over_seeds():
    # mc_se estimates how much gamma moves with the random continua alone: the standard
    # deviation of gamma over many seeds (computed here, not by the module) is close to it.
    results = [gamma(UNITS, samples=30, seed=seed) for seed in range(40)]
    spread = stdev(r.gamma for r in results)
    mean_se = fmean(r.mc_se for r in results)
    assert 0.6 * spread < mean_se < 1.6 * spread
    # More samples, less error (about 1/sqrt(samples)).
    more = gamma(UNITS, samples=270, seed=1).mc_se
    assert more < 0.6 * mean_se
    assert gamma(UNITS, samples=1).mc_se is None
    twins = [Unit(name, 0, 5, "x") for name in ("a", "b")]
    assert gamma(twins, samples=5).mc_se == 0.0


def test_the_pooled_monte_carlo_error_of_a_mean():
    assert pooled_mc_se([0.03, 0.04]) == pytest.approx(0.025)  # sqrt(0.0009 + 0.0016) / 2
    assert pooled_mc_se([]) is None and pooled_mc_se([0.1, None]) is None


# --- the limits, in a child process ---------------------------------------------------------

# Two annotators' heavily overlapping, slightly shifted spans: no two identical, one
# connected group, and an exact alignment that grows without bound in time and memory.
HOSTILE = [Unit(name, i, i + 60, "x") for name in ("a", "b") for i in range(40)]


@pytest.mark.timeout(60)
def test_a_computation_over_the_time_limit_is_skipped_not_waited_for():
    small = UNITS[:6]
    names = sorted({u.annotator for u in UNITS})
    with BoundedGamma(Limits(seconds=1.5, megabytes=1024)) as runner:
        started = time.monotonic()
        assert runner.compute(HOSTILE, ["a", "b"], 10, 0) == {"skipped": "time"}
        assert time.monotonic() - started < 10
        # The next document gets a new child, and its value.
        answer = runner.compute(small, names, 10, 0)
    assert answer["gamma"] == pytest.approx(gamma(small, samples=10, annotators=names).gamma)
    assert answer["method"] == EXACT and answer["mc_se"] > 0


@pytest.mark.timeout(120)
def test_a_computation_over_the_memory_limit_is_skipped():
    with BoundedGamma(Limits(seconds=100, megabytes=200)) as runner:
        assert runner.compute(HOSTILE, ["a", "b"], 10, 0) == {"skipped": "memory"}
        assert "gamma" in runner.compute(UNITS[:6], ["Alex", "Paul", "Suzan"], 10, 0)


def test_limits_cover_only_what_would_be_skipped_again():
    assert Limits(60, 1024).covers([60, 1024]) and Limits(30, 512).covers([60, 1024])
    assert not Limits(120, 1024).covers([60, 1024]) and not Limits(60, 2048).covers([60, 1024])
    assert not Limits(0, 1024).covers([60, 1024])  # no time limit now: try again
    assert Limits(60, 1024).covers([0, 0])  # skipped without limits: always again
