"""Benchmark: the researcher dashboard's first view for a large study, on PostgreSQL.

    python -m bench.dashboard_bench [--documents 1000 10000] [--annotators 3]
                                    [--annotations 30] [--repeat 9] [--fresh]

For each size it seeds (bench/seed.py, COPY) a PostgreSQL database of documents x
annotators sessions x annotations per session, kept between runs under a name that says
its size (`falte_dashbench_<documents>x<annotators>x<annotations>`; --fresh seeds again,
--drop drops them), then measures GET /research/ as a logged-in researcher in this process
(Flask's test client: the time is the server's, with no network): the median of
--repeat views after one cold view (templates compiled, sentences split; then
`gc.freeze()` as gunicorn.conf.py does in each worker), its size in bytes and its SQL
statements (and this process's CPU time per view: the app's own work, without
PostgreSQL's, which waits less on a loaded machine), and the same for a trivial page
(/healthz) as the baseline.
Two states of the study-level figures (app/research/study_figures.py): pending (nothing
stored yet: the page asks the queue and shows "pending") and stored (the
`dashboard_figures` job has run). The queue's worker does not run during the
measurement: what a page asks of it stays pending (a web server only enqueues).

Targets at 10,000 documents: under 300 ms of server time and under 200 KB.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import time

from sqlalchemy import create_engine, select, text
from sqlalchemy.engine import make_url

from app.core.extensions import db
from app.models import Researcher
from app.studies import default_study, share
from bench.common import _admin_engine, drop_database
from bench.seed import seed
from tests.support.synthetic_study import count_statements

BENCH_PASSWORD = "bench-password-123"  # a throwaway account in a throwaway database
TARGET_MS, TARGET_BYTES = 300.0, 200_000


def _database(documents: int, annotators: int, annotations: int, fresh: bool) -> str:
    """The URL of the seeded database of this size: made (migrated, seeded) when missing,
    stale (another migration head) or `fresh`."""
    from flask_migrate import upgrade
    from werkzeug.security import generate_password_hash

    from app import create_app

    name = f"falte_dashbench_{documents}x{annotators}x{annotations}"
    base, admin = _admin_engine()
    url = base.set(database=name).render_as_string(hide_password=False)
    with admin.connect() as conn:
        exists = conn.scalar(text("SELECT 1 FROM pg_database WHERE datname = :n"), {"n": name})
    admin.dispose()
    head = _head()
    if exists and not fresh:
        engine = create_engine(url)
        with engine.connect() as conn:
            current = conn.scalar(text("SELECT version_num FROM alembic_version"))
            seeded = conn.scalar(text("SELECT count(*) FROM annotations"))
        engine.dispose()
        if current == head and seeded == documents * annotators * annotations:
            print(f"  reusing {name}", flush=True)
            return url
    if exists:
        drop_database(url)
    _, admin = _admin_engine()
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    app = create_app({"APP_ENV": "testing", "SQLALCHEMY_DATABASE_URI": url})
    with app.app_context():
        upgrade()
        db.session.add(
            Researcher(
                email="bench@example.org", password_hash=generate_password_hash(BENCH_PASSWORD)
            )
        )
        db.session.commit()
        db.engine.dispose()
    print(f"  seeding {name} ...", flush=True)
    started = time.perf_counter()
    seed(
        url,
        documents=documents,
        annotators_per_document=annotators,
        annotations=documents * annotators * annotations,
        workers=max(annotators, documents * annotators // 10),
        check_documents=max(1, documents // 50),
        quiet=True,
    )
    print(f"  seeded in {time.perf_counter() - started:.0f} s", flush=True)
    return url


def _head() -> str:
    from alembic.script import ScriptDirectory

    return ScriptDirectory("migrations").get_current_head()


def _make_app(url: str):
    from app import create_app
    from app.jobs import queue
    from tests.support.apps import make_test_config

    # The web server only enqueues: the queue's worker does not run while pages are timed.
    queue._in_process = lambda app, jobs: None
    return create_app(make_test_config(url, WTF_CSRF_ENABLED=False, QUEUE_URL="inprocess"))


def _client(app):
    client = app.test_client()
    with app.app_context():
        researcher = db.session.scalars(select(Researcher)).first()
        # An editor of the default study, as `flask create-researcher` makes one (a
        # database seeded before studies had roles has the account without one).
        share(default_study(), researcher, "editor")
        researcher_id = researcher.id
    with client.session_transaction() as session:
        session["_user_id"] = str(researcher_id)
        session["_fresh"] = True
    return client


def measure(app, client, path: str, repeat: int) -> dict:
    """Cold ms, median ms, bytes and statements of GET path."""
    started = time.perf_counter()
    first = client.get(path)
    cold = (time.perf_counter() - started) * 1000
    if first.status_code != 200:
        raise SystemExit(f"{path} answered {first.status_code}")
    # As gunicorn's post_worker_init does (gunicorn.conf.py): what is allocated so far lives
    # as long as the process, out of the collector's sight. Without it, this process's full
    # collections walk the seeding's and the app's objects on every request.
    gc.collect()
    gc.freeze()
    times, cpu = [], []
    for _ in range(repeat):
        with app.app_context(), count_statements() as statements:
            started, started_cpu = time.perf_counter(), time.process_time()
            response = client.get(path)
            times.append((time.perf_counter() - started) * 1000)
            cpu.append((time.process_time() - started_cpu) * 1000)
    return {
        "cold_ms": cold,
        "median_ms": statistics.median(times),
        "cpu_ms": statistics.median(cpu),
        "bytes": len(response.get_data()),
        "statements": len(statements),
    }


def _store_figures(app) -> float:
    """Run the dashboard_figures job as the worker would; its seconds."""
    from app.crowd.settings import study_settings
    from app.jobs.queue import compute_now
    from app.research import study_figures

    with app.test_request_context("/research/"):
        settings = study_settings()
        prefix = study_figures._prefix(False)
        content = json.dumps(study_figures.fingerprint(settings), sort_keys=True)
        key = prefix + study_figures.DASHBOARD_FIGURES.key(content)[:48]
        started = time.perf_counter()
        job = {"study_id": study_figures.current_study_id(), "include_flagged": False}
        compute_now(study_figures.DASHBOARD_FIGURES, key, job)
        return time.perf_counter() - started


def run_size(documents: int, args) -> list[dict]:
    """Measure one study size; rows for the table."""
    print(
        f"{documents} documents x {args.annotators} annotators x {args.annotations} "
        "annotations per session",
        flush=True,
    )
    url = _database(documents, args.annotators, args.annotations, args.fresh)
    app = _make_app(url)
    client = _client(app)
    with app.app_context():
        db.session.execute(text("DELETE FROM analysis_results"))
        db.session.commit()
    rows = []
    base = measure(app, client, "/healthz", args.repeat)
    rows.append({"documents": documents, "view": "/healthz (baseline)", **base})
    for label, path in (
        ("first view, figures pending", "/research/"),
        ("page 3, sorted by annotations desc", "/research/?sort=-annotations&page=3"),
        ("filter in-progress + search", "/research/?filter=in-progress&q=doc-1"),
    ):
        rows.append(
            {"documents": documents, "view": label, **measure(app, client, path, args.repeat)}
        )
    job_s = _store_figures(app)
    print(f"  dashboard_figures job: {job_s:.1f} s (the worker's time, not the page's)")
    stored = measure(app, client, "/research/", args.repeat)
    rows.append({"documents": documents, "view": "first view, figures stored", **stored})
    with app.app_context():
        db.engine.dispose()
    if args.drop:
        drop_database(url)
    return rows


def main(argv: list[str] | None = None) -> int:
    """Seed (or reuse), measure, print; exit 1 when a target is missed at the largest size."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--annotators", type=int, default=3)
    parser.add_argument("--annotations", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--fresh", action="store_true", help="seed again even if kept")
    parser.add_argument("--drop", action="store_true", help="drop the databases afterwards")
    args = parser.parse_args(argv)
    print(f"database server: {make_url(os.environ.get('TEST_DATABASE_URL', '')).host}")
    rows = [row for size in args.documents for row in run_size(size, args)]
    print(f"load average (1 min): {os.getloadavg()[0]:.2f}")
    print(
        f"{'documents':>9}  {'view':<38} {'cold ms':>8} {'median ms':>9} {'x base':>7} "
        f"{'app CPU ms':>10} {'KB':>7} {'SQL':>4}"
    )
    baseline = {}
    for row in rows:
        if row["view"].startswith("/healthz"):
            baseline[row["documents"]] = row["median_ms"]
        ratio = row["median_ms"] / baseline[row["documents"]]
        print(
            f"{row['documents']:>9}  {row['view']:<38} {row['cold_ms']:8.1f} "
            f"{row['median_ms']:9.1f} {ratio:7.1f} {row['cpu_ms']:10.1f} "
            f"{row['bytes'] / 1000:7.1f} "
            f"{row['statements']:>4}"
        )
    largest = max(args.documents)
    first = [r for r in rows if r["documents"] == largest and r["view"].startswith("first")]
    ok = all(r["median_ms"] < TARGET_MS and r["bytes"] < TARGET_BYTES for r in first)
    print(
        f"{'OK' if ok else 'MISSED'}: first view at {largest} documents < {TARGET_MS:.0f} ms "
        f"and < {TARGET_BYTES // 1000} KB"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
