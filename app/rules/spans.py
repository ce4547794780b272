"""Pure span rules. Offsets are Unicode code points into the stored paragraph text
(Python `str` indexing); a span's text must be exactly `paragraph[start:end]`.

Nothing here touches Flask or the database: the API loads the paragraphs it needs and
calls `check_annotation`, which raises `SpanError` with a message a worker can act on.

`locates` is the one rule that says whether a worker's span marks a known error (an
attention check's gold span, a practice text's, a planted error, an adjudicated gold
span): character intersection over union (the Jaccard index of the two spans' sets of
characters) of at least MIN_MATCH_IOU, in the same paragraph. Same category too, and the
error is *found* (`matches`). Attention checks (app.rules.metrics.gold_recall), training
feedback (app.crowd.training.feedback), planted checks, gold precision and recall in
study-report use it; so must recall estimates and judge matching. Only primary spans
are compared: a paired span points at earlier text, which is not itself the error.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol


class CategoryLike(Protocol):
    """What the rules need to know about a taxonomy category."""

    key: str
    name: str

    @property
    def is_paired(self) -> bool: ...


@dataclass(frozen=True)
class Span:
    """A span of one paragraph: [start, end) in code points, and its text."""

    paragraph_id: int
    start: int
    end: int
    text: str

    def to_dict(self) -> dict[str, Any]:
        """The wire and export form."""
        return {
            "paragraph_id": self.paragraph_id,
            "start": self.start,
            "end": self.end,
            "text": self.text,
        }


SpanKey = tuple[int, int, int]  # (paragraph_id, start, end), end exclusive
# Half of the characters the two spans cover between them are shared: highlighting a
# whole paragraph around a short error does not locate it (issue 28: the earlier "half of
# the shorter span" was met by any superset).
MIN_MATCH_IOU = 0.5


def span_iou(a: SpanKey, b: SpanKey) -> float:
    """Character intersection over union of two spans; 0.0 in different paragraphs."""
    if a[0] != b[0]:
        return 0.0
    shared = max(min(a[2], b[2]) - max(a[1], b[1]), 0)
    union = (a[2] - a[1]) + (b[2] - b[1]) - shared
    return shared / union if union > 0 else 0.0


def locates(found: SpanKey, known: SpanKey) -> bool:
    """The match rule, category-blind: same paragraph and intersection over union >= 0.5.

    Compared without rounding (half a whole number is exact in floating point): a span
    at exactly one half matches."""
    if found[0] != known[0]:
        return False
    shared = min(found[2], known[2]) - max(found[1], known[1])
    union = (found[2] - found[1]) + (known[2] - known[1]) - shared
    return shared > 0 and shared >= MIN_MATCH_IOU * union


def matches(
    found: SpanKey, found_category: str | None, known: SpanKey, category: str | None
) -> bool:
    """A known error found: `locates` and the same category."""
    return found_category == category and locates(found, known)


class SpanError(ValueError):
    """A rule was broken. `field` names the input at fault (e.g. "paired_span.text")."""

    def __init__(self, code: str, field: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.field = field
        self.message = message

    @classmethod
    def quote_mismatch(cls, field: str, expected: str, got: str) -> SpanError:
        """The text sent is not the stored text at those offsets."""
        return cls(
            "quote_mismatch",
            field,
            f"The selected text does not match the paragraph at these offsets "
            f"(expected {expected!r}, got {got!r}). Reload the page and select again.",
        )

    @classmethod
    def out_of_range(cls, field: str, start: int, end: int, length: int) -> SpanError:
        """Offsets outside the paragraph, or start >= end."""
        return cls(
            "out_of_range",
            field,
            f"Offsets {start}-{end} are not a span of this paragraph "
            f"(it has {length} characters; start must be below end).",
        )

    @classmethod
    def no_such_paragraph(cls, field: str, paragraph_id: int) -> SpanError:
        """The paragraph does not exist in this document."""
        return cls("no_such_paragraph", field, f"This document has no paragraph {paragraph_id}.")

    @classmethod
    def beyond_furthest(cls, field: str, paragraph_id: int, furthest: int) -> SpanError:
        """The worker has not reached that paragraph yet."""
        return cls(
            "beyond_furthest",
            field,
            f"Paragraph {paragraph_id} has not been reached yet (furthest reached: {furthest}).",
        )

    @classmethod
    def blank(cls, field: str) -> SpanError:
        """The span holds only whitespace."""
        return cls("blank_span", field, "The selected span is empty or only whitespace.")

    @classmethod
    def unknown_category(cls, key: str, known: list[str]) -> SpanError:
        """The category key is not in the taxonomy."""
        return cls(
            "unknown_category",
            "category",
            f"Unknown error category {key!r}; choose one of: {', '.join(known)}.",
        )

    @classmethod
    def paired_required(cls, name: str) -> SpanError:
        """A paired category without its second span."""
        message = f"“{name}” needs a second span: select it in Context or Current Paragraph."
        return cls("paired_span_required", "paired_span", message)

    @classmethod
    def paired_forbidden(cls, name: str) -> SpanError:
        """A singleton category with a second span."""
        message = f"“{name}” takes a single span; remove the second span."
        return cls("paired_span_forbidden", "paired_span", message)

    @classmethod
    def paired_later(cls, paired: int, span: int) -> SpanError:
        """The second span lies after the first span's paragraph."""
        return cls(
            "paired_span_later",
            "paired_span.paragraph_id",
            f"The second span must be in the same paragraph or an earlier one "
            f"(it is in paragraph {paired}, the error in paragraph {span}).",
        )

    @classmethod
    def paired_same(cls) -> SpanError:
        """Both spans are the very same text."""
        return cls(
            "paired_span_same",
            "paired_span",
            "The second span is the same text as the first; select the other occurrence.",
        )

    @classmethod
    def comment_required(cls, label: str) -> SpanError:
        """The taxonomy requires a comment."""
        return cls("comment_required", "comment", f"Please fill in “{label}”.")

    @classmethod
    def comment_too_long(cls, length: int, limit: int) -> SpanError:
        """The comment exceeds the configured limit."""
        return cls(
            "comment_too_long",
            "comment",
            f"The comment has {length} characters; the limit is {limit}.",
        )


