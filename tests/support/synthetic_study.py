"""A synthetic study inserted in bulk (documents x annotators sessions x annotations), for
the tests that need a realistic study quickly and for `python -m bench.dashboard_bench`;
and a counter of the SQL statements a block runs."""

from __future__ import annotations

import hashlib
import random
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

from sqlalchemy import event, insert

from app.core.extensions import db
from app.models import (
    Annotation,
    AnnotationSession,
    Annotator,
    Document,
    Paragraph,
    new_completion_code,
    new_token,
)
from app.studies import current_study_id

WORDS = (
    "the captain found a letter under the lighthouse door and nobody in the village "
    "knew who had written it her brother sailed north while the storm grew worse"
).split()
NAMES = ("Mara", "Jonas", "Elin", "Dr. Holm", "Mr. Berg", "Sofie", "Arvid")


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
