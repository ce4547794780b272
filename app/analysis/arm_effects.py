"""What model suggestions change: the suggestion arms compared, and decoys taken. Pure.

Arms (`suggestion_arms: {show: ..., none: ...}`, docs/suggestions.md): each figure (share
of suggestions accepted, errors per sentence, BooookScore, agreement, time per paragraph)
is computed in each arm exactly as for the study, from the documents' readings in that
arm; the difference is first arm minus second (``show - none``). Its 95% interval is the
percentile bootstrap over documents (Efron & Tibshirani 1993, "An Introduction to the
Bootstrap", ch. 13; app.rules.intervals: 1000 seeded resamples), a document's readings
in both arms being resampled together, since annotations of one document are not
independent (a paired design when the arms share documents). A figure is a callable from
the list of an arm's per-document data to a number, or None where undefined (a resample
where it is undefined in either arm is left out).

Decoys (suggestions planted deliberately wrong, ``import-suggestions --decoy``): the take
rate is taken / shown, a decoy taken when the worker accepted or edited it, the measure of
over-reliance on suggestions. Its 95% interval is Wilson's score interval (Wilson 1927,
"Probable inference, the law of succession, and statistical inference", JASA 22;
recommended for proportions by Brown, Cai & DasGupta 2001, Statistical Science 16):
``(p + z^2/2n +- z sqrt(p(1 - p)/n + z^2/4n^2)) / (1 + z^2/n)``. Rates are on 0-100.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np

from app.rules.intervals import (
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    percentile_interval,
    resample_indices,
)

T = TypeVar("T")
Figure = Callable[[Sequence[T]], float | None]
Z95 = 1.959963984540054
SHOW, NONE = "show", "none"


def _figure(figure: Figure, documents: Sequence[Mapping[Hashable, T]], arm: Hashable) -> float:
    value = figure([document[arm] for document in documents if arm in document])
    return math.nan if value is None else float(value)


def difference_ci(
    documents: Sequence[Mapping[Hashable, T]],
    figure: Figure,
    first: Hashable = SHOW,
    second: Hashable = NONE,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> dict[str, Any]:
    """{value, ci95} of figure(first arm) - figure(second arm); `documents`: per document,
    arm -> that arm's data for the document (an arm that did not read it absent)."""
    value = _figure(figure, documents, first) - _figure(figure, documents, second)
    interval = None
    if len(documents) >= 2:
        differences = np.array(
            [
                _figure(figure, sample, first) - _figure(figure, sample, second)
                for sample in (
                    [documents[i] for i in row]
                    for row in resample_indices(len(documents), resamples, seed)
                )
            ]
        )
        interval = percentile_interval(differences)
    return {
        "value": None if math.isnan(value) else value,
        "ci95": None if interval is None else list(interval),
    }


def compare_arms(
    documents: Sequence[Mapping[Hashable, T]],
    figures: Mapping[str, Figure],
    first: Hashable = SHOW,
    second: Hashable = NONE,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> dict[str, Any]:
    """The study-report `suggestion_arms` object: each figure per arm, and the difference
    first - second with its bootstrap interval."""
    arms = {}
    for arm in (first, second):
        values = {name: _figure(figure, documents, arm) for name, figure in figures.items()}
        arms[arm] = {name: None if math.isnan(v) else v for name, v in values.items()}
    return {
        "arms": arms,
        "difference": {
            name: difference_ci(documents, figure, first, second, resamples, seed)
            for name, figure in figures.items()
        },
    }


def wilson_interval(successes: int, trials: int, z: float = Z95) -> tuple[float, float] | None:
    """Wilson's score interval of a proportion (0-1); None without trials."""
    if trials <= 0:
        return None
    share = successes / trials
    centre = share + z * z / (2 * trials)
    spread = z * math.sqrt(share * (1 - share) / trials + z * z / (4 * trials * trials))
    scale = 1 + z * z / trials
    return max(0.0, (centre - spread) / scale), min(1.0, (centre + spread) / scale)


def decoy_rate(shown: int, taken: int) -> dict[str, Any]:
    """The study-report `decoys` object: decoys shown, taken (accepted or edited) and the
    take rate (0-100) with Wilson's 95% interval."""
    if not 0 <= taken <= shown:
        raise ValueError(f"decoys taken ({taken}) must be within 0..shown ({shown})")
    interval = wilson_interval(taken, shown)
    return {
        "shown": shown,
        "taken": taken,
        "rate": {
            "value": 100 * taken / shown if shown else None,
            "ci95": None if interval is None else [100 * interval[0], 100 * interval[1]],
        },
    }


def decoy_rates(per_worker: Mapping[Hashable, tuple[int, int]]) -> dict[str, Any]:
    """Decoys per worker ((shown, taken) by worker) and overall."""
    shown = sum(s for s, _ in per_worker.values())
    taken = sum(t for _, t in per_worker.values())
    return {
        **decoy_rate(shown, taken),
        "per_worker": {worker: decoy_rate(s, t) for worker, (s, t) in per_worker.items()},
    }
