"""Capture-recapture estimates of the errors nobody found: Chapman's and Chao's formulas
on textbook numbers, model M_t against Darroch's equations, the JSON shape, and simulated
studies whose true number of errors is known."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import brentq

from app.analysis.matching import Mark
from app.analysis.recall import (
    CHAO,
    DocumentCaptures,
    Estimate,
    captures_of,
    chao,
    chapman,
    frequencies,
    log_normal_ci,
    loglinear_mt,
    planted_check,
    recall_estimate,
)
from tests.support.simulated_studies import capture_study

Z = 1.959963984540054


def _doc(document_id, readers, *finders, category="a"):
    return DocumentCaptures(
        document_id, frozenset(readers), tuple((category, frozenset(f)) for f in finders)
    )


def test_chapman_on_the_textbook_turtles():
    # The classic mark-recapture example: 10 marked, 15 caught later, 5 of them marked.
    estimate = chapman(10, 15, 5)
    assert estimate.found == 20
    assert estimate.estimated == pytest.approx(11 * 16 / 6 - 1)  # 28.33
    # Seber (1982, p. 60): (n1+1)(n2+1)(n1-m)(n2-m) / ((m+1)^2 (m+2))
    assert estimate.variance == pytest.approx(11 * 16 * 5 * 10 / (6**2 * 7))  # 34.92
    missed = 11 * 16 / 6 - 1 - 20
    factor = math.exp(Z * math.sqrt(math.log(1 + (8800 / 252) / missed**2)))
    assert log_normal_ci(estimate) == pytest.approx((20 + missed / factor, 20 + missed * factor))
    with pytest.raises(ValueError):
        chapman(3, 4, 5)


def test_chao_on_the_cottontail_rabbits():
    # Edwards & Eberhardt (1967): 76 rabbits caught on 18 nights, f_1..f_7 =
    # 43, 16, 8, 6, 0, 2, 1 (the enclosed population was 135).
    histories = (
        [frozenset({0})] * 43
        + [frozenset({0, 1})] * 16
        + [frozenset(range(3))] * 8
        + [frozenset(range(4))] * 6
        + [frozenset(range(6))] * 2
        + [frozenset(range(7))]
    )
    f = frequencies(histories)
    assert (f[1], f[2], f[5], sum(f.values())) == (43, 16, 0, 76)
    estimate = chao(f)
    assert estimate.estimated == pytest.approx(76 + 43**2 / (2 * 16))  # 133.78
    a = 43 / 16
    assert estimate.variance == pytest.approx(16 * (a**4 / 4 + a**3 + a**2 / 2))  # 577.0
    low, high = log_normal_ci(estimate)
    assert 76 < low < 133.78 < high
    assert low < 135 < high
    assert chao(frequencies([frozenset({0}), frozenset({1})])) is None  # no f2


def test_log_normal_interval_without_missed_errors_is_the_errors_found():
    assert log_normal_ci(Estimate(12, 12.0, 0.0)) == (12.0, 12.0)


def test_two_annotators_under_mt_is_lincoln_petersen():
    # n1 = 6, n2 = 4, m = 3 on one document: N = n1 n2 / m = 8, variance N q1 q2 / (p1 p2).
    doc = _doc(1, "AB", "A", "A", "A", "AB", "AB", "AB", "B")
    fit = loglinear_mt([doc])
    assert fit.study.found == 7
    assert fit.study.estimated == pytest.approx(8)
    p_a, p_b = 6 / 8, 4 / 8
    assert fit.probabilities == pytest.approx({"A": p_a, "B": p_b})
    assert fit.study.variance == pytest.approx(8 * (1 - p_a) * (1 - p_b) / (p_a * p_b))


def test_three_annotators_solve_darrochs_equation_with_darrochs_variance():
    finders = ["A"] * 5 + ["B"] * 3 + ["C"] * 2 + ["AB"] * 6 + ["AC"] * 4 + ["BC"] * 2 + ["ABC"] * 5
    doc = _doc(1, "ABC", *finders)
    caught = {a: sum(a in f for f in finders) for a in "ABC"}  # 20, 16, 13
    found = len(finders)

    def darroch(size):
        return 1 - found / size - math.prod(1 - n / size for n in caught.values())

    expected = brentq(darroch, found + 1e-9, 10_000)
    fit = loglinear_mt([doc])
    assert fit.study.estimated == pytest.approx(expected, rel=1e-9)
    q = [1 - caught[a] / expected for a in "ABC"]
    variance = expected / (1 / math.prod(q) + 3 - 1 - sum(1 / x for x in q))
    assert fit.study.variance == pytest.approx(variance, rel=1e-6)


def test_different_workers_on_different_documents_share_their_probabilities():
    first = _doc("d1", "ABC", "A", "AB", "ABC", "BC", "C", "AC", "B")
    second = _doc("d2", "BCD", "B", "BD", "BCD", "D", "CD", "C", "BC", "D")
    fit = loglinear_mt([first, second])
    p = fit.probabilities
    sizes = [e.estimated for e in fit.documents]
    # Darroch's equations at the solution: N_d = S_d / (1 - prod q_j), p_j = n_j / sum N_d.
    for doc, size in zip((first, second), sizes, strict=True):
        missed_by_all = math.prod(1 - p[a] for a in doc.readers)
        assert size == pytest.approx(len(doc.errors) / (1 - missed_by_all))
    assert p["A"] == pytest.approx(4 / sizes[0])
    assert p["B"] == pytest.approx((4 + 4) / (sizes[0] + sizes[1]))
    assert fit.study.estimated == pytest.approx(sum(sizes))
    assert fit.study.variance > max(e.variance for e in fit.documents) - 1e-9


def test_without_an_error_found_twice_there_is_no_estimate():
    # Three workers, three errors, no overlap: M_t's estimate is infinite, not a number.
    lonely = _doc(1, "ABC", "A", "B", "C")
    assert loglinear_mt([lonely]) is None
    assert recall_estimate([lonely])["study"] == {
        "found": 3,
        "estimated": None,
        "ci95": None,
        "share_found": None,
    }
    assert recall_estimate([_doc(1, "ABC")])["study"]["estimated"] is None  # nothing found


def test_recall_estimate_json():
    readings = {
        "ann": [Mark(0, 0, 10, "a"), Mark(0, 20, 30, "b"), Mark(1, 0, 8, "a")],
        "bob": [Mark(0, 1, 10, "a"), Mark(1, 0, 8, "a")],
    }
    one = captures_of("doc-1", readings)
    two = captures_of("doc-2", {"ann": [Mark(0, 0, 9, "a")], "bob": [Mark(0, 0, 9, "a")]})
    lone = captures_of("doc-3", {"cyd": [Mark(0, 0, 5, "a")]})
    report = recall_estimate([one, two, lone])
    assert report["method"] == "chapman"
    first, second, third = report["documents"]
    assert first["document_id"] == "doc-1" and first["found"] == 3
    # ann found 3, bob 2, both 2: Chapman = 4 * 3 / 3 - 1 = 3.
    assert first["estimated"] == pytest.approx(3.0)
    assert first["share_found"] == pytest.approx(100.0)
    assert second["estimated"] == pytest.approx(2 * 2 / 2 - 1)
    assert third == {
        "document_id": "doc-3",
        "found": 1,
        "estimated": None,
        "ci95": None,
        "share_found": None,
    }
    study = report["study"]
    assert study["found"] == 4  # the single-reader document is left out
    assert study["estimated"] == pytest.approx(3.0 + 1.0)
    assert set(report["per_category"]) == {"a", "b"}
    assert report["per_category"]["b"]["found"] == 1
    assert report["planted"] is None
    assert recall_estimate([one, two], method=CHAO)["method"] == "chao"
    with pytest.raises(ValueError, match="unknown method"):
        recall_estimate([one], method="guess")


def test_planted_errors_report_the_estimate_beside_their_number():
    doc = _doc("p", "ABC", "AB", "ABC", "A", "BC", "AC")
    check = planted_check(5, [doc])
    assert check["planted"] == 5
    assert check["estimated"] >= 5
    assert check["ci95"][0] <= check["estimated"] <= check["ci95"][1]


def test_the_study_interval_covers_the_true_number_of_errors():
    # Done-when of issue 32: 3 annotators finding each error with probability 0.3-0.8,
    # 5-30 errors per document, marks grouped into connected components; the 95%
    # interval of the study's estimate covers the truth in at least 90 of 100 studies.
    rng = np.random.default_rng(0)
    covered = 0
    widths = []
    for _ in range(100):
        truth, captures = capture_study(rng, annotators=3)
        study = recall_estimate(captures)["study"]
        low, high = study["ci95"]
        covered += low <= truth <= high
        widths.append((high - low) / truth)
    assert covered >= 90
    assert np.mean(widths) < 0.2  # informative, not a trivially wide interval


def test_with_two_annotators_chapman_covers_the_truth():
    rng = np.random.default_rng(1)
    covered = 0
    for _ in range(100):
        truth, captures = capture_study(rng, annotators=2)
        report = recall_estimate(captures)
        assert report["method"] == "chapman"
        low, high = report["study"]["ci95"]
        covered += low <= truth <= high
    assert covered >= 90


def test_chaos_bound_overestimates_when_only_the_annotators_differ():
    # The limit docs/analyses.md states: with errors equally hard and annotators of unequal
    # skill (model M_t), Chao's M_h bound is too high on average; M_t is not.
    rng = np.random.default_rng(11)
    chao_bias, mt_bias = [], []
    for _ in range(20):
        truth, captures = capture_study(rng, annotators=3)
        chao_bias.append(recall_estimate(captures, CHAO)["study"]["estimated"] - truth)
        mt_bias.append(recall_estimate(captures)["study"]["estimated"] - truth)
    assert np.mean(chao_bias) > 5
    assert abs(np.mean(mt_bias)) < 5
