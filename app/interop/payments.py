"""Who to pay: approve, review, screen out or return, and the sheets Prolific and MTurk take.

Platforms' references: Prolific's help on bonus payments and bulk actions
(https://researcher-help.prolific.co/hc/en-gb/articles/360009222573-Bonus-payments);
MTurk's Requester UI guide, "Reviewing Assignments Offline" (the batch results CSV with
its Approve and Reject columns,
https://docs.aws.amazon.com/AWSMechTurk/latest/RequesterUI/ReviewingResultsOutsideoftheRUI.html)
and the SendBonus API (https://docs.aws.amazon.com/AWSMechTurk/latest/AWSMturkAPI/ApiReference_SendBonusOperation.html).

Pure rules on plain per-worker rows (annotators and validators alike); ``flask payments
--platform prolific|mturk --output DIR`` and the researcher's download write the files
(`payment_sheets`). Nothing is sent to a platform: docs/interop.md says where each sheet
is pasted or uploaded.

A row: ``{"platform": "prolific" | "mturk", "worker_id", "outcome": "completed" |
"failed_checks" | "failed_training" | "no_consent" | None, "flagged": bool, "validated":
int, "planted_found": int, "assignment_id"?, "hit_id"?, "role"?: "annotator" |
"validator"}``. ``validated`` counts the worker's annotations that a validator judged
agree or partially agree; ``planted_found`` the planted errors they found.

The decision follows the outcome (app.rules.outcomes): completed -> approve, failed_checks ->
review, failed_training -> screen out, no_consent -> return; a completed worker whom the
attention checks flagged (left out of the figures) -> review; no outcome yet -> open (in
no sheet). A bonus (BonusRule, the study settings' ``bonus:``) is per validated
annotation plus per planted error found, capped, in the study's currency, rounded half
up to cents; it goes on the bonus sheet of approved workers only (decisions.csv shows
what a reviewed worker would get once approved).

Sheets: Prolific's bulk approve (one participant id a line) and bulk bonus
(``participant_id,amount`` a line, no header, amount with 2 decimals in the study's
currency); MTurk's batch results columns (HITId, AssignmentId, WorkerId, ``Approve``: x,
``Reject``: the reason shown to the worker; only screened-out workers are rejected,
review and return rows stay blank for the researcher) and a bonus list for the SendBonus
API (WorkerId, AssignmentId, BonusAmount in USD, Reason, UniqueRequestToken so that a
second run cannot pay twice): MTurk has no bulk bonus upload. decisions.csv lists every
worker with the decision and why.

Worker ids come from URL parameters: never trusted. An id that is not a plain platform id
(letters, digits, ``_`` and ``-``, starting with a letter or digit: no formula, comma,
quote or line break can pass) goes to review and into no platform sheet; in
decisions.csv every text cell is neutralised (app.rules.csv_safety).
"""

from __future__ import annotations

import csv
import hashlib
import io
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

from app.interop.records import InteropError, Problem
from app.rules.csv_safety import safe_cell

PLATFORMS = ("prolific", "mturk")
DECISIONS = ("approve", "review", "screen_out", "return", "open")
OUTCOME_DECISIONS = {
    "completed": "approve",
    "failed_checks": "review",
    "failed_training": "screen_out",
    "no_consent": "return",
}
REASONS = {
    "approve": "completed the study",
    "review": "failed the attention checks (outcome failed_checks): decide by hand",
    "screen_out": "did not pass the training (outcome failed_training)",
    "return": "declined consent (outcome no_consent): no work done; ask for a return",
    "open": "no outcome yet (still working, or abandoned): in no sheet",
    "flagged": "completed, but flagged by the attention checks (left out of the figures): "
    "decide by hand",
    "bad_id": "the worker id is not a plain {platform} id: check it by hand",
    "no_assignment": "no MTurk assignment id was recorded: decide on the MTurk site",
}
MTURK_REJECT_REASON = "Did not pass the training required before the task."
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$")
_CURRENCY = re.compile(r"^[A-Z]{3}$")
CENT = Decimal("0.01")
FILES = {
    "prolific": ("prolific-bulk-approve.txt", "prolific-bulk-bonus.txt", "decisions.csv"),
    "mturk": ("mturk-batch-results.csv", "mturk-bonuses.csv", "decisions.csv"),
}


