"""Request bodies of the worker API: strict pydantic models that refuse unknown fields.

The annotation itself (`AnnotationIn`, `SpanIn`) is app/rules/annotation.py's: training
takes the same body. `extra="forbid"` is the mass-assignment guard (a body can never set
status, furthest, deleted_at...); `strict=True` refuses "3" for 3 and true for 1. Range
and text rules are not repeated here: app/rules/spans.py owns them and names the field at
fault.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, Field, ValidationError, field_validator

from app.core.request_json import validation_error
from app.rules.annotation import AnnotationIn, SpanIn, Strict, Uuid, canonical_uuid

__all__ = ["AnnotationIn", "SpanIn", "canonical_uuid", "parse_body"]

M = TypeVar("M", bound=BaseModel)


class RejectionIn(Strict):
    """POST /api/sessions/<token>/suggestions/<suggestion_id>/rejection."""

    id: Uuid


class PositionIn(Strict):
    """PUT /api/sessions/<token>/position; `active_seconds`: time the page saw the tab
    visible on the paragraph being left (app/annotate/timings.py)."""

    paragraph_id: int
    active_seconds: float | None = None

    @field_validator("active_seconds")
    @classmethod
    def _seconds(cls, value: float | None) -> float | None:
        if value is not None and not 0 <= value < float("inf"):
            raise ValueError("must be a number of seconds, 0 or more")
        return value


class SubmitIn(Strict):
    """POST /api/sessions/<token>/submit: no fields (an empty object or no body)."""


class HeartbeatIn(Strict):
    """POST /api/sessions/<token>/heartbeat: optionally, the seconds the worker was active
    since the last heartbeat (accepted and checked; only the activity itself is stored)."""

    active_seconds: float | None = Field(default=None, ge=0, le=86_400, allow_inf_nan=False)


def parse_body(model: type[M], body: dict[str, Any]) -> M:
    """Validate a decoded JSON object against `model`; 422 envelope on any problem."""
    try:
        return model.model_validate(body)
    except ValidationError as exc:
        raise validation_error(exc) from None
