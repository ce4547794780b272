"""Gamma per document, stored by content in `analysis_results`, so that no page ever
waits for it.

Gamma (app.adjudication.gamma) is a Monte-Carlo estimate that can take seconds per
document, so pages never compute it. A document's gamma is a pure function of its
continuum (every unit: annotator, start, end, category; the annotators who marked
nothing) and of the parameters (GAMMA_SAMPLES random continua, default 100; GAMMA_SEED;
the dissimilarity; ALGORITHM, the version of the computation): its key is the SHA-256 of
all of these, so a new submitted session or any change of spans is a new key, never a
stale value, and a new ALGORITHM never reads an old one. Values are rows of the
`analysis_results` table (kind `gamma`, app.jobs), which every server, worker and
command shares and a restart keeps.

Every computation runs under the analysis limits (app.adjudication.gamma_runner): a
document over ANALYSIS_TIME_LIMIT or ANALYSIS_MEMORY_LIMIT is stored as skipped, with the
limits it broke, and reported so (`agreement.gamma.skipped`); it is computed again only
under larger limits.

Who fills it: `flask agreement --gamma` and `flask study-report` compute what is
missing (they are commands: `compute`); the dashboard and the study-report downloads only
read it and ask the queue for what is missing (app.jobs.queue.submit: RQ's worker, or a
background thread without Redis), showing those documents as pending until a later load.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import threading
from collections.abc import Iterable, Sequence
from typing import Any

from flask import current_app

from app.adjudication.gamma import EXACT_UNIT_LIMIT, WINDOW, WINDOWED, Dissimilarity, Unit
from app.adjudication.gamma_runner import BoundedGamma
from app.jobs import results
from app.jobs.kinds import register
from app.jobs.limits import Limits
from app.jobs.queue import compute_now

# Random continua for the expected disorder (pygamma-agreement's default is 30; issue 28
# point 8: 100, with the Monte-Carlo standard error reported beside gamma).
DEFAULT_GAMMA_SAMPLES = 100
GAMMA_SEED = 0
# The computation's version: distinct units of an annotator, exact up to EXACT_UNIT_LIMIT
# units, windows of WINDOW beyond (app.adjudication.gamma). A new version is a new key.
ALGORITHM = f"distinct-units/exact<={EXACT_UNIT_LIMIT}/windows-of-{WINDOW}"

SpanRow = tuple[int, int, int, str]  # (paragraph_id, start, end, category)


def continuum(
    paragraph_lengths: Sequence[int], readings: Iterable[tuple[str, Iterable[SpanRow]]]
) -> list[Unit]:
    """Units on one position line: paragraphs laid end to end, one character between
    them (a span never crosses paragraphs, so no two paragraphs' spans touch)."""
    offsets, total = [], 0
    for length in paragraph_lengths:
        offsets.append(total)
        total += length + 1
    return [
        Unit(annotator, offsets[p] + start, offsets[p] + end, category)
        for annotator, spans in readings
        for p, start, end, category in spans
    ]


def gamma_samples() -> int:
    """GAMMA_SAMPLES of the running app (default 100)."""
    return int(current_app.config.get("GAMMA_SAMPLES", DEFAULT_GAMMA_SAMPLES))


def analysis_limits() -> Limits:
    """ANALYSIS_TIME_LIMIT and ANALYSIS_MEMORY_LIMIT of the running app."""
    return Limits.from_config(current_app.config)


def content_key(
    units: Iterable[Unit],
    annotators: Iterable[str],
    samples: int = DEFAULT_GAMMA_SAMPLES,
    seed: int = GAMMA_SEED,
    dissimilarity: Dissimilarity | None = None,
) -> str:
    """SHA-256 of everything a document's gamma depends on."""
    d = dissimilarity or Dissimilarity()
    body = {
        "units": sorted({(u.annotator, u.start, u.end, u.category) for u in units}),
        "annotators": sorted(set(annotators)),
        "samples": samples,
        "seed": seed,
        "d": [d.alpha, d.beta, d.delta_empty],
        "algorithm": ALGORITHM,
    }
    text = json.dumps(body, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def defined(units: Sequence[Unit], annotators: Sequence[str]) -> bool:
    """Gamma needs two annotators and at least one unit."""
    return len(set(annotators)) >= 2 and bool(units)


def payload(
    units: Sequence[Unit],
    annotators: Sequence[str],
    samples: int = DEFAULT_GAMMA_SAMPLES,
    seed: int = GAMMA_SEED,
) -> dict[str, Any]:
    """A document's gamma job: everything its value depends on, as JSON."""
    return {
        "units": [[u.annotator, u.start, u.end, u.category] for u in units],
        "annotators": list(annotators),
        "samples": samples,
        "seed": seed,
    }


def _computed(runner: BoundedGamma, job: dict[str, Any]) -> dict[str, Any]:
    units = [Unit(*row) for row in job["units"]]
    value = runner.compute(units, job["annotators"], job["samples"], job["seed"])
    if "skipped" not in value:
        value["approximate"] = value["method"] == WINDOWED
    return value


# The background's child process (one per process, reused from job to job; a job of RQ
# runs in a work horse of its own, whose child ends with it).
_runner: BoundedGamma | None = None
_runner_lock = threading.Lock()


def compute_gamma(job: dict[str, Any], limits: Limits) -> dict[str, Any]:
    """The `gamma` kind's computation: {"gamma", "observed", "expected", "mc_se",
    "method", "approximate"}, or {"skipped": reason}; in the limited child process, at a
    lower CPU priority."""
    global _runner
    with _runner_lock:
        if _runner is None or _runner.limits != limits:
            if _runner is not None:
                _runner.close()
            _runner = BoundedGamma(limits, nice=True)
        return _computed(_runner, job)


@atexit.register
def _stop_runner() -> None:
    if _runner is not None:
        _runner.close()


GAMMA = register("gamma", ALGORITHM, compute_gamma, limited=True)


def value_of(result: results.Result | None) -> dict[str, Any] | None:
    """A stored result in the shape the figures read: {"gamma", "observed", "expected",
    "mc_se", "method"}, {"skipped": reason} (an error counts as skipped "error"), or None
    while there is none."""
    if result is None or not result.ready:
        return None
    if result.status == results.ERROR:
        return {"skipped": "error"}
    return dict(result.value or {})


def lookup(keys: Iterable[str], limits: Limits) -> dict[str, dict[str, Any]]:
    """The usable values of these keys, by key (see value_of)."""
    found = results.read(GAMMA, keys)
    return {
        key: value_of(row)  # type: ignore[misc]
        for key, row in found.items()
        if results.usable(row, limits)
    }


def compute(
    units: Sequence[Unit],
    annotators: Sequence[str],
    runner: BoundedGamma,
    samples: int = DEFAULT_GAMMA_SAMPLES,
    seed: int = GAMMA_SEED,
) -> dict[str, Any]:
    """One document's gamma for a command (value_of's shapes): stored, or computed here
    by `runner` under its limits and stored (a skip too, with its limits); when another
    process is computing it, its value once stored."""
    key = content_key(units, annotators, samples, seed)
    job = payload(units, annotators, samples, seed)
    result = compute_now(GAMMA, key, job, lambda j, _limits: _computed(runner, j))
    return value_of(result) or {"skipped": "error"}
