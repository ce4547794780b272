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

`seed_study` is also used by the tests to build realistic studies quickly.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import event, insert, select

from app.core.extensions import db
from app.models import (
    Annotation,
    AnnotationSession,
    Annotator,
    Document,
    Paragraph,
    Researcher,
    new_completion_code,
    new_token,
)
from app.studies import current_study_id

WORDS = (
    "the captain found a letter under the lighthouse door and nobody in the village "
    "knew who had written it her brother sailed north while the storm grew worse"
).split()
NAMES = ("Mara", "Jonas", "Elin", "Dr. Holm", "Mr. Berg", "Sofie", "Arvid")
BENCH_PASSWORD = "bench-password-123"  # a throwaway account in a throwaway database


def _sentence(rng: random.Random) -> str:
    words = rng.choices(WORDS, k=rng.randint(6, 14))
    return f"{rng.choice(NAMES)} {' '.join(words)}{rng.choice('..!?')}"


def _paragraph(rng: random.Random) -> str:
    return " ".join(_sentence(rng) for _ in range(rng.randint(3, 5)))


def seed_study(
    documents: int,
    annotators: int,
    annotations: int,
    *,
    categories: tuple[str, ...],
    paragraphs: int = 5,
    workers: int | None = None,
    check_documents: int = 0,
    seed: int = 7,
    tag: str = "",
    now: datetime | None = None,
) -> list[int]:
    """Insert a study in bulk: documents x annotators sessions x annotations each.

    Every session is submitted except the last annotator's on every fifth document
    (active); every tenth annotation is removed (soft-deleted). Workers are shared across
    documents (each does about ten); the first `check_documents` documents carry gold
    spans. `tag` keeps external ids unique when seeding twice. Returns the document ids.
    """
    rng = random.Random(seed)
    now = now or datetime.now(UTC)
    workers = workers or max(annotators, documents * annotators // 10)
    texts = [[_paragraph(rng) for _ in range(paragraphs)] for _ in range(documents)]
    doc_rows = []
    study_id = current_study_id()
    for d in range(documents):
        gold = None
        if d < check_documents:
            first = texts[d][0]
            gold = [
                {"paragraph_id": 0, "start": 0, "end": first.index(" "), "category": categories[0]}
            ]
        doc_rows.append(
            {
                "study_id": study_id,
                "external_id": f"{tag}doc-{d + 1:05d}",
                "title": f"Generated summary {d + 1}",
                "meta": {},
                "entities": [],
                "gold": gold,
                "content_hash": hashlib.sha256(f"{tag}{d}".encode()).hexdigest(),
                "paragraph_count": paragraphs,
                "created_at": now,
                "updated_at": now,
            }
        )
    doc_ids = _insert_returning(Document, doc_rows)
    _insert(
        Paragraph,
        [
            {"document_id": doc_ids[d], "position": p, "text": text}
            for d in range(documents)
            for p, text in enumerate(texts[d])
        ],
    )
    worker_ids = _insert_returning(
        Annotator,
        [
            {"platform": "prolific", "external_id": f"{tag}worker-{w + 1:05d}", "created_at": now}
            for w in range(workers)
        ],
    )
    session_rows, plans = [], []
    for d in range(documents):
        for j in range(annotators):
            active = j == annotators - 1 and (d + 1) % 5 == 0
            started = now - timedelta(minutes=rng.randint(20, 600))
            session_rows.append(
                {
                    "study_id": study_id,
                    "token": new_token(),
                    "document_id": doc_ids[d],
                    "annotator_id": worker_ids[(d * annotators + j) % workers],
                    "status": "active" if active else "submitted",
                    "position": paragraphs - 1,
                    "furthest": paragraphs - 1,
                    "taxonomy_version": "bench",
                    "platform": "prolific",
                    "platform_params": {},
                    "completion_code": new_completion_code(),
                    "is_attention_check": d < check_documents,
                    "started_at": started,
                    "last_seen_at": now if active else started + timedelta(minutes=25),
                    "submitted_at": None if active else started + timedelta(minutes=25),
                }
            )
            plans.append((d, started))
    session_ids = _insert_returning(AnnotationSession, session_rows)
    annotation_rows = []
    for session_id, (d, started) in zip(session_ids, plans, strict=True):
        for k in range(annotations):
            position = rng.randrange(paragraphs)
            paragraph = texts[d][position]
            start = rng.randrange(len(paragraph) - 12)
            end = start + rng.randint(3, 12)
            annotation_rows.append(
                {
                    "session_id": session_id,
                    "client_id": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
                    "paragraph_id": position,
                    "span_start": start,
                    "span_end": end,
                    "span_text": paragraph[start:end],
                    "category": rng.choice(categories),
                    "comment": None,
                    "created_at": started,
                    "deleted_at": now if k % 10 == 9 else None,
                }
            )
    _insert(Annotation, annotation_rows)
    db.session.commit()
    return doc_ids


def _insert_returning(model: type, rows: list[dict]) -> list[int]:
    """Bulk insert that gives back the new ids in the order of `rows`."""
    statement = insert(model).returning(model.id, sort_by_parameter_order=True)
    return list(db.session.scalars(statement, rows))


def _insert(model: type, rows: list[dict], batch: int = 5000) -> None:
    # executemany through Core: one round trip per batch (insertmanyvalues on PostgreSQL).
    for first in range(0, len(rows), batch):
        db.session.execute(insert(model), rows[first : first + batch])


@contextmanager
def count_statements() -> Iterator[list[str]]:
    """Collect the SQL statements the engine executes inside the block."""
    statements: list[str] = []

    def before(conn, cursor, statement, parameters, context, executemany):
        statements.append(statement)

    engine = db.engine
    event.listen(engine, "before_cursor_execute", before)
    try:
        yield statements
    finally:
        event.remove(engine, "before_cursor_execute", before)


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
