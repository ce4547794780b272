"""One annotation as a worker sends it, and the taxonomy's rules it must keep. Pure.

The task's worker API (app.annotate) and training's "Check my answers" (app.crowd.training)
take the same body, `AnnotationIn`: strict pydantic models that refuse unknown fields
(`extra="forbid"` is the mass-assignment guard; `strict=True` refuses "3" for 3 and true
for 1). `check_rules` applies the span rules of app.rules.spans, a known category, the
comment box's rules and the severity rule (`check_severity`: a taxonomy with severities
needs one on every annotation, among those its category offers; one without takes none)
to it, given the taxonomy (app.taxonomy.Taxonomy) and the comment limit; it raises
SpanError, which names the field at fault.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

from app.rules.spans import Span, SpanError, check_annotation

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


class Strict(BaseModel):
    """A body that refuses unknown fields, strict types, and never changes once read."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class SpanIn(Strict):
    """A span on the wire: paragraph position, code-point offsets, and its text."""

    paragraph_id: int
    start: int
    end: int
    text: str

    def to_span(self) -> Span:
        """The pure rules' value object."""
        return Span(self.paragraph_id, self.start, self.end, self.text)


class AnnotationIn(Strict):
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


class SeverityError(SpanError):
    """An annotation's severity breaks the taxonomy's rule (a 422 with code and field)."""

    @classmethod
    def required(cls, offered: list[str]) -> SeverityError:
        """The taxonomy has severities and none was sent."""
        return cls(
            "severity_required",
            "severity",
            f"Choose a severity ({', '.join(offered)}) for this annotation.",
        )

    @classmethod
    def unknown(cls, key: str, offered: list[str], category: str) -> SeverityError:
        """A key that is no severity of the taxonomy, or not one the category offers."""
        return cls(
            "unknown_severity",
            "severity",
            f"Severity {key!r} is not offered for category {category!r}; "
            f"choose one of {', '.join(offered)}.",
        )

    @classmethod
    def not_used(cls) -> SeverityError:
        """A severity sent under a taxonomy without severities."""
        return cls(
            "severity_not_used",
            "severity",
            "This taxonomy has no severities: send no severity (or null).",
        )


def check_severity(taxonomy: Any, category: str, severity: str | None) -> None:
    """Raise SeverityError unless `severity` fits the taxonomy and the category."""
    if not taxonomy.severities:
        if severity is not None:
            raise SeverityError.not_used()
        return
    offered = [s.key for s in taxonomy.severities_for(category)]
    if severity is None:
        raise SeverityError.required(offered)
    if severity not in offered:
        raise SeverityError.unknown(severity, offered, category)


def check_rules(
    data: AnnotationIn,
    texts: Mapping[int, Any],
    furthest: int,
    *,
    taxonomy: Any,
    max_comment_length: int,
    comment_required: bool,
    severity: bool = True,
) -> None:
    """The taxonomy's rules for an annotation a worker sent (app.rules.spans, and the
    severity unless `severity` is False) against the paragraph texts it may quote (the
    reached ones, up to `furthest`); raises SpanError."""
    check_annotation(
        category=taxonomy.category(data.category),
        known_categories=list(taxonomy.keys),
        category_key=data.category,
        span=data.span.to_span(),
        paired_span=data.paired_span.to_span() if data.paired_span else None,
        comment=data.comment,
        comment_required=comment_required,
        comment_label=taxonomy.comment.label,
        max_comment_length=max_comment_length,
        texts=texts,
        furthest=furthest,
    )
    if severity:
        check_severity(taxonomy, data.category, data.severity)
