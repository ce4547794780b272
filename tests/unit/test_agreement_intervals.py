"""Bootstrap intervals over documents, binary alpha from its parts, linked-pair F1 per
document and the gamma continuum's cache key: hand-computed cases."""

from __future__ import annotations

import numpy as np
import pytest

from app.adjudication.gamma import Unit, gamma, mean_linked_pair_f1
from app.adjudication.gamma_cache import content_key, continuum
from app.rules.intervals import (
    alpha_from_parts,
    alpha_parts,
    bootstrap_alpha_ci,
    bootstrap_mean_ci,
)
from app.rules.metrics import krippendorff_alpha


def test_bootstrap_of_equal_documents_is_that_value():
    assert bootstrap_mean_ci([0.4, 0.4, 0.4]) == pytest.approx((0.4, 0.4))


def test_bootstrap_of_two_documents_spans_both():
    # Resample means of [0, 1] are 0, 0.5 or 1 with chances 1/4, 1/2, 1/4: in 1000
    # resamples far more than 25 are 0 and 1, so the 2.5th and 97.5th percentiles are 0, 1.
    assert bootstrap_mean_ci([0.0, 1.0]) == (0.0, 1.0)


def test_bootstrap_is_the_percentile_rule_on_seeded_document_resamples():
    values = [0.1, 0.5, 0.2, 0.9, 0.4]
    indices = np.random.default_rng(3).integers(0, 5, size=(1000, 5))
    means = sorted(np.asarray(values)[indices].mean(axis=1))
    assert bootstrap_mean_ci(values, seed=3) == (means[25], means[975])
    assert bootstrap_mean_ci(values, seed=3) == bootstrap_mean_ci(values, seed=3)
    assert bootstrap_mean_ci(values, seed=4) != bootstrap_mean_ci(values, seed=3)
    assert bootstrap_mean_ci([0.5]) is None and bootstrap_mean_ci([]) is None


def test_alpha_from_parts_by_hand_and_as_the_package():
    # Units as (no error, error) counts: two coders agree twice on no error, once on
    # error, disagree once; a unit coded once is not pairable.
    counts = [(2, 0), (0, 2), (1, 1), (2, 0), (1, 0)]
    parts = alpha_parts(counts)
    assert parts == (1.0, 5, 3)  # D = 1*1/(2-1); n_0 = 5, n_1 = 3
    # 1 - (n - 1) * D / (n_0 * n_1) = 1 - 7 / 15
    assert alpha_from_parts(*parts) == pytest.approx(8 / 15)
    assert alpha_from_parts(*parts) == pytest.approx(krippendorff_alpha(counts))
    three = [(2, 1), (0, 3), (3, 0), (1, 2)]
    assert alpha_from_parts(*alpha_parts(three)) == pytest.approx(krippendorff_alpha(three))
    assert alpha_from_parts(0.0, 4, 0) is None  # all the same value: undefined


def test_alpha_interval_of_identical_documents_is_their_pooled_alpha():
    # Every resample of two identical documents sums to (2, 10, 6): 1 - 15 * 2 / 60.
    assert bootstrap_alpha_ci([(1.0, 5, 3), (1.0, 5, 3)]) == pytest.approx((0.5, 0.5))
    assert bootstrap_alpha_ci([(1.0, 5, 3)]) is None
    # Resamples where alpha is undefined (only the all-no-error document) are left out.
    low, high = bootstrap_alpha_ci([(0.0, 4, 0), (1.0, 5, 3)])
    assert low <= high <= 1


def test_linked_pair_f1_of_a_document_by_hand():
    x = ((0, 0, 5), (1, 0, 4), "repetition")
    y = ((0, 10, 20), (1, 6, 9), "repetition")
    near_x = ((0, 2, 6), (1, 1, 3), "repetition")  # both spans overlap x's
    linked = {"a": [x, y], "b": [near_x]}
    # a-b: precision 1/2, recall 1/1, F1 2/3; a-c and b-c: c has no pair, F1 0.
    assert mean_linked_pair_f1(linked, ["a", "b", "c"]) == pytest.approx((2 / 3 + 0 + 0) / 3)
    # Pairs where neither annotator has a linked pair are left out; none at all: None.
    assert mean_linked_pair_f1(linked, ["a", "b", "d", "e"]) == pytest.approx(
        (2 / 3 + 0 + 0 + 0 + 0) / 5
    )
    assert mean_linked_pair_f1({}, ["d", "e"]) is None


def test_gamma_counts_an_annotator_who_marked_nothing():
    units = [Unit("a", 0, 5, "x"), Unit("a", 10, 15, "y")]
    with pytest.raises(ValueError):
        gamma(units, samples=3)  # one annotator: undefined
    result = gamma(units, samples=3, annotators=["a", "b"])
    # Two units, each alone: disorder 2 * delta_empty over 1 unit per annotator.
    assert result.observed == pytest.approx(2.0)


def test_continuum_lays_paragraphs_end_to_end_and_keys_by_content():
    units = continuum([10, 4], [("a", [(0, 2, 5, "x"), (1, 0, 3, "y")]), ("b", [])])
    assert units == [Unit("a", 2, 5, "x"), Unit("a", 11, 14, "y")]
    key = content_key(units, ["a", "b"])
    assert content_key(list(reversed(units)), ["b", "a"]) == key  # order does not matter
    assert content_key(units, ["a", "b", "c"]) != key  # another annotator
    assert content_key(units[:1], ["a", "b"]) != key  # a span less
    assert content_key(units, ["a", "b"], samples=5) != key  # other parameters
