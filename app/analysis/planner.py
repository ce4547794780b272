"""How many annotators per document and how many documents a study needs. Pure.

From a pilot (per document, the readings of its annotators), forecast the 95% interval
half-width of a study figure for k annotators per document and n documents: resampling
the pilot's annotators within each document gives the variance of one document's
contribution, and over n independent documents that variance is divided by n (a mean or
a ratio of sums over documents: Cochran 1977, "Sampling Techniques", 3rd ed., ch. 2 for
the mean, ch. 6 for the ratio estimator and its linearised variance, ch. 10 for two-stage
sampling).

A figure is given per document: ``per_document(readings) -> (numerator, denominator)`` or
None when undefined, the study's figure being sum(numerators) / sum(denominators):

- a mean over documents (BooookScore, the mean of its readings' scores; gamma of the
  document's readings): ``(value, 1)`` (`mean_of_readings`, or a callable for gamma);
- a ratio (errors per sentence: occurrences / sentences read; validation precision:
  confirmed / judged): ``(sum of numerators, sum of denominators)`` (`ratio_of_readings`).

Rule. For k annotators, each pilot document with at least k readings gives the figure's
(numerator, denominator) on every set of k of its readings (all sets: at most C(6, 3) =
20 for a six-annotator pilot; beyond `MAX_SUBSETS`, that many drawn, seeded). With R the
pooled ratio, z = numerator - R * denominator is the ratio's linearised value (Cochran
ch. 6; for a mean, z = value - mean). A new document read by k new annotators is a
random document and a random set of k readers, so by the law of total variance

    V_k = var over documents of (the mean of z over its sets)      [divisor P - 1]
          + mean over documents of (the variance of z over its sets)

(P pilot documents). For a mean of k readings this is exactly between-document variance
+ within-document variance / k. With D_k the mean denominator (1 for a mean), the forecast
95% half-width for n documents is

    t(0.975, P - 1) * sqrt(V_k / D_k^2 / n),

Student's t with the pilot's degrees of freedom rather than 1.96, so that the forecast
allows for the pilot's own uncertainty about V_k (a prediction interval for the study's
figure; with a pilot of 15 documents it is 9% wider than 1.96 would give, with 50, 3%).
The study's figure falls within the true value +- this half-width in about 95% of
studies (tests/unit/test_analysis_planner.py simulates it). For k larger than the
pilot's annotators, V_k / D_k^2 is extrapolated as ``a + b / k`` (the variance of a mean of
k readings, Cochran ch. 10; a ratio's sums grow with k alike) fitted to the pilot's
values of k, and the plan says ``extrapolated``. The number of documents is the fewest
whose forecast is at most the target half-width (at least 2).

Cost: worker-minutes = k * n * the pilot's mean minutes per reading (its paragraph
timings summed); cost = worker-minutes / 60 * hourly rate * (1 + fee percent / 100).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any, TypeVar

import numpy as np
from scipy.stats import t as student_t

R = TypeVar("R")
PerDocument = Callable[[Sequence[R]], tuple[float, float] | None]

ANNOTATOR_GRID = (2, 3, 4, 5, 6)
MAX_SUBSETS = 50
SUBSET_SEED = 0
MIN_DOCUMENTS = 2


def mean_of_readings(score: Callable[[R], float | None]) -> PerDocument:
    """A document's figure as the mean of its readings' scores (e.g. BooookScore)."""

    def per_document(readings: Sequence[R]) -> tuple[float, float] | None:
        values = [v for v in (score(r) for r in readings) if v is not None]
        return (sum(values) / len(values), 1.0) if values else None

    return per_document


def ratio_of_readings(
    numerator: Callable[[R], float], denominator: Callable[[R], float]
) -> PerDocument:
    """A document's part of a ratio of sums (e.g. error occurrences / sentences read)."""

    def per_document(readings: Sequence[R]) -> tuple[float, float] | None:
        below = sum(denominator(r) for r in readings)
        return (sum(numerator(r) for r in readings), below) if below > 0 else None

    return per_document


def reading_minutes(paragraph_seconds: Iterable[float]) -> float:
    """A reading's worker-minutes: its paragraph timings summed."""
    return sum(paragraph_seconds) / 60


def _subsets(count: int, k: int, rng: np.random.Generator) -> list[tuple[int, ...]]:
    if math.comb(count, k) <= MAX_SUBSETS:
        return list(combinations(range(count), k))
    return [tuple(sorted(rng.choice(count, k, replace=False))) for _ in range(MAX_SUBSETS)]


def document_summaries(
    documents: Sequence[Sequence[R]], per_document: PerDocument, k: int
) -> np.ndarray:
    """Per pilot document, over the figure's values on its sets of k readings: the means
    of numerator and denominator and their (co)variances, documents x 5 (NaN where the
    document has fewer than k readings or no defined value)."""
    rng = np.random.default_rng(SUBSET_SEED)
    rows = np.full((len(documents), 5), np.nan)
    for d, readings in enumerate(documents):
        if len(readings) < k:
            continue
        subsets = _subsets(len(readings), k, rng)
        values = [per_document([readings[i] for i in subset]) for subset in subsets]
        kept = np.array([v for v in values if v is not None], dtype=float).reshape(-1, 2)
        if len(kept):
            spread = np.cov(kept.T, bias=True).reshape(2, 2) if len(kept) > 1 else np.zeros((2, 2))
            rows[d] = (*kept.mean(axis=0), spread[0, 0], spread[0, 1], spread[1, 1])
    return rows


