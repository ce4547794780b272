"""Suggestion arms compared with a bootstrap interval of the difference, and the decoy
take rate with Wilson's interval: by hand, and on simulated studies with a known truth."""

from __future__ import annotations

import math
from statistics import mean

import numpy as np
import pytest

from app.analysis.arm_effects import (
    compare_arms,
    decoy_rate,
    decoy_rates,
    difference_ci,
    wilson_interval,
)

Z = 1.959963984540054


def _mean(values):
    return mean(values) if values else None


def test_wilson_interval_by_hand():
    # 3 of 10: (p + z^2/2n +- z sqrt(p(1 - p)/n + z^2/4n^2)) / (1 + z^2/n).
    p, n = 0.3, 10
    centre = p + Z * Z / (2 * n)
    spread = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n))
    expected = ((centre - spread) / (1 + Z * Z / n), (centre + spread) / (1 + Z * Z / n))
    assert wilson_interval(3, 10) == pytest.approx(expected)  # (0.108, 0.603)
    # None of 10 taken: the upper end is z^2 / (n + z^2), not 0 as the Wald interval says.
    assert wilson_interval(0, 10) == pytest.approx((0.0, Z * Z / (10 + Z * Z)))
    assert wilson_interval(0, 0) is None


def test_decoy_rate_json():
    assert decoy_rate(10, 3) == {
        "shown": 10,
        "taken": 3,
        "rate": {"value": 30.0, "ci95": pytest.approx([100 * x for x in wilson_interval(3, 10)])},
    }
    assert decoy_rate(0, 0)["rate"] == {"value": None, "ci95": None}
    with pytest.raises(ValueError):
        decoy_rate(2, 3)
    both = decoy_rates({"w1": (4, 1), "w2": (6, 2)})
    assert (both["shown"], both["taken"]) == (10, 3)
    assert both["per_worker"]["w2"]["rate"]["value"] == pytest.approx(100 * 2 / 6)


def test_decoys_are_taken_at_the_simulated_rate():
    # Done-when of issue 32: 20 workers each shown 10 decoys, taking each with probability
    # 0.3; the 95% interval of the take rate covers 30% in at least 90 of 100 studies.
    rng = np.random.default_rng(0)
    covered = 0
    for _ in range(100):
        taken = rng.binomial(10, 0.3, 20)
        rate = decoy_rates({f"w{i}": (10, int(t)) for i, t in enumerate(taken)})["rate"]
        covered += rate["ci95"][0] <= 30 <= rate["ci95"][1]
    assert covered >= 90


def test_documents_are_resampled_with_both_arms():
    # The show arm reads every document 5 points higher: paired resampling of documents
    # gives exactly 5, however much documents differ from each other.
    documents = [{"show": [v + 5.0], "none": [v]} for v in (10.0, 80.0, 35.0, 60.0)]

    def score(arm_documents):
        return _mean([value for readings in arm_documents for value in readings])

    assert difference_ci(documents, score) == {"value": pytest.approx(5.0), "ci95": [5.0, 5.0]}
    assert difference_ci(documents[:1], score)["ci95"] is None


def test_compare_arms_json():
    documents = [
        {"show": {"accepted": 3, "shown": 4, "score": 90.0}, "none": {"score": 80.0}},
        {"show": {"accepted": 1, "shown": 4, "score": 70.0}, "none": {"score": 75.0}},
        {"none": {"score": 60.0}},  # read only in the none arm
    ]

    def accepted(arm_documents):
        shown = sum(d.get("shown", 0) for d in arm_documents)
        return 100 * sum(d.get("accepted", 0) for d in arm_documents) / shown if shown else None

    def booookscore(arm_documents):
        return _mean([d["score"] for d in arm_documents])

    report = compare_arms(documents, {"accepted": accepted, "booookscore": booookscore})
    assert report["arms"] == {
        "show": {"accepted": 50.0, "booookscore": 80.0},
        "none": {"accepted": None, "booookscore": pytest.approx(215 / 3)},
    }
    assert report["difference"]["booookscore"]["value"] == pytest.approx(80 - 215 / 3)
    low, high = report["difference"]["booookscore"]["ci95"]
    assert low <= 80 - 215 / 3 <= high
    assert report["difference"]["accepted"] == {"value": None, "ci95": None}


def test_the_difference_interval_covers_the_simulated_effect():
    # Suggestions add 0.05 errors per sentence: per document, the show arm's rate is the
    # none arm's plus 0.05, each reading with its own noise. The 95% interval of the
    # difference covers 0.05 in at least 90 of 100 studies.
    rng = np.random.default_rng(0)
    covered = 0
    for _ in range(100):
        base = rng.uniform(0.1, 0.5, 50)
        documents = [
            {"show": b + 0.05 + rng.normal(0, 0.05, 2), "none": b + rng.normal(0, 0.05, 2)}
            for b in base
        ]

        def rate(arm_documents):
            return float(np.mean(np.concatenate(arm_documents)))

        low, high = difference_ci(documents, rate, resamples=400)["ci95"]
        covered += low <= 0.05 <= high
    assert covered >= 90
