"""Payment sheets (app.interop.payments) for a simulated study, bonuses worked out by hand."""

from __future__ import annotations

import csv
import io
from decimal import Decimal

import pytest

from app.interop.payments import (
    MTURK_REJECT_REASON,
    BonusRule,
    decide_all,
    payment_sheets,
    request_token,
    summary,
)
from app.interop.records import InteropError

# 0.05 per validated annotation, 0.20 per planted error found, at most 2.00.
RULE = {"per_validated": 0.05, "per_planted": "0.20", "cap": 2, "currency": "GBP"}
HOSTILE = '=HYPERLINK("http://evil.example","pay me")'


def prolific(worker_id, outcome, validated=0, planted=0, flagged=False, role="annotator"):
    return {"platform": "prolific", "worker_id": worker_id, "outcome": outcome,
            "flagged": flagged, "validated": validated, "planted_found": planted,
            "role": role}  # fmt: skip


def mturk(worker_id, assignment, outcome, validated=0, planted=0, flagged=False, hit="HIT1"):
    return {"platform": "mturk", "worker_id": worker_id, "assignment_id": assignment,
            "hit_id": hit, "outcome": outcome, "flagged": flagged, "validated": validated,
            "planted_found": planted}  # fmt: skip


def study() -> list[dict]:
    """Every case of the outcome table, on both platforms, as the study day leaves them."""
    return [
        prolific("5f0000000000000000000001", "completed", validated=12, planted=2),  # 1.00
        prolific("5f0000000000000000000002", "completed", validated=3, flagged=True),  # review
        prolific("5f0000000000000000000003", "failed_checks", validated=5),  # review, 0.25
        prolific("5f0000000000000000000004", "failed_training", validated=4),  # screen out
        prolific("5f0000000000000000000005", "no_consent"),  # return
        prolific("5f0000000000000000000006", None, validated=9),  # open
        prolific("5f0000000000000000000007", "completed", validated=30, planted=5),  # cap 2.00
        prolific("5f0000000000000000000008", "completed"),  # approve, no bonus
        prolific(HOSTILE, "completed", validated=40),  # an id no platform gives
        prolific("5f00000000000000000000aa", "completed", planted=1, role="validator"),  # 0.20
        mturk("A1WORKERONE", "3ASSIGN000000000000000000000001", "completed", validated=7),
        mturk("A1WORKERONE", "3ASSIGN000000000000000000000002", "completed", planted=11),
        mturk("A2WORKERTWO", "3ASSIGN000000000000000000000003", "failed_training"),
        mturk("A3WORKERTHREE", "3ASSIGN000000000000000000000004", "failed_checks"),
        mturk("A4WORKERFOUR", "3ASSIGN000000000000000000000005", "no_consent"),
        mturk("A5WORKERFIVE", None, "completed"),
        mturk("-2+3", "3ASSIGN000000000000000000000006", "completed"),
    ]


def test_prolific_sheets_list_every_worker_under_the_right_outcome_and_bonus():
    files = payment_sheets(study(), platform="prolific", rule=BonusRule.from_settings(RULE))
    assert sorted(files) == [
        "decisions.csv",
        "prolific-bulk-approve.txt",
        "prolific-bulk-bonus.txt",
    ]
    assert files["prolific-bulk-approve.txt"] == (
        "5f0000000000000000000001\n"
        "5f0000000000000000000007\n"
        "5f0000000000000000000008\n"
        "5f00000000000000000000aa\n"
    )
    # 12 x 0.05 + 2 x 0.20 = 1.00; 30 x 0.05 + 5 x 0.20 = 2.50 -> cap 2.00; 1 x 0.20.
    assert files["prolific-bulk-bonus.txt"] == (
        "5f0000000000000000000001,1.00\n"
        "5f0000000000000000000007,2.00\n"
        "5f00000000000000000000aa,0.20\n"
    )
    rows = list(csv.DictReader(io.StringIO(files["decisions.csv"])))
    decided = {r["worker_id"]: (r["decision"], r["bonus"], r["bonus_paid_now"]) for r in rows}
    assert decided == {
        "5f0000000000000000000001": ("approve", "1.00", "1.00"),
        "5f0000000000000000000002": ("review", "0.15", "0.00"),
        "5f0000000000000000000003": ("review", "0.25", "0.00"),
        "5f0000000000000000000004": ("screen_out", "0.00", "0.00"),
        "5f0000000000000000000005": ("return", "0.00", "0.00"),
        "5f0000000000000000000006": ("open", "0.00", "0.00"),
        "5f0000000000000000000007": ("approve", "2.00", "2.00"),
        "5f0000000000000000000008": ("approve", "0.00", "0.00"),
        "'" + HOSTILE: ("review", "2.00", "0.00"),  # neutralised, and kept off the sheets
        "5f00000000000000000000aa": ("approve", "0.20", "0.20"),
    }
    reasons = {r["worker_id"]: r["reason"] for r in rows}
    assert reasons["5f0000000000000000000002"].startswith("completed, but flagged")
    assert reasons["'" + HOSTILE] == "the worker id is not a plain prolific id: check it by hand"
    assert {r["currency"] for r in rows} == {"GBP"}
    assert rows[-1]["role"] == "validator"
    assert HOSTILE not in files["prolific-bulk-approve.txt"] + files["prolific-bulk-bonus.txt"]


