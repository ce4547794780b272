"""Gamma per document, cached by content, so that no page ever waits for it.

Gamma (app.adjudication.gamma) is a Monte-Carlo estimate that can take seconds per
document, so pages never compute it. A document's gamma is a pure function of its
continuum (every unit: annotator, start, end, category; the annotators who marked
nothing) and of the parameters (GAMMA_SAMPLES random continua, default 100; GAMMA_SEED;
the dissimilarity; ALGORITHM, the version of the computation): its key is the SHA-256 of
all of these, so a new submitted session or any change of spans is a new key, never a
stale value. Values live in this process's memory and in one small JSON file per key
under GAMMA_CACHE_DIR (default `<instance>/gamma-cache`), which every worker process and
the commands share.

Every computation runs under the analysis limits (app.adjudication.gamma_runner): a
document over ANALYSIS_TIME_LIMIT or ANALYSIS_MEMORY_LIMIT is stored as skipped, with the
limits it broke, and reported so (`agreement.gamma.skipped`); it is computed again only
under larger limits.

Who fills it: `flask agreement --gamma` and `flask study-report` compute what is
missing (they are commands); the dashboard and the study-report downloads only read it
and hand what is missing to one background process per web worker (`python -m
app.adjudication.gamma_worker JOBFILE`, one document after the other, each in its
limited child at a lower CPU priority; stopped when the web worker exits), showing those
documents as pending until a later load.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import logging
import os
import subprocess
import sys
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from flask import current_app

from app.adjudication.gamma import EXACT_UNIT_LIMIT, WINDOW, Dissimilarity, Unit
from app.adjudication.gamma_runner import BoundedGamma, Limits

# Random continua for the expected disorder (pygamma-agreement's default is 30; issue 28
# point 8: 100, with the Monte-Carlo standard error reported beside gamma).
DEFAULT_GAMMA_SAMPLES = 100
GAMMA_SEED = 0
# The computation's version: distinct units of an annotator, exact up to EXACT_UNIT_LIMIT
# units, windows of WINDOW beyond (app.adjudication.gamma). A new version is a new key.
ALGORITHM = f"distinct-units/exact<={EXACT_UNIT_LIMIT}/windows-of-{WINDOW}"
MEMORY_SIZE = 20_000
log = logging.getLogger(__name__)

_memory: dict[str, dict[str, Any]] = {}
_lock = threading.Lock()
_worker: subprocess.Popen | None = None
PROJECT_ROOT = Path(__file__).resolve().parents[2]

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


def cache_dir() -> Path:
    """GAMMA_CACHE_DIR, or the instance folder's gamma-cache."""
    configured = current_app.config.get("GAMMA_CACHE_DIR")
    return Path(configured or Path(current_app.instance_path) / "gamma-cache")


def defined(units: Sequence[Unit], annotators: Sequence[str]) -> bool:
    """Gamma needs two annotators and at least one unit."""
    return len(set(annotators)) >= 2 and bool(units)


def lookup(key: str, directory: Path, limits: Limits | None = None) -> dict[str, Any] | None:
    """The cached result of this key: {"gamma", "observed", "expected", "mc_se",
    "method"}, or {"skipped": reason, "limits": [seconds, megabytes]} when it broke the
    limits (only while `limits` are no larger: larger ones may compute it); else None."""
    value = _memory.get(key)
    if value is None:
        try:
            value = _parsed(json.loads((directory / f"{key}.json").read_text("utf-8")))
        except (OSError, ValueError, KeyError, TypeError):
            return None
        _remember(key, value)
    if "skipped" in value and limits is not None and not limits.covers(value["limits"]):
        return None
    return value


def _parsed(stored: dict[str, Any]) -> dict[str, Any]:
    """A stored value in its shape (ValueError, KeyError or TypeError when it is not)."""
    if "skipped" in stored:
        seconds, megabytes = stored["limits"]
        return {"skipped": str(stored["skipped"]), "limits": [float(seconds), int(megabytes)]}
    value: dict[str, Any] = {
        name: float(stored[name]) for name in ("gamma", "observed", "expected")
    }
    value["mc_se"] = None if stored["mc_se"] is None else float(stored["mc_se"])
    value["method"] = str(stored["method"])
    return value


