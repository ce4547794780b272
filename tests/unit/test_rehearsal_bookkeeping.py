"""The study rehearsal's bookkeeping (tests/support/rehearsal.py), without servers: the Poisson
arrival schedule, the planned outcomes, latencies inside and outside the fault windows,
and the reconciliation of acknowledged saves with the stored rows."""

from __future__ import annotations

import random
import statistics

import pytest

from tests.support.rehearsal import (
    Ledger,
    Request,
    plan_outcomes,
    poisson_arrivals,
    quota_report,
    reconcile,
)


def test_arrivals_are_a_poisson_process_over_the_window():
    times = poisson_arrivals(4000, 600, random.Random(1))
    assert len(times) == 4000 and times == sorted(times)
    assert times[0] >= 0 and times[-1] < 600
    gaps = [b - a for a, b in zip([0.0, *times], times, strict=False)]
    mean = statistics.fmean(gaps)
    # Exponential gaps: mean 600 / 4000, standard deviation equal to the mean (evenly
    # spaced arrivals would have none; bursts of arrivals would have far more).
    assert mean == pytest.approx(0.15, rel=0.05)
    assert statistics.pstdev(gaps) / mean == pytest.approx(1.0, abs=0.08)
    # Uniform over the window: about as many in each half.
    assert sum(t < 300 for t in times) == pytest.approx(2000, abs=130)
    assert poisson_arrivals(50, 60, random.Random(7)) == poisson_arrivals(50, 60, random.Random(7))


def test_planned_outcomes_are_exact_counts():
    plans = plan_outcomes(600, {"no_consent": 0.03, "failed_training": 0.10}, random.Random(3))
    assert len(plans) == 600
    assert (plans.count("no_consent"), plans.count("failed_training")) == (18, 60)
    assert plans.count("completed") == 522
    assert plans[:78] != ["no_consent"] * 18 + ["failed_training"] * 60  # shuffled
    with pytest.raises(ValueError, match="more than every worker"):
        plan_outcomes(10, {"no_consent": 0.6, "failed_training": 0.6}, random.Random(3))


def test_fault_windows_split_latencies_and_errors():
    ledger = Ledger()
    window = ledger.open_window(10.0)
    ledger.close_window(window, 20.0)
    outside = [Request("save", float(t), 0.010 + t / 1000, 201) for t in range(30, 130)]
    caught = Request("save", 9.5, 1.0, 201)  # waiting when the fault struck
    during = Request("save", 15.0, 2.0, 201)
    after = Request("save", 20.5, 0.5, 201)  # started after the window closed
    failed = Request("save", 12.0, 0.3, 502, "502")
    for request in [*outside, caught, during, after, failed]:
        ledger.record(request)
    figures = ledger.figures()["save"]
    assert figures["inside"] == (2, 2000.0, 2000.0)
    n, p50, p99 = figures["outside"]
    assert n == 101  # errors are not latencies
    assert p50 == pytest.approx(90.0) and p99 == pytest.approx(139.0)
    assert ledger.errors_by_kind() == {("save", "inside", "502"): 1}
    # A window still open (the service not back yet) takes every later request.
    ledger.open_window(200.0)
    ledger.record(Request("move", 500.0, 0.01, 200))
    assert ledger.figures()["move"]["inside"][0] == 1


def test_reconciliation_finds_lost_duplicated_and_wrongly_removed_saves():
    acknowledged = {"t1": {"a", "b", "c"}, "t2": {"d"}}
    removed = {"t1": {"b"}}
    stored = [
        ("t1", "a", False),
        ("t1", "b", True),
        ("t1", "c", True),  # never removed by its worker
        ("t2", "d", False),
        ("t2", "d", False),  # twice
        ("t2", "e", False),  # a save the client gave up on, stored after all
    ]
    result = reconcile(acknowledged, removed, stored)
    assert (result.acknowledged, result.lost, result.duplicated) == (4, 0, 1)
    assert (result.unacknowledged, result.removal_wrong) == (1, 1)
    lost = reconcile(acknowledged, removed, [("t1", "a", False), ("t1", "b", True)])
    assert (lost.lost, lost.duplicated, lost.removal_wrong) == (2, 0, 0)
    clean = reconcile(acknowledged, removed, [*stored[:2], ("t1", "c", False), stored[3]])
    assert clean == type(clean)(4, 0, 0, 0, 0)


def test_quota_report_names_documents_over_their_places():
    over, spread = quota_report({"d1": 3, "d2": 4, "d3": 2, "d4": 3}, 3)
    assert over == ["d2"]
    assert spread == {3: 2, 4: 1, 2: 1}
