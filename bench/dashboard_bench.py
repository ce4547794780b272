"""Benchmark: the researcher dashboard for a large study.

    python -m bench.dashboard_bench [--documents 1000] [--annotators 3] [--annotations 30]
                                    [--database-url URL] [--repeat 5]

Seeds a fresh database (a temporary SQLite file unless --database-url names an empty,
migrated database) with bulk inserts, then renders /research/ as a logged-in researcher
and prints the median time, the number of SQL statements per render, and the ratio to two
baselines measured in the same run: the same page on an empty study, and a bare SELECT
of the same rows the dashboard reads. Target: under 500 ms for 1000 x 3 x 30 (median of
renders after the first), with the same statement count as the empty study. The first
render also fills the per-process memo of sentence splits and per-document agreement
figures (app/research/dashboard.py); its time is printed separately.

The study is seeded by `seed_study` of tests/support/synthetic_study.py, which the tests
use too to build realistic studies quickly.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from sqlalchemy import select

from app.core.extensions import db
from app.models import (
    Annotation,
    AnnotationSession,
    Annotator,
    Document,
    Paragraph,
    Researcher,
)
from tests.support.synthetic_study import count_statements, seed_study

BENCH_PASSWORD = "bench-password-123"  # a throwaway account in a throwaway database


def _login(app, client) -> None:
    with app.app_context():
        researcher = db.session.scalars(select(Researcher)).first()
        if researcher is None:
            from werkzeug.security import generate_password_hash

            researcher = Researcher(
                email="bench@example.org", password_hash=generate_password_hash(BENCH_PASSWORD)
            )
            db.session.add(researcher)
            db.session.commit()
        researcher_id = researcher.id
    with client.session_transaction() as session:
        session["_user_id"] = str(researcher_id)
        session["_fresh"] = True


def time_dashboard(app, repeat: int) -> tuple[float, int, float]:
    """Median milliseconds per GET /research/, statements per render, and the first render's
    milliseconds (templates compiled, sentences split and connections opened on the way)."""
    client = app.test_client()
    _login(app, client)
    started = time.perf_counter()
    client.get("/research/")
    first_ms = (time.perf_counter() - started) * 1000
    times, counts = [], []
    for _ in range(repeat):
        with app.app_context(), count_statements() as statements:
            started = time.perf_counter()
            response = client.get("/research/")
            times.append((time.perf_counter() - started) * 1000)
            counts.append(len(statements))
        if response.status_code != 200:
            raise SystemExit(f"/research/ answered {response.status_code}")
    return statistics.median(times), max(counts), first_ms


def time_bare_select(app, repeat: int) -> float:
    """Median milliseconds to SELECT the rows the dashboard reads, without any work."""
    queries = [
        select(Document.id, Document.external_id, Document.title, Document.gold),
        select(Paragraph.document_id, Paragraph.text),
        select(AnnotationSession.id, AnnotationSession.status, Annotator.external_id).join(
            Annotator
        ),
        select(
            Annotation.session_id,
            Annotation.paragraph_id,
            Annotation.span_start,
            Annotation.span_end,
            Annotation.category,
        ),
    ]
    times = []
    with app.app_context():
        for _ in range(repeat):
            started = time.perf_counter()
            for query in queries:
                db.session.execute(query).all()
            times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def _make_app(database_url: str):
    from app import create_app
    from config.settings import normalise_database_url
    from tests.conftest import make_test_config

    url = normalise_database_url(database_url)
    return create_app(make_test_config(url, WTF_CSRF_ENABLED=False))


def _migrate(app) -> None:
    from flask_migrate import upgrade

    with app.app_context():
        upgrade()


def main(argv: list[str] | None = None) -> int:
    """Seed, measure, print; exit 1 when the target is missed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, default=1000)
    parser.add_argument("--annotators", type=int, default=3)
    parser.add_argument("--annotations", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--target-ms", type=float, default=500.0)
    parser.add_argument(
        "--database-url", help="an empty database to use (default: a temporary SQLite file)"
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        empty_url = f"sqlite:///{Path(tmp) / 'empty.sqlite3'}"
        full_url = args.database_url or f"sqlite:///{Path(tmp) / 'bench.sqlite3'}"
        empty_app, app = _make_app(empty_url), _make_app(full_url)
        _migrate(empty_app)
        _migrate(app)
        print(f"database: {app.config['SQLALCHEMY_DATABASE_URI'].split('@')[-1]}", flush=True)
        print(
            f"seeding {args.documents} documents x {args.annotators} annotators x "
            f"{args.annotations} annotations ...",
            flush=True,
        )
        started = time.perf_counter()
        with app.app_context():
            from app.taxonomy import current_taxonomy

            seed_study(
                args.documents,
                args.annotators,
                args.annotations,
                categories=current_taxonomy().keys,
                check_documents=max(1, args.documents // 50),
            )
        print(f"  seeded in {time.perf_counter() - started:.1f} s", flush=True)
        empty_ms, empty_count, _ = time_dashboard(empty_app, args.repeat)
        full_ms, full_count, first_ms = time_dashboard(app, args.repeat)
        bare_ms = time_bare_select(app, args.repeat)
        for each in (empty_app, app):
            with each.app_context():
                db.engine.dispose()
    print(f"dashboard, empty study:      {empty_ms:8.1f} ms  {empty_count} statements")
    print(f"dashboard, seeded study:     {full_ms:8.1f} ms  {full_count} statements (median)")
    print(f"  first render (cold caches): {first_ms:8.1f} ms")
    print(f"bare SELECT of the same rows:{bare_ms:8.1f} ms")
    print(f"load average (1 min):         {os.getloadavg()[0]:8.2f}")
    print(f"ratio to the empty study:    {full_ms / empty_ms:8.1f} x")
    print(f"ratio to the bare SELECT:    {full_ms / bare_ms:8.1f} x")
    ok = full_ms < args.target_ms and full_count == empty_count
    verdict = "OK" if ok else "MISSED"
    print(
        f"{verdict}: target < {args.target_ms:.0f} ms with a constant statement count "
        f"({full_count} vs {empty_count})"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
