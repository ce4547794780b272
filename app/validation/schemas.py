"""Request bodies of the validator API: a strict pydantic model for the shape, then the
round's rules (verdicts, reasons, explanation length).

As app/annotate/schemas.py: `extra="forbid"` refuses fields a validator may not set (the
item's source, say) and `strict=True` refuses 5 for "5". The validator API's contract
answers a body of the wrong shape with 400 `bad_request` and a broken rule with 422 and
the rule's own code (api_spec/validators.yaml).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from app.core.errors import ApiError
from app.models import VERDICTS

MAX_EXPLANATION = 5000


class JudgmentIn(BaseModel):
    """POST /api/validators/<token>/judgments, as sent."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    item_id: str = Field(min_length=1)
    verdict: Any = None  # any value: one not in VERDICTS is a rule (422), not a shape error
    reasons: list[str] | None = None
    explanation: str | None = None


@dataclass(frozen=True)
class JudgmentInput:
    """A judgment as posted by the validator page, checked for shape and the round's rules."""

    item_id: str
    verdict: str
    reasons: tuple[str, ...]
    explanation: str | None


# What a field of the wrong type is told (the first one at fault is named).
_SHAPE_MESSAGES = {
    "item_id": "item_id must be the item's id (a string).",
    "reasons": "reasons must be a list of strings.",
    "explanation": "explanation must be a string or null.",
}


def _shape_error(exc: ValidationError) -> ApiError:
    """400 naming the unknown fields, or the first field of the wrong type."""
    errors = exc.errors(include_url=False, include_context=False, include_input=False)
    unknown = sorted(str(e["loc"][0]) for e in errors if e["type"] == "extra_forbidden")
    if unknown:
        return ApiError.bad_request(f"Unknown field(s): {', '.join(unknown)}.", fields=unknown)
    field = str(errors[0]["loc"][0]) if errors[0]["loc"] else "body"
    message = _SHAPE_MESSAGES.get(field, f"{field} is not valid.")
    return ApiError.bad_request(message, field=field)


def parse_judgment(body: Any, reasons_allowed: list[str]) -> JudgmentInput:
    """Check a posted judgment's shape and rules; ApiError (4xx) for anything wrong."""
    if not isinstance(body, dict):
        raise ApiError.bad_request("Send a JSON object.")
    try:
        posted = JudgmentIn.model_validate(body)
    except ValidationError as exc:
        raise _shape_error(exc) from None
    if posted.verdict not in VERDICTS:
        raise ApiError.unprocessable(
            f"verdict must be one of {', '.join(VERDICTS)}.",
            code="invalid_verdict",
            field="verdict",
        )
    reasons = posted.reasons or []
    unknown_reasons = [r for r in reasons if r not in reasons_allowed]
    if unknown_reasons:
        raise ApiError.unprocessable(
            "Unknown reason(s) for this round.",
            code="invalid_reason",
            field="reasons",
            unknown=unknown_reasons,
            allowed=reasons_allowed,
        )
    if posted.verdict != "agree" and not reasons:
        raise ApiError.unprocessable(
            "Choose at least one reason unless you agree.",
            code="reasons_required",
            field="reasons",
        )
    explanation = (posted.explanation or "").strip() or None
    if explanation and len(explanation) > MAX_EXPLANATION:
        raise ApiError.unprocessable(
            f"explanation is longer than {MAX_EXPLANATION} characters.",
            code="too_long",
            field="explanation",
        )
    # Keep the round's order, and each reason once.
    chosen = tuple(r for r in reasons_allowed if r in reasons)
    return JudgmentInput(posted.item_id, posted.verdict, chosen, explanation)
