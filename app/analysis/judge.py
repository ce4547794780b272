"""How well a model's annotations (the judge) agree with the humans'. Pure.

Precision, recall and their harmonic mean F1 (van Rijsbergen 1979, "Information
Retrieval", 2nd ed., ch. 7, the F measure with beta = 1) of span annotations against a
reference, at the attention-check matching rule (app.analysis.matching.iou_match: same
paragraph, same category, character IoU >= 0.5):

- Against one human on one document, a judge span is *matched* when it matches one of
  the human's spans, a human span when one of the judge's matches it. Precision = matched
  judge spans / judge spans; recall = matched human spans / human spans (micro-averaged:
  the counts are summed over documents and humans before dividing); F1 = 2PR / (P + R).
- `human_human`: every human scored in the same way against every other human on the
  same document (both orders), pooled: how well humans agree with each other, the bar a
  judge is held to.
- Severity-weighted (``weighted=True``): each span counts its severity weight instead of
  1 (MQM weights, docs/severities.md), so missing a major error costs more than a minor.
- Sentence unit (``unit="sentence"``): each span stands for the sentences it overlaps
  (one unit per sentence and category), and a match is the same sentence and category.
  A judge that marks whole sentences, as GPT-4 does in BooookScore (Chang et al., ICLR
  2024), would otherwise rarely reach the span rule against humans' short spans.
- Intervals: percentile bootstrap over documents (app.rules.intervals: 1000 seeded
  resamples of whole documents; the figure recomputed from the summed counts).

Scores are on the 0-100 scale. `judge_report` assembles the judge-report JSON, with the
Alternative Annotator Test (app.analysis.alttest) at the same unit.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from itertools import permutations
from typing import Any

import numpy as np

from app.analysis import alttest
from app.analysis.matching import Mark, MatchRule, SpanLike, iou_match, pair_counts
from app.rules.intervals import (
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    percentile_interval,
    resample_indices,
)

SPAN = "span"
SENTENCE = "sentence"
Sentence = tuple[int, int, int]  # (paragraph, start, end)
Readings = Mapping[Hashable, Mapping[Hashable, Sequence[SpanLike]]]


def sentence_marks(spans: Sequence[SpanLike], sentences: Sequence[Sentence]) -> list[Mark]:
    """Each span as the sentences it overlaps, one Mark per (sentence, category), the
    heaviest weight kept."""
    units: dict[tuple[int, int, int, Hashable], float] = {}
    for span in spans:
        weight = float(span[4]) if len(span) > 4 else 1.0
        for paragraph, start, end in sentences:
            if paragraph == span[0] and start < span[2] and span[1] < end:
                key = (paragraph, start, end, span[3])
                units[key] = max(units.get(key, weight), weight)
    return [Mark(*key, weight) for key, weight in units.items()]


def sentence_readings(
    readings: Readings, sentences: Mapping[Hashable, Sequence[Sentence]]
) -> dict[Hashable, dict[Hashable, list[Mark]]]:
    """Every document's readings at the sentence unit (`sentences` by document)."""
    return {
        document: {
            annotator: sentence_marks(spans, sentences[document])
            for annotator, spans in by_annotator.items()
        }
        for document, by_annotator in readings.items()
    }


def _of_category(spans: Sequence[SpanLike], category: Hashable | None) -> list[SpanLike]:
    return list(spans) if category is None else [s for s in spans if s[3] == category]


def judge_counts(
    readings: Readings,
    judge: Hashable,
    category: Hashable | None = None,
    human: Hashable | None = None,
    match: MatchRule = iou_match,
    weighted: bool = False,
) -> np.ndarray:
    """Per document the judge read with a human (`human`: only that one): the summed
    (matched judge, judge, matched human, human) counts, documents x 4."""
    rows = []
    for document in readings.values():
        humans = [a for a in document if a != judge and (human is None or a == human)]
        if judge not in document or not humans:
            continue
        predicted = _of_category(document[judge], category)
        rows.append(
            np.sum(
                [
                    pair_counts(predicted, _of_category(document[h], category), match, weighted)
                    for h in humans
                ],
                axis=0,
            )
        )
    return np.array(rows, dtype=float).reshape(-1, 4)


