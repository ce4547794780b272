"""Report arithmetic on hand-computed cases: Wilson interval, precision, agreement."""

from __future__ import annotations

import pytest

from app.validation.report import (
    agreement,
    group_stats,
    krippendorff_alpha,
    percent_agreement,
    valid_counts,
    wilson_interval,
)


@pytest.mark.parametrize(
    ("successes", "n", "expected"),
    [
        (8, 10, (0.4902, 0.9433)),
        (0, 10, (0.0, 0.2775)),
        (10, 10, (0.7225, 1.0)),
        (1, 2, (0.0945, 0.9055)),
        (73, 96, (0.6661, 0.8347)),
    ],
)
def test_wilson_interval_matches_hand_computation(successes, n, expected):
    low, high = wilson_interval(successes, n)
    assert low == pytest.approx(expected[0], abs=5e-5)
    assert high == pytest.approx(expected[1], abs=5e-5)


def test_wilson_interval_is_none_without_data():
    assert wilson_interval(0, 0) is None


def test_precision_counts_partial_as_valid_by_default():
    stats = group_stats(agree=5, partial=3, disagree=2)
    assert stats["judgments"] == 10
    assert stats["precision"] == pytest.approx(0.8)
    assert stats["strict_precision"] == pytest.approx(0.5)
    assert stats["ci95"] == pytest.approx([0.4902, 0.9433], abs=5e-5)  # Wilson of 8/10


def test_precision_can_count_only_agreement():
    stats = group_stats(agree=5, partial=3, disagree=2, partial_counts_as_valid=False)
    assert stats["precision"] == pytest.approx(0.5)
    assert stats["strict_precision"] == pytest.approx(0.5)
    assert stats["ci95"] == pytest.approx(list(wilson_interval(5, 10)))


def test_empty_group_has_no_rates():
    stats = group_stats(0, 0, 0)
    assert stats == {
        "judgments": 0,
        "agree": 0,
        "partial": 0,
        "disagree": 0,
        "precision": None,
        "strict_precision": None,
        "ci95": None,
    }


def test_percent_agreement_is_the_mean_share_of_agreeing_pairs():
    items = [
        (2, 0, 0),  # 1 pair, agrees: 1
        (1, 0, 1),  # 1 pair, disagrees: 0
        (2, 1, 0),  # 3 pairs, 1 agrees: 1/3
    ]
    assert percent_agreement(items) == pytest.approx((1 + 0 + 1 / 3) / 3)
    assert percent_agreement([(1, 0, 0)]) is None  # one judgment: no pair
    assert percent_agreement([]) is None


def test_krippendorff_alpha_on_hand_computed_cases():
    # Perfect agreement on two different values: alpha = 1.
    assert krippendorff_alpha([(2, 0, 0), (0, 0, 2)]) == pytest.approx(1.0)
    # (a,a), (a,d): D_o = 2/4, D_e = 2*3*1/(4*3) = 0.5 -> alpha = 0.
    assert krippendorff_alpha([(2, 0, 0), (1, 0, 1)]) == pytest.approx(0.0)
    # (a,a), (a,a), (d,d), (a,d): D_o = 2/8, D_e = 2*5*3/(8*7) -> alpha = 1 - 14/30.
    items = [(2, 0, 0), (2, 0, 0), (0, 0, 2), (1, 0, 1)]
    assert krippendorff_alpha(items) == pytest.approx(16 / 30)
    # Items judged once are not pairable and change nothing.
    assert krippendorff_alpha([*items, (0, 1, 0)]) == pytest.approx(16 / 30)


def test_krippendorff_alpha_is_none_when_undefined():
    assert krippendorff_alpha([]) is None
    assert krippendorff_alpha([(1, 0, 0)]) is None  # nothing pairable
    assert krippendorff_alpha([(2, 0, 0), (3, 0, 0)]) is None  # one value only


# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: four
# observers, twelve units, values 1-5, missing data. Its published results: nominal
# alpha = 0.743, ordinal 0.815. Rows: units; columns: how many observers gave 1..5.
KRIPPENDORFF_2011 = [
    (3, 0, 0, 0, 0),
    (0, 3, 1, 0, 0),
    (0, 0, 4, 0, 0),
    (0, 0, 4, 0, 0),
    (0, 4, 0, 0, 0),
    (1, 1, 1, 1, 0),
    (0, 0, 0, 4, 0),
    (3, 1, 0, 0, 0),
    (0, 4, 0, 0, 0),
    (0, 0, 0, 0, 3),
    (2, 0, 0, 0, 0),
    (0, 0, 1, 0, 0),
]


def test_alpha_reproduces_krippendorffs_worked_example():
    assert krippendorff_alpha(KRIPPENDORFF_2011) == pytest.approx(0.743, abs=5e-4)
    assert krippendorff_alpha(KRIPPENDORFF_2011, "ordinal") == pytest.approx(0.815, abs=5e-4)


def test_ordinal_and_valid_alpha_by_hand():
    # Items (agree, agree), (partial, partial), (agree, disagree): n_a = 3, n_p = 2,
    # n_d = 1, n = 6; coincidences o_aa = 2, o_pp = 2, o_ad = o_da = 1.
    items = [(2, 0, 0), (0, 2, 0), (1, 0, 1)]
    # Ordinal distances (sum of the counts from c to k, minus half of n_c + n_k, squared):
    # d(a,p) = (5 - 2.5)^2 = 6.25, d(p,d) = (3 - 1.5)^2 = 2.25, d(a,d) = (6 - 2)^2 = 16.
    # D_o = 2 * 16 / 6; D_e = 2 * (3*2*6.25 + 2*1*2.25 + 3*1*16) / (6*5) = 6.
    assert krippendorff_alpha(items, "ordinal") == pytest.approx(1 - (32 / 6) / 6)
    # Nominal: D_o = 2/6, D_e = 2 * (3*2 + 2*1 + 3*1) / 30 = 22/30.
    assert krippendorff_alpha(items) == pytest.approx(1 - (2 / 6) / (22 / 30))
    # Valid vs not (partial valid): (v,v), (v,v), (v,n): D_o = 2/6 = D_e = 2*5*1/30: 0.
    assert valid_counts(items) == [(2, 0), (2, 0), (1, 1)]
    assert krippendorff_alpha(valid_counts(items)) == pytest.approx(0.0)
    # Partial not valid: (v,v), (n,n), (v,n): n_v = 3, n_n = 3; D_o = 2/6, D_e = 18/30.
    assert valid_counts(items, False) == [(2, 0), (0, 2), (1, 1)]
    assert krippendorff_alpha(valid_counts(items, False)) == pytest.approx(1 - (2 / 6) / 0.6)
    figures = agreement(items, partial_counts_as_valid=True)
    assert set(figures) == {
        "items_with_multiple",
        "percent_agreement",
        "krippendorff_alpha",
        "krippendorff_alpha_ordinal",
        "krippendorff_alpha_valid",
    }
    assert figures["krippendorff_alpha_ordinal"] == pytest.approx(1 / 9)