def _money(value: Any, name: str) -> Decimal:
    try:
        amount = Decimal(str(value))
    except InvalidOperation:
        raise ValueError(f"bonus.{name}: {value!r} is not an amount") from None
    if not amount.is_finite() or amount < 0:
        raise ValueError(f"bonus.{name}: must be an amount of 0 or more")
    return amount


@dataclass(frozen=True)
class BonusRule:
    """Per validated annotation, per planted error found, a cap (None: none), a currency."""

    per_validated: Decimal = Decimal(0)
    per_planted: Decimal = Decimal(0)
    cap: Decimal | None = None
    currency: str | None = None

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any] | None) -> BonusRule:
        """The study settings' ``bonus: {per_validated, per_planted, cap, currency}``
        (None: no bonus). ValueError names the key at fault."""
        if not settings:
            return cls()
        unknown = set(settings) - {"per_validated", "per_planted", "cap", "currency"}
        if unknown:
            raise ValueError(f"bonus: unknown keys {', '.join(sorted(unknown))}")
        rule = cls(
            _money(settings.get("per_validated", 0), "per_validated"),
            _money(settings.get("per_planted", 0), "per_planted"),
            None if settings.get("cap") is None else _money(settings["cap"], "cap"),
            settings.get("currency"),
        )
        if rule.pays and not (isinstance(rule.currency, str) and _CURRENCY.match(rule.currency)):
            raise ValueError("bonus.currency: the study's currency as 3 capitals (GBP, USD, EUR)")
        return rule

    @property
    def pays(self) -> bool:
        """True when the rule can give anyone a bonus."""
        return self.per_validated > 0 or self.per_planted > 0

    def amount(self, validated: int, planted_found: int) -> Decimal:
        """The bonus of one worker, capped, rounded half up to cents."""
        total = self.per_validated * validated + self.per_planted * planted_found
        if self.cap is not None:
            total = min(total, self.cap)
        return total.quantize(CENT, rounding=ROUND_HALF_UP)

    def explain(self, validated: int, planted_found: int) -> str:
        """The bonus's reason as the worker sees it (MTurk shows it with the payment)."""
        parts = []
        if self.per_validated > 0:
            parts.append(
                f"{validated} validated annotations x {self.per_validated} {self.currency}"
            )
        if self.per_planted > 0:
            parts.append(
                f"{planted_found} planted errors found x {self.per_planted} {self.currency}"
            )
        cap = f" (at most {self.cap} {self.currency})" if self.cap is not None else ""
        return "Bonus for quality: " + " + ".join(parts) + cap


@dataclass(frozen=True)
class Decision:
    """One worker's decision, why, and the bonus (paid with approval)."""

    platform: str
    role: str
    worker_id: str
    assignment_id: str | None
    hit_id: str | None
    outcome: str | None
    flagged: bool
    validated: int
    planted_found: int
    decision: str
    reason: str
    bonus: Decimal

    @property
    def paid_bonus(self) -> Decimal:
        """The bonus that goes on a sheet now: approved workers' only."""
        return self.bonus if self.decision == "approve" else Decimal(0)


def _count(row: Mapping[str, Any], key: str, where: str, problems: list[Problem]) -> int:
    value = row.get(key, 0)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        problems.append(Problem(where, key, "must be a whole number of 0 or more"))
        return 0
    return value


def _safe_id(value: Any) -> bool:
    return isinstance(value, str) and _ID.match(value) is not None


