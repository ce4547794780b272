"""Analysis jobs: on RQ over Redis when there is one, else in a background thread.

`submit(kind, jobs)` is how a page asks for results it lacks (app.jobs.results decides
which keys this process must enqueue, so two servers never enqueue one key twice). Where
the jobs run:

- **RQ** on the Redis of QUEUE_URL; by default the rate limits' RATELIMIT_STORAGE_URI when
  that is a `redis://` or `rediss://` URL (its query too: Heroku Redis's `rediss://...
  ?ssl_cert_reqs=none`, as for the rate limits). `flask analysis-worker` computes them,
  each job in RQ's work horse (a fork per job) under ANALYSIS_TIME_LIMIT and
  ANALYSIS_MEMORY_LIMIT; a work horse that dies is retried (RQ Retry, MAX_RETRIES).
- **In-process** without a Redis URL (`make run` on SQLite): one background thread per
  process computes them one after the other (gamma still in its limited child process).

Either way the job is `perform(kind, key, payload)`: claim the key's row, compute, store.
A page never computes, and `flask agreement --gamma` / `flask study-report` compute what
is missing themselves (app.jobs.results.claim with `retake`).
"""

from __future__ import annotations

import atexit
import logging
import os
import queue as local_queue
import resource
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import redis
from flask import Flask, current_app
from rq import Queue, Retry, Worker, get_current_job
from rq.job import Job, JobStatus
from rq.timeouts import JobTimeoutException

from app.core.extensions import db
from app.core.rate_limits import storage_name
from app.jobs import results
from app.jobs.kinds import KINDS, Compute, Kind
from app.jobs.limits import Limits

QUEUE_NAME = "analyses"
MAX_RETRIES = 2  # after the first run: MAX_ATTEMPTS computations in all
# Room for the job's own reads and writes beyond a self-limited kind's time limit (RQ
# kills a work horse past its job's timeout: a hung job is retried, not held for ever).
JOB_MARGIN_SECONDS = 120
WORKER_SILENT = timedelta(minutes=5)  # the dashboard warns after this long without one
# A page's calls to Redis never wait long (the queue is not what pages are for).
WEB_REDIS_OPTIONS = {"socket_connect_timeout": 0.5, "socket_timeout": 2}
IN_PROCESS_VALUES = ("", "inprocess", "in-process", "memory://")
LIVE_JOB = (JobStatus.QUEUED, JobStatus.STARTED, JobStatus.SCHEDULED, JobStatus.DEFERRED)
log = logging.getLogger(__name__)


def queue_url(config: Mapping[str, Any]) -> str | None:
    """The Redis URL of the analysis queue, or None: in-process. QUEUE_URL when set
    (`inprocess` forces in-process), else the rate limits' storage when it is Redis."""
    explicit = config.get("QUEUE_URL")
    if explicit is not None:
        return None if explicit.strip().lower() in IN_PROCESS_VALUES else explicit.strip()
    storage = str(config.get("RATELIMIT_STORAGE_URI") or "")
    return storage if storage.startswith(("redis://", "rediss://", "unix://")) else None


_connections: dict[str, redis.Redis] = {}
_connections_lock = threading.Lock()


def connection(url: str, *, worker: bool = False) -> redis.Redis:
    """A Redis client for this URL (redis-py's from_url: `rediss://` is TLS, and its
    query's `ssl_cert_reqs=none` accepts Heroku Redis's self-signed certificate). Pages
    share one client per URL and process, with short timeouts; a worker gets its own,
    without (RQ blocks on the queue)."""
    if worker:
        return redis.Redis.from_url(url)
    with _connections_lock:
        client = _connections.get(url)
        if client is None:
            client = _connections[url] = redis.Redis.from_url(url, **WEB_REDIS_OPTIONS)
        return client


def job_id(kind: Kind, key: str) -> str:
    """The RQ job id of one key: the same on every server, so a job is found by its key."""
    return f"analysis-{kind.name}-{key}"


def job_timeout(kind: Kind, limits: Limits) -> int:
    """RQ's timeout of a job: the time limit (a self-limited kind gets a margin on top)."""
    if limits.seconds <= 0:
        return -1
    margin = JOB_MARGIN_SECONDS if kind.limited else 0
    return int(limits.seconds + margin + 0.999)


