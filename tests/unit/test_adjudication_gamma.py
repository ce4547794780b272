"""Gamma (Mathet et al. 2015) against pygamma-agreement 0.5.9 on its own example, the
linked-pair F1 and the document bootstrap."""

from __future__ import annotations

import pytest

from app.adjudication.gamma import (
    Dissimilarity,
    Unit,
    best_alignment,
    bootstrap_ci,
    gamma,
    linked_pair_f1,
)

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
    low, high = bootstrap_ci(values, seed=7)
    assert low < 0.5 < high
    assert bootstrap_ci(values, seed=7) == (low, high)
    assert bootstrap_ci([0.5]) is None
