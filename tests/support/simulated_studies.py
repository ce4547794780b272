"""Simulated studies with a known truth, for the analyses' coverage tests.

Errors: each document holds 5-30 errors (uniform), three per paragraph, each a span of
10-40 characters with one of four categories. Each annotator finds every error with their
own probability, 0.3-0.8 (uniform, drawn per study), independently, and marks it with the
right category and each end moved by at most an eighth of its length L, so that any two
marks of one error have character IoU >= (L - L/4) / (L + L/4) = 0.6 (they match) and marks
of different errors never overlap: the connected components are the found errors.
Everything is drawn from one numpy generator, so a seed fixes a study.
"""

from __future__ import annotations

import numpy as np

from app.analysis.matching import Mark
from app.analysis.recall import DocumentCaptures, captures_of

CATEGORIES = ("coherence", "omission", "repetition", "factual")
ERRORS_PER_DOCUMENT = (5, 30)
DETECTION = (0.3, 0.8)
SENTENCES_PER_DOCUMENT = (30, 50)


def _marks(
    rng: np.random.Generator, found: np.ndarray, lengths: np.ndarray, categories: np.ndarray
) -> list[Mark]:
    """One annotator's marks of the errors they found (jittered spans)."""
    marks = []
    for error in np.flatnonzero(found):
        length = int(lengths[error])
        jitter = length // 8
        start = (error % 3) * 100 + 10
        moved_start, moved_end = rng.integers(-jitter, jitter + 1, 2)
        marks.append(
            Mark(
                int(error) // 3,
                int(start + moved_start),
                int(start + length + moved_end),
                CATEGORIES[categories[error]],
            )
        )
    return marks


def capture_study(
    rng: np.random.Generator, annotators: int = 3, documents: int = 20
) -> tuple[int, list[DocumentCaptures]]:
    """(true number of errors, each document's captures): every annotator reads every
    document; the marks go through the span matching (connected components)."""
    detection = rng.uniform(*DETECTION, annotators)
    truth = 0
    captures = []
    for document in range(documents):
        errors = int(rng.integers(ERRORS_PER_DOCUMENT[0], ERRORS_PER_DOCUMENT[1] + 1))
        truth += errors
        lengths = rng.integers(10, 41, errors)
        categories = rng.integers(0, len(CATEGORIES), errors)
        found = rng.random((annotators, errors)) < detection[:, None]
        readings = {
            f"worker-{a}": _marks(rng, found[a], lengths, categories) for a in range(annotators)
        }
        captures.append(captures_of(document, readings))
    return truth, captures


def booookscore_readings(rng: np.random.Generator, documents: int, annotators: int) -> np.ndarray:
    """BooookScore of each reading (documents x annotators): a document has 30-50
    sentences and 5-30 errors; a reading's annotator, new each time, finds each error with
    a probability of 0.3-0.8; score = 100 * (1 - found / sentences)."""
    sentences = rng.integers(SENTENCES_PER_DOCUMENT[0], SENTENCES_PER_DOCUMENT[1] + 1, documents)
    errors = rng.integers(ERRORS_PER_DOCUMENT[0], ERRORS_PER_DOCUMENT[1] + 1, documents)
    detection = rng.uniform(*DETECTION, (documents, annotators))
    found = rng.binomial(errors[:, None], detection)
    return 100 * (1 - found / sentences[:, None])


def true_booookscore() -> float:
    """The population mean of `booookscore_readings`: 100 (1 - E[p] E[errors] E[1/sentences])."""
    mean_detection = sum(DETECTION) / 2
    mean_errors = sum(ERRORS_PER_DOCUMENT) / 2
    sentences = np.arange(SENTENCES_PER_DOCUMENT[0], SENTENCES_PER_DOCUMENT[1] + 1)
    return float(100 * (1 - mean_detection * mean_errors * np.mean(1 / sentences)))