def pilot_variance(summaries: np.ndarray) -> tuple[float, int] | None:
    """(V_k / mean denominator^2, pilot documents used) from `document_summaries`: one
    document's variance on the figure's scale; None with fewer than two documents or no
    positive denominator."""
    rows = summaries[~np.isnan(summaries[:, 0])]
    if len(rows) < MIN_DOCUMENTS:
        return None
    denominator = float(rows[:, 1].mean())
    if denominator <= 0:
        return None
    ratio = rows[:, 0].mean() / denominator
    between = float(np.var(rows[:, 0] - ratio * rows[:, 1], ddof=1))
    within = float(np.mean(rows[:, 2] - 2 * ratio * rows[:, 3] + ratio**2 * rows[:, 4]))
    return (between + within) / denominator**2, len(rows)


def _extrapolated(known: dict[int, float], k: int) -> float:
    """V_k = a + b / k fitted by least squares to the known k (with b < 0, the mean; a
    clipped at 0); with one known k, its variance."""
    ks = sorted(known)
    if len(ks) == 1:
        return known[ks[0]]
    slope, intercept = np.polyfit([1 / j for j in ks], [known[j] for j in ks], 1)
    if slope <= 0:
        return float(np.mean([known[j] for j in ks]))
    return max(float(intercept), 0.0) + float(slope) / k


@dataclass(frozen=True)
class Forecaster:
    """The pilot's per-document variance of the figure for each k (`pilot_variance`) and
    the number of pilot documents it rests on."""

    variance: dict[int, float]
    pilot_documents: int

    @classmethod
    def of(cls, documents: Sequence[Sequence[R]], per_document: PerDocument) -> Forecaster:
        """Summarise a pilot: per document, its readings (one per annotator)."""
        known: dict[int, tuple[float, int]] = {}
        for k in range(1, max((len(r) for r in documents), default=0) + 1):
            estimate = pilot_variance(document_summaries(documents, per_document, k))
            if estimate is not None:
                known[k] = estimate
        if not known:
            return cls({}, 0)
        return cls({k: v[0] for k, v in known.items()}, min(v[1] for v in known.values()))

    def half_width(self, annotators: int, documents: int) -> float:
        """The forecast 95% half-width for `annotators` per document and `documents`."""
        variance = self.variance.get(annotators)
        if variance is None:
            variance = _extrapolated(self.variance, annotators)
        quantile = float(student_t.ppf(0.975, self.pilot_documents - 1))
        return quantile * math.sqrt(variance / documents)

    def documents_needed(self, annotators: int, half_width: float) -> int:
        """The fewest documents whose forecast half-width is at most `half_width`."""
        needed = MIN_DOCUMENTS
        at_one = self.half_width(annotators, 1)
        needed = max(needed, math.ceil((at_one / half_width) ** 2 - 1e-9))
        while self.half_width(annotators, needed) > half_width:
            needed += 1
        return needed


def cost(
    worker_minutes: float, hourly_rate: float | None, fee_percent: float = 0.0
) -> float | None:
    """Money for the worker-minutes at an hourly rate plus the platform's fee (None
    without a rate), rounded to cents."""
    if hourly_rate is None:
        return None
    return round(worker_minutes / 60 * hourly_rate * (1 + fee_percent / 100), 2)


def plan_study(
    documents: Sequence[Sequence[R]],
    per_document: PerDocument,
    figure: str,
    half_width: float,
    minutes: Sequence[float],
    hourly_rate: float | None = None,
    fee_percent: float = 0.0,
    annotators: Sequence[int] = ANNOTATOR_GRID,
) -> dict[str, Any]:
    """The plan-study JSON: for each number of annotators per document, the fewest
    documents whose forecast 95% half-width is at most `half_width`, that half-width,
    worker-minutes and cost (`extrapolated`: more annotators than the pilot had).
    `documents`: the pilot's readings per document; `minutes`: its readings' minutes."""
    if half_width <= 0:
        raise ValueError("the target half-width must be positive")
    pilot = Forecaster.of(documents, per_document)
    per_reading = float(np.mean(minutes)) if len(minutes) else 0.0
    plans = []
    for k in annotators if pilot.variance else ():
        needed = pilot.documents_needed(k, half_width)
        worker_minutes = k * needed * per_reading
        plans.append(
            {
                "annotators_per_document": k,
                "documents": needed,
                "expected_half_width": pilot.half_width(k, needed),
                "worker_minutes": worker_minutes,
                "cost": cost(worker_minutes, hourly_rate, fee_percent),
                "extrapolated": k not in pilot.variance,
            }
        )
    return {"figure": figure, "half_width": half_width, "plans": plans}