def decide(row: Mapping[str, Any], rule: BonusRule, where: str = "row") -> Decision:
    """One worker's decision; InteropError for a row that is malformed (not for an id
    that is merely unsafe: that worker goes to review)."""
    problems: list[Problem] = []
    platform = row.get("platform")
    if platform not in PLATFORMS:
        problems.append(Problem(where, "platform", f"must be one of {', '.join(PLATFORMS)}"))
    outcome = row.get("outcome")
    if outcome is not None and outcome not in OUTCOME_DECISIONS:
        problems.append(Problem(where, "outcome", f"{outcome!r} is not an outcome"))
    if not isinstance(row.get("worker_id"), str) or not row["worker_id"]:
        problems.append(Problem(where, "worker_id", "must be the worker's id"))
    validated = _count(row, "validated", where, problems)
    planted = _count(row, "planted_found", where, problems)
    if problems:
        raise InteropError(problems)
    flagged = bool(row.get("flagged"))
    decision = "open" if outcome is None else OUTCOME_DECISIONS[outcome]
    reason = REASONS[decision]
    if decision == "approve" and flagged:
        decision, reason = "review", REASONS["flagged"]
    assignment, hit = row.get("assignment_id"), row.get("hit_id")
    ids = [row["worker_id"]] + ([assignment, hit] if platform == "mturk" else [])
    if decision != "open" and not all(_safe_id(v) for v in ids if v is not None):
        decision, reason = "review", REASONS["bad_id"].format(platform=platform)
    elif decision != "open" and platform == "mturk" and assignment is None:
        decision, reason = "review", REASONS["no_assignment"]
    bonus = rule.amount(validated, planted) if decision in ("approve", "review") else Decimal(0)
    return Decision(
        platform=platform,  # type: ignore[arg-type]
        role=row.get("role") or "annotator",
        worker_id=row["worker_id"],
        assignment_id=assignment,
        hit_id=hit,
        outcome=outcome,
        flagged=flagged,
        validated=validated,
        planted_found=planted,
        decision=decision,
        reason=reason,
        bonus=bonus,
    )


def decide_all(rows: Iterable[Mapping[str, Any]], platform: str, rule: BonusRule) -> list[Decision]:
    """The decisions of a platform's workers (rows of other platforms are left out).
    InteropError lists malformed rows and the same worker (Prolific) or assignment
    (MTurk) given twice, which would approve or pay twice."""
    if platform not in PLATFORMS:
        raise ValueError(f"platform must be one of {', '.join(PLATFORMS)}")
    if platform == "mturk" and rule.pays and rule.currency != "USD":
        raise ValueError("bonus.currency: MTurk pays bonuses in USD")
    decisions, problems, seen = [], [], {}
    for number, row in enumerate(rows, 1):
        if row.get("platform") != platform:
            continue
        where = f"row {number}"
        try:
            decision = decide(row, rule, where)
        except InteropError as exc:
            problems += exc.problems
            continue
        key = decision.assignment_id if platform == "mturk" else decision.worker_id
        if key is not None and key in seen:
            what = "assignment" if platform == "mturk" else "worker"
            problems.append(Problem(where, "", f"the same {what} as {seen[key]}: one row each"))
            continue
        seen[key] = where
        decisions.append(decision)
    if problems:
        raise InteropError(problems)
    return decisions


# --- sheets ------------------------------------------------------------------------------


