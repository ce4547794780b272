"""Request bodies of the worker API: strict pydantic models that refuse unknown fields.

`extra="forbid"` is the mass-assignment guard (a body can never set status, furthest,
deleted_at...); `strict=True` refuses "3" for 3 and true for 1. Range and text rules are
not repeated here: app/rules/spans.py owns them and names the field at fault.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
)

from app.core.errors import ApiError
from app.rules.spans import Span

M = TypeVar("M", bound=BaseModel)
UUID_RE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def canonical_uuid(value: str) -> str | None:
    """The canonical lower-case form of a hyphenated UUID string, or None if it is not one."""
    lowered = value.lower()
    return lowered if UUID_RE.fullmatch(lowered) else None


def _uuid(value: str) -> str:
    canonical = canonical_uuid(value)
    if canonical is None:
        raise ValueError("must be a UUID like 3f2b8c1e-5d4a-4f7e-9b1c-2a6d8e0f4b3c")
    return canonical


# An id the page makes (crypto.randomUUID), stored in its canonical lower-case form.
Uuid = Annotated[str, AfterValidator(_uuid)]


def _encodable(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class SpanIn(_Strict):
    """A span on the wire: paragraph position, code-point offsets, and its text."""

    paragraph_id: int
    start: int
    end: int
    text: str

    def to_span(self) -> Span:
        """The pure rules' value object."""
        return Span(self.paragraph_id, self.start, self.end, self.text)


class AnnotationIn(_Strict):
    """POST /api/sessions/<token>/annotations."""

    id: Uuid
    category: str
    span: SpanIn
    paired_span: SpanIn | None = None
    comment: str | None = None
    # Required when the taxonomy has severities, refused when it has none (writes._check).
    severity: str | None = None
    # The model suggestion this Add accepts or edits (app.suggestions.decisions).
    suggestion_id: str | None = Field(default=None, min_length=1, max_length=200)

    @field_validator("comment")
    @classmethod
    def _storable_comment(cls, value: str | None) -> str | None:
        # The databases cannot store NUL or unpaired surrogates (JSON allows both).
        if value and ("\x00" in value or not _encodable(value)):
            raise ValueError("must be text without NUL characters or unpaired surrogates")
        return value or None


class RejectionIn(_Strict):
    """POST /api/sessions/<token>/suggestions/<suggestion_id>/rejection."""

    id: Uuid


class PositionIn(_Strict):
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


class SubmitIn(_Strict):
    """POST /api/sessions/<token>/submit: no fields (an empty object or no body)."""


class HeartbeatIn(_Strict):
    """POST /api/sessions/<token>/heartbeat: optionally, the seconds the worker was active
    since the last heartbeat (accepted and checked; only the activity itself is stored)."""

    active_seconds: float | None = Field(default=None, ge=0, le=86_400, allow_inf_nan=False)


def _field_name(location: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in location) or "body"


def validation_error(exc: ValidationError) -> ApiError:
    """Turn pydantic's errors into one 422 envelope naming the first field at fault."""
    errors = [
        {"field": _field_name(error["loc"]), "type": error["type"], "message": error["msg"]}
        for error in exc.errors(include_url=False, include_context=False, include_input=False)
    ]
    first = errors[0]
    if first["type"] == "extra_forbidden":
        code, message = "unknown_field", f"Unknown field {first['field']!r}: remove it."
    elif first["type"] == "missing":
        code, message = "missing_field", f"Field {first['field']!r} is required."
    else:
        code = "invalid_field"
        message = f"Field {first['field']!r}: {first['message'].removeprefix('Value error, ')}."
    return ApiError.unprocessable(message, code=code, field=first["field"], errors=errors)


def parse_body(model: type[M], body: dict[str, Any]) -> M:
    """Validate a decoded JSON object against `model`; 422 envelope on any problem."""
    try:
        return model.model_validate(body)
    except ValidationError as exc:
        raise validation_error(exc) from None
