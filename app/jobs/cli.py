"""`flask analysis-worker`: the queue's worker process (Procfile `worker:`, the compose
file's `worker` service)."""

from __future__ import annotations

import logging

import click
import redis
from flask import current_app
from flask.cli import with_appcontext
from rq import Queue

from app.core.cli_kit import fail
from app.core.rate_limits import storage_name
from app.jobs.kinds import KINDS
from app.jobs.queue import QUEUE_NAME, AnalysisWorker, connection, queue_url


@click.command("analysis-worker")
@click.option("--burst", is_flag=True, help="Stop once the queue is empty (one-off runs, tests).")
@with_appcontext
def analysis_worker_command(burst: bool) -> None:
    """Compute the queued analyses (gamma, ...) into analysis_results, each job in RQ's
    work horse under ANALYSIS_TIME_LIMIT and ANALYSIS_MEMORY_LIMIT; a job whose work
    horse dies is retried. The queue is QUEUE_URL (default: RATELIMIT_STORAGE_URI when it
    is redis:// or rediss://). Logs one line per job on standard error."""
    url = queue_url(current_app.config)
    if url is None:
        fail(
            "No queue: set QUEUE_URL (or RATELIMIT_STORAGE_URI) to a redis:// or rediss:// URL.",
            ["Without Redis, each server computes analyses in a background thread itself."],
        )
    client = connection(url, worker=True)
    try:
        client.ping()
    except redis.RedisError as exc:
        fail(f"The queue {storage_name(url)} does not answer: {exc}")
    jobs_log = logging.getLogger("app.jobs")
    jobs_log.setLevel(logging.INFO)
    if not jobs_log.handlers:  # one line per job on standard error, as RQ's own
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S"))
        jobs_log.addHandler(handler)
    click.echo(
        f"analysis worker: queue {QUEUE_NAME!r} on {storage_name(url)}; kinds: "
        f"{', '.join(sorted(KINDS)) or 'none'}",
        err=True,
    )
    worker = AnalysisWorker([Queue(QUEUE_NAME, connection=client)], connection=client)
    worker.work(burst=burst, logging_level="INFO")
