"""The judge's precision, recall and F1 against humans on a tiny hand example: overall,
per category, per human, humans against each other, severity-weighted, and by sentence."""

from __future__ import annotations

import numpy as np
import pytest

from app.analysis.judge import (
    human_counts,
    judge_counts,
    judge_report,
    scores_with_ci,
    sentence_marks,
)
from app.analysis.matching import Mark

READINGS = {
    "d1": {
        "gpt": [Mark(0, 0, 10, "a"), Mark(0, 20, 30, "b"), Mark(1, 0, 5, "a")],
        "ann": [Mark(0, 1, 10, "a"), Mark(1, 40, 50, "a")],
        "bob": [Mark(0, 0, 10, "a"), Mark(0, 20, 30, "b")],
    },
    "d2": {"gpt": [], "ann": [Mark(0, 0, 5, "a")], "bob": []},
    "d3": {"ann": [Mark(0, 0, 5, "a")], "bob": [Mark(0, 0, 5, "a")]},  # the judge skipped it
}


def _values(scores):
    return {name: scores[name]["value"] for name in ("precision", "recall", "f1")}


def test_overall_by_hand():
    # d1 against ann: 1 of the judge's 3 spans matched, 1 of ann's 2; against bob: 2 of 3
    # and 2 of 2. d2: ann's one span missed. d3 has no judge reading.
    counts = judge_counts(READINGS, "gpt")
    assert counts.tolist() == [[3, 6, 3, 4], [0, 0, 0, 1]]
    report = judge_report(READINGS, "gpt", min_instances=1)
    assert report["documents"] == 2 and report["humans"] == 2
    assert _values(report["overall"]) == pytest.approx(
        {"precision": 50.0, "recall": 60.0, "f1": 2 * 50 * 60 / 110}
    )


def test_per_category_and_per_human_by_hand():
    report = judge_report(READINGS, "gpt", min_instances=1)
    assert _values(report["per_category"]["a"]) == pytest.approx(
        {"precision": 50.0, "recall": 50.0, "f1": 50.0}
    )
    # b: the judge's one span matches bob's and not ann's (ann marked no b).
    assert _values(report["per_category"]["b"]) == pytest.approx(
        {"precision": 50.0, "recall": 100.0, "f1": 2 * 50 * 100 / 150}
    )
    assert _values(report["per_human"]["ann"]) == pytest.approx(
        {"precision": 100 / 3, "recall": 100 / 3, "f1": 100 / 3}
    )
    assert _values(report["per_human"]["bob"]) == pytest.approx(
        {"precision": 200 / 3, "recall": 100.0, "f1": 80.0}
    )


def test_humans_against_each_other_both_ways():
    # d1: ann and bob share one of their two spans each, both orders: 2 of 4, 2 of 4;
    # d2: ann's span unmatched both ways; d3: they agree (1 of 1, both orders).
    assert human_counts(READINGS, "gpt").tolist() == [[2, 4, 2, 4], [0, 1, 0, 1], [2, 2, 2, 2]]
    report = judge_report(READINGS, "gpt", min_instances=1)
    assert report["human_human"]["f1"]["value"] == pytest.approx(100 * 4 / 7)
    lone = {"d1": {"gpt": [], "ann": []}}
    assert judge_report(lone, "gpt")["human_human"] is None


def test_severity_weighted_counts_a_major_error_more():
    readings = {
        "d1": {
            "gpt": [Mark(0, 0, 10, "a", 1.0)],
            "ann": [Mark(0, 0, 10, "a", 1.0), Mark(0, 30, 40, "a", 5.0)],
        }
    }
    plain = judge_report(readings, "gpt", min_instances=1)
    weighted = judge_report(readings, "gpt", weighted=True, min_instances=1)
    assert plain["overall"]["recall"]["value"] == pytest.approx(50.0)
    assert weighted["overall"]["recall"]["value"] == pytest.approx(100 / 6)
    assert weighted["weighted"] is True


def test_sentence_unit_matches_by_sentence():
    sentences = {"d1": [(0, 0, 40), (0, 41, 80)]}
    readings = {
        "d1": {
            "gpt": [Mark(0, 0, 40, "a")],  # a whole sentence, as GPT-4 marks in BooookScore
            "ann": [Mark(0, 5, 12, "a")],  # a short span inside it
        }
    }
    spans = judge_report(readings, "gpt", min_instances=1)
    assert spans["overall"]["f1"]["value"] == 0.0  # IoU 7/40 < 0.5
    by_sentence = judge_report(readings, "gpt", "sentence", sentences, min_instances=1)
    assert by_sentence["unit"] == "sentence"
    assert _values(by_sentence["overall"]) == pytest.approx(
        {"precision": 100.0, "recall": 100.0, "f1": 100.0}
    )
    with pytest.raises(ValueError, match="sentences"):
        judge_report(readings, "gpt", "sentence")


def test_a_span_over_two_sentences_is_two_units():
    units = sentence_marks(
        [Mark(0, 30, 50, "a", 2.0), Mark(0, 35, 39, "a", 5.0)], [(0, 0, 40), (0, 41, 80)]
    )
    assert sorted(units) == [Mark(0, 0, 40, "a", 5.0), Mark(0, 41, 80, "a", 2.0)]


def test_intervals_resample_documents():
    counts = np.array([[1, 2, 1, 2], [3, 3, 3, 4], [0, 1, 0, 2]], dtype=float)
    scores = scores_with_ci(counts)
    for figure in scores.values():
        low, high = figure["ci95"]
        assert low <= figure["value"] <= high
    assert scores_with_ci(counts[:1])["f1"]["ci95"] is None  # one document: no interval
    same = scores_with_ci(np.array([[1, 2, 1, 2]] * 4, dtype=float))
    assert same["precision"]["ci95"] == [50.0, 50.0]


def test_the_alt_test_needs_three_humans():
    report = judge_report(READINGS, "gpt")
    assert report["alt_test"] is None
    assert "at least 3" in report["alt_test_reason"]