def _csv(header: Sequence[str] | None, rows: Iterable[Sequence[Any]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    if header:
        writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()


def _money_text(amount: Decimal) -> str:
    return f"{amount:.2f}"


def prolific_bulk_approve(decisions: Iterable[Decision]) -> str:
    """Participant ids to approve, one a line (Submissions -> Bulk approve)."""
    return "".join(f"{d.worker_id}\n" for d in decisions if d.decision == "approve")


def prolific_bulk_bonus(decisions: Iterable[Decision]) -> str:
    """``participant_id,amount`` a line, approved workers with a bonus above 0."""
    return "".join(
        f"{d.worker_id},{_money_text(d.paid_bonus)}\n" for d in decisions if d.paid_bonus > 0
    )


def mturk_batch_results(
    decisions: Iterable[Decision], reject_reason: str = MTURK_REJECT_REASON
) -> str:
    """HITId, AssignmentId, WorkerId, Approve (x), Reject (reason), one assignment a row;
    review, return and open rows are not listed (nothing to upload for them)."""
    rows = []
    for d in decisions:
        if d.decision == "approve":
            rows.append((d.hit_id or "", d.assignment_id, d.worker_id, "x", ""))
        elif d.decision == "screen_out":
            rows.append(
                (d.hit_id or "", d.assignment_id, d.worker_id, "", safe_cell(reject_reason))
            )
    return _csv(("HITId", "AssignmentId", "WorkerId", "Approve", "Reject"), rows)


def request_token(decision: Decision) -> str:
    """SendBonus's UniqueRequestToken: the same assignment and amount give the same token,
    so MTurk refuses a second payment of a bonus already sent."""
    text = f"{decision.assignment_id}\n{decision.worker_id}\n{_money_text(decision.paid_bonus)}"
    return "falte-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:40]


def mturk_bonuses(decisions: Iterable[Decision], rule: BonusRule) -> str:
    """The bonus list for the SendBonus API: WorkerId, AssignmentId, BonusAmount (USD),
    Reason, UniqueRequestToken, approved workers with a bonus above 0."""
    rows = [
        (d.worker_id, d.assignment_id, _money_text(d.paid_bonus),
         safe_cell(rule.explain(d.validated, d.planted_found)), request_token(d))
        for d in decisions
        if d.paid_bonus > 0
    ]  # fmt: skip
    return _csv(("WorkerId", "AssignmentId", "BonusAmount", "Reason", "UniqueRequestToken"), rows)


DECISION_COLUMNS = (
    "platform", "role", "worker_id", "assignment_id", "outcome", "flagged", "decision",
    "reason", "validated", "planted_found", "bonus", "bonus_paid_now", "currency",
)  # fmt: skip


def decisions_csv(decisions: Iterable[Decision], rule: BonusRule) -> str:
    """Every worker with the decision, why, and the bonus; text cells neutralised."""
    rows = [
        [safe_cell(v) for v in (
            d.platform, d.role, d.worker_id, d.assignment_id or "", d.outcome or "",
            "true" if d.flagged else "false", d.decision, d.reason, d.validated,
            d.planted_found, _money_text(d.bonus), _money_text(d.paid_bonus),
            rule.currency or "",
        )]
        for d in decisions
    ]  # fmt: skip
    return _csv(DECISION_COLUMNS, rows)


def sheets(decisions: Sequence[Decision], *, platform: str, rule: BonusRule) -> dict[str, str]:
    """Every file for one platform's decisions, file name -> text (FILES names them)."""
    if platform == "prolific":
        approve, bonus = prolific_bulk_approve(decisions), prolific_bulk_bonus(decisions)
    else:
        approve, bonus = mturk_batch_results(decisions), mturk_bonuses(decisions, rule)
    names = FILES[platform]
    return {names[0]: approve, names[1]: bonus, names[2]: decisions_csv(decisions, rule)}


def payment_sheets(
    rows: Iterable[Mapping[str, Any]], *, platform: str, rule: BonusRule
) -> dict[str, str]:
    """decide_all, then sheets: every file for one platform from per-worker rows."""
    return sheets(decide_all(rows, platform, rule), platform=platform, rule=rule)


def summary(decisions: Iterable[Decision]) -> dict[str, int]:
    """How many workers each decision has, in DECISIONS order (for the command's output)."""
    counts = dict.fromkeys(DECISIONS, 0)
    for d in decisions:
        counts[d.decision] += 1
    return counts
