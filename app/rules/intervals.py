"""Bootstrap 95% intervals for the agreement figures, resampling whole documents. Pure.

Rule (Efron & Tibshirani 1993, "An Introduction to the Bootstrap", ch. 13, the
percentile interval): draw `BOOTSTRAP_RESAMPLES` samples of the study's documents with
replacement, each as large as the study (numpy's PCG64 generator seeded with
`BOOTSTRAP_SEED`, so the same data always give the same interval); compute the figure on
each sample exactly as on the study; the interval is the 2.5th and 97.5th percentiles of
those figures (with 1000 resamples: the 26th and the 976th smallest). Whole documents are
resampled because annotations within a document are not independent. With fewer than
two documents there is no interval (None).

Krippendorff's alpha pooled over documents is not a mean of per-document values: each
document contributes its sufficient statistics (`alpha_parts`), a resample sums them and
`alpha_from_parts` gives its alpha. For two values (error / no error), nominal alpha
(Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability", section C) is
``1 - (n - 1) * D / (n_0 * n_1)`` with n_0, n_1 the pairable values of each kind, n their
sum, and D = sum over units of n_u0 * n_u1 / (m_u - 1); the tests check it equals the
`krippendorff` package's value.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np

BOOTSTRAP_RESAMPLES = 1000
BOOTSTRAP_SEED = 0
LEVEL = 0.95

AlphaParts = tuple[float, int, int]  # (D, n_0, n_1)


def resample_indices(documents: int, resamples: int, seed: int) -> np.ndarray:
    """resamples x documents indices drawn with replacement (seeded)."""
    return np.random.default_rng(seed).integers(0, documents, size=(resamples, documents))


def percentile_interval(values: np.ndarray, level: float = LEVEL) -> tuple[float, float] | None:
    """The percentile interval of resampled figures (NaN left out; None if none is left)."""
    kept = np.sort(values[~np.isnan(values)])
    if kept.size == 0:
        return None
    count = kept.size
    low = kept[int((1 - level) / 2 * count)]
    high = kept[min(count - 1, int((1 + level) / 2 * count))]
    return float(low), float(high)


def bootstrap_mean_ci(
    values: Sequence[float],
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    level: float = LEVEL,
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the mean of per-document values (None: < 2)."""
    return _mean_ci(tuple(values), resamples, seed, level)


# Pages ask again with the same figures on every load: remember the last intervals.
@lru_cache(maxsize=256)
def _mean_ci(
    values: tuple[float, ...], resamples: int, seed: int, level: float
) -> tuple[float, float] | None:
    if len(values) < 2:
        return None
    data = np.asarray(values, dtype=float)
    means = data[resample_indices(len(data), resamples, seed)].mean(axis=1)
    return percentile_interval(means, level)


def alpha_parts(value_counts: Sequence[tuple[int, int]]) -> AlphaParts:
    """One document's sufficient statistics of binary nominal alpha: (D, n_0, n_1) over
    its pairable units (coded by two annotators or more)."""
    disagreement, no_error, error = 0.0, 0, 0
    for zeros, ones in value_counts:
        coders = zeros + ones
        if coders < 2:
            continue
        disagreement += zeros * ones / (coders - 1)
        no_error += zeros
        error += ones
    return disagreement, no_error, error


def alpha_from_parts(disagreement: float, no_error: float, error: float) -> float | None:
    """Binary nominal Krippendorff's alpha from summed parts (None when undefined: no
    pairable values, or all of one kind)."""
    if no_error == 0 or error == 0:
        return None
    total = no_error + error
    return float(1 - (total - 1) * disagreement / (no_error * error))


def bootstrap_alpha_ci(
    parts: Sequence[AlphaParts],
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    level: float = LEVEL,
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the pooled alpha, resampling documents' parts
    (resamples where alpha is undefined are left out). None with fewer than two."""
    return _alpha_ci(tuple(parts), resamples, seed, level)


@lru_cache(maxsize=256)
def _alpha_ci(
    parts: tuple[AlphaParts, ...], resamples: int, seed: int, level: float
) -> tuple[float, float] | None:
    if len(parts) < 2:
        return None
    data = np.asarray(parts, dtype=float)
    sums = data[resample_indices(len(data), resamples, seed)].sum(axis=1)
    disagreement, no_error, error = sums[:, 0], sums[:, 1], sums[:, 2]
    defined = (no_error > 0) & (error > 0)
    alphas = np.full(len(sums), np.nan)
    total = no_error + error
    alphas[defined] = 1 - (total[defined] - 1) * disagreement[defined] / (
        no_error[defined] * error[defined]
    )
    return percentile_interval(alphas, level)