def _remember(key: str, value: dict[str, Any]) -> None:
    if len(_memory) >= MEMORY_SIZE:
        _memory.clear()
    _memory[key] = value


def _store(key: str, value: dict[str, Any], directory: Path) -> None:
    _remember(key, value)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        temporary = directory / f".{key}.{os.getpid()}.{threading.get_ident()}"
        temporary.write_text(json.dumps(value), "utf-8")
        os.replace(temporary, directory / f"{key}.json")  # readers never see half a file
    except OSError as exc:  # a read-only disk costs recomputation, not the figure
        log.warning("gamma cache %s is not writable (%s): kept in memory only", directory, exc)


def compute(
    units: Sequence[Unit],
    annotators: Sequence[str],
    directory: Path,
    runner: BoundedGamma,
    samples: int = DEFAULT_GAMMA_SAMPLES,
    seed: int = GAMMA_SEED,
) -> dict[str, Any]:
    """One document's gamma (lookup's shapes), from the cache or computed by `runner`
    under its limits and stored (a skip too, with the limits it broke)."""
    key = content_key(units, annotators, samples, seed)
    value = lookup(key, directory, runner.limits)
    if value is None:
        value = runner.compute(units, annotators, samples, seed)
        if "skipped" in value:
            value["limits"] = [runner.limits.seconds, runner.limits.megabytes]
        _store(key, value, directory)
    return value


def in_background(
    jobs: Sequence[tuple[Sequence[Unit], Sequence[str]]],
    directory: Path,
    samples: int = DEFAULT_GAMMA_SAMPLES,
    limits: Limits | None = None,
) -> None:
    """Compute these documents' gamma (units, annotators) in a background process, under
    `limits`, unless one is still at work (a later page load hands it what is still
    missing). Never raises: a page without gamma is better than no page."""
    global _worker
    limits = limits or Limits()
    with _lock:
        if not jobs or (_worker is not None and _worker.poll() is None):
            return
        payload = {
            "directory": str(directory),
            "samples": samples,
            "limits": [limits.seconds, limits.megabytes],
            "jobs": [
                [[[u.annotator, u.start, u.end, u.category] for u in units], list(names)]
                for units, names in jobs
            ],
        }
        try:
            directory.mkdir(parents=True, exist_ok=True)
            job_file = directory / f".jobs-{os.getpid()}.json"
            job_file.write_text(json.dumps(payload), "utf-8")
            # A separate Python (gamma_worker.py), so that gamma never holds the web worker's
            # GIL, and no fork of a threaded web worker (a copied lock can hang).
            _worker = subprocess.Popen(  # noqa: S603 (fixed argv, no shell)
                [sys.executable, "-m", "app.adjudication.gamma_worker", str(job_file)],
                cwd=PROJECT_ROOT,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
            )
        except OSError as exc:
            log.warning("gamma could not start in the background (%s): shown as pending", exc)


def compute_jobs(job_file: Path) -> None:
    """The background process: compute each job of the file under its limits, each in
    the limited child at a lower CPU priority (then remove the file)."""
    payload = json.loads(job_file.read_text("utf-8"))
    job_file.unlink(missing_ok=True)
    directory = Path(payload["directory"])
    limits = Limits(*payload["limits"])
    with BoundedGamma(limits, nice=True) as runner:
        for rows, annotators in payload["jobs"]:
            units = [Unit(*row) for row in rows]
            try:
                compute(units, annotators, directory, runner, payload["samples"])
            except Exception:  # a background error must reach the log, not vanish
                log.exception("gamma computation failed")


@atexit.register
def _stop_worker() -> None:
    # The web worker (or test run) is leaving: what is stored stays, the rest waits for
    # the next page load.
    if _worker is not None and _worker.poll() is None:
        _worker.terminate()


def wait_for_background(timeout: float = 60) -> None:
    """Wait until the background process is done (tests)."""
    with _lock:
        worker = _worker
    if worker is not None:
        worker.wait(timeout)
