"""Which reasons a validator chooses from, item by item. Pure: no app, no database.

Two protocols share a round. An item with a question (BooookScore's: a span and the
question that states the confusion) is judged against the question, with the taxonomy's
`validation.reasons` (BooookScore's "A. Not relevant to span" ...). An item without one
(a span with an error category, e.g. our own annotations) is judged against its category,
with `validation.category_reasons` ("Not an error", "Wrong category" ...). A round copies
both lists from the taxonomy when it is created, so later edits of the file do not change
what its validators were offered.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

QUESTION = "question"
CATEGORY = "category"


def item_protocol(question: str | None) -> str:
    """How an item is judged: against its question, or against its category."""
    return QUESTION if question else CATEGORY


def round_reasons(
    settings: Mapping[str, Any] | None,
    question_default: Sequence[str],
    category_default: Sequence[str],
) -> dict[str, list[str]]:
    """The round's reasons by protocol; rounds created before category reasons existed get
    the taxonomy's current category reasons (their question reasons are theirs)."""
    settings = settings or {}
    return {
        QUESTION: list(settings.get("reasons") or question_default),
        CATEGORY: list(settings.get("category_reasons") or category_default),
    }