def check_span(span: Span, texts: Mapping[int, str], furthest: int, field: str) -> None:
    """Check one span against the stored paragraphs the worker has reached."""
    if span.paragraph_id > furthest:
        raise SpanError.beyond_furthest(f"{field}.paragraph_id", span.paragraph_id, furthest)
    text = texts.get(span.paragraph_id)
    if text is None:
        raise SpanError.no_such_paragraph(f"{field}.paragraph_id", span.paragraph_id)
    if not 0 <= span.start < span.end <= len(text):
        raise SpanError.out_of_range(field, span.start, span.end, len(text))
    stored = text[span.start : span.end]
    if stored != span.text:
        raise SpanError.quote_mismatch(f"{field}.text", stored, span.text)
    if not stored.strip():
        raise SpanError.blank(field)


def check_annotation(
    *,
    category: CategoryLike | None,
    known_categories: list[str],
    category_key: str,
    span: Span,
    paired_span: Span | None,
    comment: str | None,
    comment_required: bool,
    comment_label: str,
    max_comment_length: int,
    texts: Mapping[int, str],
    furthest: int,
) -> None:
    """Apply every rule for one annotation; raise SpanError on the first broken one."""
    if category is None:
        raise SpanError.unknown_category(category_key, known_categories)
    check_span(span, texts, furthest, "span")
    if category.is_paired and paired_span is None:
        raise SpanError.paired_required(category.name)
    if not category.is_paired and paired_span is not None:
        raise SpanError.paired_forbidden(category.name)
    if paired_span is not None:
        if paired_span.paragraph_id > span.paragraph_id:
            raise SpanError.paired_later(paired_span.paragraph_id, span.paragraph_id)
        check_span(paired_span, texts, furthest, "paired_span")
        if (paired_span.paragraph_id, paired_span.start, paired_span.end) == (
            span.paragraph_id,
            span.start,
            span.end,
        ):
            raise SpanError.paired_same()
    if comment is not None and len(comment) > max_comment_length:
        raise SpanError.comment_too_long(len(comment), max_comment_length)
    if comment_required and not (comment or "").strip():
        raise SpanError.comment_required(comment_label)
