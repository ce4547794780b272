"""MQM-style weighted error score per document: pure arithmetic, no I/O.

The rule (docs/severities.md), after MQM's scoring (Lommel, Uszkoreit & Burchardt 2014,
"Multidimensional Quality Metrics (MQM)", Tradumàtica 12) as used for MT evaluation by
Freitag et al. 2021 ("Experts, Errors, and Context", TACL 9): each error counts its
severity's weight from the taxonomy (e.g. minor 1, major 5); a reading's penalty is the
sum of the weights of its live annotations; it is normalised per 100 words of the
document: ``mqm_per_100_words = 100 * penalty / words``, words being the document's
whitespace-separated tokens (as the paragraph export's `words`). A document's score is
the mean over its submitted sessions (as its BooookScore is), so one lazy or one eager
worker weighs as much as any other. Lower is better; 0 means no error marked. Annotations
made without a severity (stored before the taxonomy had severities, or under a key the
taxonomy no longer has) count weight 0, and the score is None when the taxonomy has no
severities (nothing to weigh) or no session is submitted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from app.rules.metrics import mean


def word_count(paragraphs: Iterable[str]) -> int:
    """Whitespace-separated tokens of a document's paragraphs."""
    return sum(len(text.split()) for text in paragraphs)


def penalty(severities: Iterable[str | None], weights: Mapping[str, float]) -> float:
    """Sum of the severity weights of one reading's annotations (unknown or none: 0)."""
    return sum(weights.get(key, 0.0) for key in severities if key is not None)


def per_100_words(total_penalty: float, words: int) -> float | None:
    """A penalty per 100 words; None for a document without words."""
    return 100.0 * total_penalty / words if words > 0 else None


def document_mqm(
    readings: Sequence[Iterable[str | None]], weights: Mapping[str, float], words: int
) -> float | None:
    """Mean over readings (submitted sessions) of their MQM penalty per 100 words."""
    if not weights or not readings:
        return None
    return mean(per_100_words(penalty(reading, weights), words) for reading in readings)