def human_counts(
    readings: Readings,
    judge: Hashable,
    category: Hashable | None = None,
    match: MatchRule = iou_match,
    weighted: bool = False,
) -> np.ndarray:
    """Per document with two humans or more: counts of every human against every other
    (both orders), summed, documents x 4."""
    rows = []
    for document in readings.values():
        humans = [a for a in document if a != judge]
        if len(humans) < 2:
            continue
        rows.append(
            np.sum(
                [
                    pair_counts(
                        _of_category(document[a], category),
                        _of_category(document[b], category),
                        match,
                        weighted,
                    )
                    for a, b in permutations(humans, 2)
                ],
                axis=0,
            )
        )
    return np.array(rows, dtype=float).reshape(-1, 4)


def _ratios(sums: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Precision, recall and F1 (0-100, NaN where undefined) of summed counts (... x 4)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = 100 * sums[..., 0] / sums[..., 1]
        recall = 100 * sums[..., 2] / sums[..., 3]
        f1 = 2 * precision * recall / (precision + recall)
    f1 = np.where((precision == 0) & (recall == 0), 0.0, f1)
    return precision, recall, f1


def _value(number: float) -> float | None:
    return None if np.isnan(number) else float(number)


def scores_with_ci(
    counts: np.ndarray, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED
) -> dict[str, dict[str, Any]]:
    """{precision, recall, f1: {value, ci95}} from per-document counts (ci95 None with
    fewer than two documents)."""
    values = _ratios(counts.sum(axis=0))
    intervals: tuple = (None, None, None)
    if len(counts) >= 2:
        sums = counts[resample_indices(len(counts), resamples, seed)].sum(axis=1)
        intervals = tuple(percentile_interval(figure) for figure in _ratios(sums))
    return {
        name: {"value": _value(value), "ci95": None if ci is None else list(ci)}
        for name, value, ci in zip(("precision", "recall", "f1"), values, intervals, strict=True)
    }


def _categories(readings: Readings) -> list[Hashable]:
    keys = {span[3] for doc in readings.values() for spans in doc.values() for span in spans}
    return sorted(keys, key=repr)


def judge_report(
    readings: Readings,
    judge: Hashable,
    unit: str = SPAN,
    sentences: Mapping[Hashable, Sequence[Sentence]] | None = None,
    weighted: bool = False,
    epsilon: float = alttest.DEFAULT_EPSILON,
    min_instances: int = alttest.MIN_INSTANCES,
    match: MatchRule = iou_match,
) -> dict[str, Any]:
    """The judge-report JSON: the judge's precision, recall and F1 against the humans,
    overall, per category and per human; the humans' F1 against each other; the alt-test.
    `readings`: per document, annotator -> spans, the judge among them."""
    if unit == SENTENCE:
        if sentences is None:
            raise ValueError("the sentence unit needs each document's sentences")
        readings = sentence_readings(readings, sentences)
    elif unit != SPAN:
        raise ValueError(f"unknown unit {unit!r}; choose {SPAN} or {SENTENCE}")
    counts = judge_counts(readings, judge, match=match, weighted=weighted)
    humans = sorted({a for doc in readings.values() for a in doc if a != judge}, key=repr)
    between_humans = human_counts(readings, judge, match=match, weighted=weighted)
    alt, reason = alttest.alt_test(
        readings, judge, epsilon, min_instances=min_instances, match=match
    )
    return {
        "judge": judge,
        "unit": unit,
        "weighted": weighted,
        "documents": len(counts),
        "humans": len(humans),
        "overall": scores_with_ci(counts),
        "per_category": {
            category: scores_with_ci(judge_counts(readings, judge, category, None, match, weighted))
            for category in _categories(readings)
        },
        "per_human": {
            human: scores_with_ci(judge_counts(readings, judge, None, human, match, weighted))
            for human in humans
        },
        "human_human": (
            {"f1": scores_with_ci(between_humans)["f1"]} if len(between_humans) else None
        ),
        "alt_test": alt,
        "alt_test_reason": reason,
    }
