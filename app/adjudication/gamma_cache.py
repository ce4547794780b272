"""Gamma per document, cached by content, so that no page ever waits for it.

Gamma (app.adjudication.gamma) is a Monte-Carlo estimate that can take seconds per
document, so pages never compute it. A document's gamma is a pure function of its
continuum (every unit: annotator, start, end, category; the annotators who marked
nothing) and of the fixed parameters (GAMMA_SAMPLES random continua, GAMMA_SEED, the
dissimilarity): its key is the SHA-256 of all of these, so a new submitted session or
any change of spans is a new key, never a stale value. Values live in this process's
memory and in one small JSON file per key under GAMMA_CACHE_DIR (default
`<instance>/gamma-cache`), which every worker process and the commands share.

Who fills it: `flask agreement --gamma` and `flask study-report` compute what is
missing (they are commands); the dashboard and the study-report downloads only read it
and hand what is missing to one background process per web worker (`python -m
app.adjudication.gamma_worker JOBFILE`, at a lower CPU priority, one document after the
other; stopped when the web worker exits), showing those documents as pending until a later
load.
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

from flask import current_app

from app.adjudication.gamma import Dissimilarity, Unit, gamma

GAMMA_SAMPLES = 30  # pygamma-agreement's default number of random continua
GAMMA_SEED = 0
MEMORY_SIZE = 20_000
log = logging.getLogger(__name__)

_memory: dict[str, dict[str, float]] = {}
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


def content_key(
    units: Iterable[Unit],
    annotators: Iterable[str],
    samples: int = GAMMA_SAMPLES,
    seed: int = GAMMA_SEED,
    dissimilarity: Dissimilarity | None = None,
) -> str:
    """SHA-256 of everything a document's gamma depends on."""
    d = dissimilarity or Dissimilarity()
    body = {
        "units": sorted([u.annotator, u.start, u.end, u.category] for u in units),
        "annotators": sorted(set(annotators)),
        "samples": samples,
        "seed": seed,
        "d": [d.alpha, d.beta, d.delta_empty],
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


def lookup(key: str, directory: Path) -> dict[str, float] | None:
    """The cached result of this key ({"gamma", "observed", "expected"}), or None."""
    value = _memory.get(key)
    if value is not None:
        return value
    try:
        stored = json.loads((directory / f"{key}.json").read_text("utf-8"))
        value = {name: float(stored[name]) for name in ("gamma", "observed", "expected")}
    except (OSError, ValueError, KeyError, TypeError):
        return None
    _remember(key, value)
    return value


def _remember(key: str, value: dict[str, float]) -> None:
    if len(_memory) >= MEMORY_SIZE:
        _memory.clear()
    _memory[key] = value


def _store(key: str, value: dict[str, float], directory: Path) -> None:
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
    samples: int = GAMMA_SAMPLES,
    seed: int = GAMMA_SEED,
) -> dict[str, float]:
    """{"gamma", "observed", "expected"} of one document, from the cache or computed and
    stored."""
    key = content_key(units, annotators, samples, seed)
    value = lookup(key, directory)
    if value is None:
        result = gamma(units, samples=samples, seed=seed, annotators=annotators)
        value = {"gamma": result.gamma, "observed": result.observed, "expected": result.expected}
        _store(key, value, directory)
    return value


def in_background(jobs: Sequence[tuple[Sequence[Unit], Sequence[str]]], directory: Path) -> None:
    """Compute these documents' gamma (units, annotators) in a background process, unless
    one is still at work (a later page load hands it what is still missing). Never
    raises: a page without gamma is better than no page."""
    global _worker
    with _lock:
        if not jobs or (_worker is not None and _worker.poll() is None):
            return
        payload = {
            "directory": str(directory),
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
    """The background process: compute each job of the file (then remove it)."""
    os.nice(10)  # pages keep the CPU before this background arithmetic
    payload = json.loads(job_file.read_text("utf-8"))
    job_file.unlink(missing_ok=True)
    directory = Path(payload["directory"])
    for rows, annotators in payload["jobs"]:
        units = [Unit(*row) for row in rows]
        try:
            compute(units, annotators, directory)
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