def submit(
    kind: Kind,
    jobs: Mapping[str, dict[str, Any]],
    found: Mapping[str, results.Result] | None = None,
) -> None:
    """Ask for these keys' results ({key: payload}; `found`: their rows, when the caller
    has read them): what has no usable row gets one, pending, and the keys this process is
    to enqueue go to the queue (RQ, or this process's background thread). Never raises: a
    page without a figure is better than no page."""
    if not jobs:
        return
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    limits = Limits.from_config(app.config)
    try:
        if found is None:
            found = results.read(kind, jobs)
        mine = results.request(kind, list(jobs), found, limits)
    except Exception:  # the database said no: the next page asks again
        db.session.rollback()
        log.exception("analysis %s: could not ask for %d results", kind.name, len(jobs))
        return
    if not mine:
        return
    url = queue_url(app.config)
    if url is None:
        _in_process(app, [(kind, key, jobs[key]) for key in mine])
        return
    try:
        _enqueue(connection(url), kind, {key: jobs[key] for key in mine}, limits)
    except redis.RedisError as exc:  # the rows stay pending; taken over after their lease
        log.warning(
            "analysis queue %s does not answer (%s): %d %s results wait",
            storage_name(url),
            exc,
            len(mine),
            kind.name,
        )


def _enqueue(
    client: redis.Redis, kind: Kind, jobs: Mapping[str, dict[str, Any]], limits: Limits
) -> None:
    """One RQ job per key, unless a live one already has its id (a taken-over key)."""
    keys = list(jobs)
    existing = Job.fetch_many([job_id(kind, key) for key in keys], connection=client)
    live = {job.id for job in existing if job is not None and job.get_status() in LIVE_JOB}
    analysis_queue = Queue(QUEUE_NAME, connection=client)
    data = [
        Queue.prepare_data(
            perform,
            args=(kind.name, key, jobs[key]),
            timeout=job_timeout(kind, limits),
            job_id=job_id(kind, key),
            description=f"{kind.name} {key[:12]}",
            result_ttl=3600,
            failure_ttl=7 * 24 * 3600,
            retry=Retry(max=MAX_RETRIES),
        )
        for key in keys
        if job_id(kind, key) not in live
    ]
    if data:
        analysis_queue.enqueue_many(data)


def perform(kind_name: str, key: str, payload: dict[str, Any]) -> str:
    """The job: claim the key, compute it under the analysis limits, store it. Returns
    what happened: "done", "skipped", "error" or "not claimed" (done or running
    elsewhere)."""
    kind = KINDS.get(kind_name)
    if kind is None:
        raise LookupError(f"no analysis kind {kind_name!r} in this process (app/cli.py)")
    job = get_current_job()
    token = job.id if job is not None else f"local-{os.getpid()}-{uuid.uuid4().hex[:12]}"
    return compute_and_store(kind, key, payload, token, in_work_horse=job is not None)


def compute_and_store(
    kind: Kind, key: str, payload: dict[str, Any], token: str, *, in_work_horse: bool = False
) -> str:
    """Claim, compute, store (see perform)."""
    limits = Limits.from_config(current_app.config)
    if not results.claim(kind, key, token, limits):
        return "not claimed"
    started = time.monotonic()
    try:
        if in_work_horse and not kind.limited:
            value = under_limits(kind, payload, limits)
        else:
            value = kind.compute(payload, limits)
    except Exception as exc:  # a bug is not cured by retrying: stored, and logged
        log.exception("analysis %s %s failed", kind.name, key[:12])
        results.fail(kind, key, token, f"{type(exc).__name__}: {exc}")
        return "error"
    results.store(kind, key, token, value, limits)
    outcome = "skipped" if "skipped" in value else "done"
    log.info(
        "analysis %s %s computed (%s) in %.2f s",
        kind.name,
        key[:12],
        outcome,
        time.monotonic() - started,
    )
    return outcome


def under_limits(kind: Kind, payload: dict[str, Any], limits: Limits) -> dict[str, Any]:
    """In RQ's work horse (a process of its own for this job): its address space limited
    to ANALYSIS_MEMORY_LIMIT while the kind computes; RQ's job timeout (the time limit)
    interrupts it."""
    previous = resource.getrlimit(resource.RLIMIT_AS)
    if limits.megabytes > 0:
        size = limits.megabytes * 1024 * 1024
        hard = previous[1]
        resource.setrlimit(
            resource.RLIMIT_AS, (size if hard == resource.RLIM_INFINITY else min(size, hard), hard)
        )
    try:
        return kind.compute(payload, limits)
    except MemoryError:
        return {"skipped": "memory"}
    except JobTimeoutException:
        return {"skipped": "time"}
    finally:
        resource.setrlimit(resource.RLIMIT_AS, previous)