def test_mturk_sheets_approve_reject_and_list_bonuses_for_the_api():
    rule = BonusRule.from_settings(RULE | {"currency": "USD"})
    files = payment_sheets(study(), platform="mturk", rule=rule)
    assert files["mturk-batch-results.csv"] == (
        "HITId,AssignmentId,WorkerId,Approve,Reject\n"
        "HIT1,3ASSIGN000000000000000000000001,A1WORKERONE,x,\n"
        "HIT1,3ASSIGN000000000000000000000002,A1WORKERONE,x,\n"
        f"HIT1,3ASSIGN000000000000000000000003,A2WORKERTWO,,{MTURK_REJECT_REASON}\n"
    )
    decisions = decide_all(study(), "mturk", rule)
    tokens = [request_token(d) for d in decisions if d.paid_bonus > 0]
    # 7 x 0.05 = 0.35; 11 x 0.20 = 2.20 -> cap 2.00.
    assert files["mturk-bonuses.csv"] == (
        "WorkerId,AssignmentId,BonusAmount,Reason,UniqueRequestToken\n"
        "A1WORKERONE,3ASSIGN000000000000000000000001,0.35,Bonus for quality: 7 validated "
        f"annotations x 0.05 USD + 0 planted errors found x 0.20 USD (at most 2 USD),{tokens[0]}\n"
        "A1WORKERONE,3ASSIGN000000000000000000000002,2.00,Bonus for quality: 0 validated "
        f"annotations x 0.05 USD + 11 planted errors found x 0.20 USD (at most 2 USD),{tokens[1]}\n"
    )
    assert len(set(tokens)) == 2 and all(len(t) <= 64 for t in tokens)
    assert tokens == [request_token(d) for d in decide_all(study(), "mturk", rule) if d.paid_bonus]
    decided = {(d.worker_id, d.assignment_id): (d.decision, d.reason) for d in decisions}
    assert decided[("A3WORKERTHREE", "3ASSIGN000000000000000000000004")][0] == "review"
    assert decided[("A4WORKERFOUR", "3ASSIGN000000000000000000000005")][0] == "return"
    assert decided[("A5WORKERFIVE", None)] == (
        "review",
        "no MTurk assignment id was recorded: decide on the MTurk site",
    )
    assert decided[("-2+3", "3ASSIGN000000000000000000000006")][0] == "review"
    assert "'-2+3" in files["decisions.csv"] and "\n-2+3" not in files["decisions.csv"]
    assert summary(decisions) == {"approve": 2, "review": 3, "screen_out": 1, "return": 1,
                                  "open": 0}  # fmt: skip


def test_bonuses_round_half_up_to_cents_and_the_cap_is_optional():
    rule = BonusRule.from_settings({"per_validated": "0.125", "currency": "EUR"})
    assert rule.amount(1, 0) == Decimal("0.13")
    assert rule.amount(1000, 9) == Decimal("125.00")
    assert BonusRule.from_settings(None).amount(50, 50) == Decimal("0.00")


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"per_validated": -1, "currency": "GBP"}, "bonus.per_validated: must be an amount"),
        ({"per_planted": "lots", "currency": "GBP"}, "bonus.per_planted: 'lots' is not an"),
        ({"per_planted": float("nan"), "currency": "GBP"}, "bonus.per_planted: must be"),
        ({"per_validated": 0.1}, "bonus.currency: the study's currency as 3 capitals"),
        ({"per_validated": 0.1, "currency": "£"}, "bonus.currency: the study's currency"),
        ({"per_validated": 0.1, "currency": "GBP", "tip": 1}, "bonus: unknown keys tip"),
    ],
)
def test_a_bad_bonus_rule_is_refused_naming_the_key(settings, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(".", r"\.")):
        BonusRule.from_settings(settings)


def test_mturk_pays_in_dollars_only():
    with pytest.raises(ValueError, match="MTurk pays bonuses in USD"):
        decide_all(study(), "mturk", BonusRule.from_settings(RULE))


def test_the_same_worker_or_assignment_twice_and_malformed_rows_are_refused():
    rows = [
        prolific("5f0000000000000000000001", "completed"),
        prolific("5f0000000000000000000001", "completed"),
        prolific("5f0000000000000000000009", "finished", validated=-1),
        {"platform": "prolific", "outcome": "completed"},
    ]
    with pytest.raises(InteropError) as caught:
        decide_all(rows, "prolific", BonusRule())
    assert [str(p) for p in caught.value.problems] == [
        "row 2: the same worker as row 1: one row each",
        "row 3: outcome: 'finished' is not an outcome",
        "row 3: validated: must be a whole number of 0 or more",
        "row 4: worker_id: must be the worker's id",
    ]
    twice = [mturk("A1", "3X", "completed"), mturk("A2", "3X", "completed")]
    with pytest.raises(InteropError, match="row 2: the same assignment as row 1"):
        decide_all(twice, "mturk", BonusRule())