def compute_now(
    kind: Kind,
    key: str,
    job: dict[str, Any],
    compute: Compute | None = None,
    poll_seconds: float = 0.5,
) -> results.Result:
    """A command's way to a result: the stored one, else computed here (by `compute`,
    default the kind's, under the analysis limits) and stored; when another process is
    computing it, its result once stored (taken over past its lease)."""
    limits = Limits.from_config(current_app.config)
    token = f"command-{os.getpid()}-{uuid.uuid4().hex[:12]}"
    while True:
        row = results.read(kind, [key]).get(key)
        if results.usable(row, limits):
            return row  # type: ignore[return-value]
        if results.claim(kind, key, token, limits, retake=True):
            try:
                value = (compute or kind.compute)(job, limits)
            except Exception as exc:
                results.fail(kind, key, token, f"{type(exc).__name__}: {exc}")
                raise
            results.store(kind, key, token, value, limits)
            continue  # read back what was stored
        time.sleep(poll_seconds)


# In-process: one background thread per process and its queue of (app, kind, key, payload).
_local: local_queue.Queue = local_queue.Queue()
_thread: threading.Thread | None = None
_thread_lock = threading.Lock()


def _in_process(app: Flask, jobs: list[tuple[Kind, str, dict[str, Any]]]) -> None:
    global _thread
    with _thread_lock:
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_work_in_process, name="analyses", daemon=True)
            _thread.start()
    for kind, key, payload in jobs:
        _local.put((app, kind, key, payload))


def _work_in_process() -> None:
    while True:
        app, kind, key, payload = _local.get()
        try:
            with app.app_context():
                compute_and_store(kind, key, payload, f"local-{os.getpid()}-{uuid.uuid4().hex}")
        except Exception:  # a background error must reach the log, not end the thread
            log.exception("analysis %s %s: background computation failed", kind.name, key[:12])
        finally:
            _local.task_done()


def wait_for_background(timeout: float = 60) -> None:
    """Wait until this process's background thread has computed what it was given (tests,
    commands); TimeoutError after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while _local.unfinished_tasks:
        if time.monotonic() > deadline:
            raise TimeoutError(f"analyses still running after {timeout} s")
        time.sleep(0.02)


def forget_waiting_jobs() -> int:
    """Drop the jobs this process's background thread has not started; returns how many.
    Their rows stay pending and are asked for again after their lease (results.request)."""
    dropped = 0
    while True:
        try:
            _local.get_nowait()
        except local_queue.Empty:
            return dropped
        _local.task_done()
        dropped += 1


def stop_background(timeout: float = 60) -> None:
    """Forget the waiting jobs and wait for the one under way: nothing this process was
    given writes after it returns (a test's teardown, before the next test's database)."""
    forget_waiting_jobs()
    wait_for_background(timeout)


@atexit.register
def _forget_local_jobs() -> None:
    # Leaving: what is stored stays; rows left pending are asked for again later.
    forget_waiting_jobs()


@dataclass(frozen=True)
class QueueState:
    """Where the jobs run, and when a worker was last seen (the dashboard's line)."""

    where: str  # "in-process", or the queue's URL without credentials
    reachable: bool = True
    last_seen: datetime | None = None  # the latest worker heartbeat; None: none registered

    @property
    def in_process(self) -> bool:
        """Jobs run in this process's background thread."""
        return self.where == "in-process"

    @property
    def worker_silent(self) -> bool:
        """A queue with no worker seen for WORKER_SILENT: what is pending waits."""
        if self.in_process:
            return False
        return self.last_seen is None or datetime.now(UTC) - self.last_seen > WORKER_SILENT


def queue_state() -> QueueState:
    """The queue of the running app and its workers' latest heartbeat (one Redis round
    trip per registered worker; a Redis that does not answer says so)."""
    url = queue_url(current_app.config)
    if url is None:
        return QueueState("in-process")
    name = storage_name(url)
    try:
        client = connection(url)
        workers = Worker.all(connection=client, queue=Queue(QUEUE_NAME, connection=client))
    except redis.RedisError:
        return QueueState(name, reachable=False)
    beats = [w.last_heartbeat for w in workers if w.last_heartbeat is not None]
    last = max(beats, default=None)
    if last is not None and last.tzinfo is None:  # RQ stores UTC without a zone
        last = last.replace(tzinfo=UTC)
    return QueueState(name, last_seen=last)


class AnalysisWorker(Worker):
    """RQ's worker, whose work horse (a fork of it) opens database connections of its own:
    the parent's pooled ones, if any, are not shared across the fork."""

    def main_work_horse(self, job: Job, queue: Queue) -> None:
        """Drop the inherited pools (without closing the parent's sockets), then RQ's."""
        for engine in db.engines.values():
            engine.dispose(close=False)
        super().main_work_horse(job, queue)
