"""Helpers of the assignment tests (GET /start): a study's documents, workers arriving,
the sessions they get."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from pathlib import Path

from app.core.extensions import db
from app.models import AnnotationSession, Document, Paragraph, utcnow
from app.studies import current_study_id
from tests.support.taxonomies import taxonomy_variant
from tests.support.worker_api import token_from

GOLD = [{"paragraph_id": 0, "start": 0, "end": 4, "category": "new-person"}]


def taxonomy_with(tmp_path: Path, **study) -> str:
    """A copy of the default taxonomy with other study settings."""
    lines = "".join(f"  {key}: {value}\n" for key, value in study.items())
    return str(taxonomy_variant(tmp_path, study=lines))


def add_documents(count: int, checks: int = 0) -> list[int]:
    """`count` regular documents then `checks` attention checks; returns their ids in order."""
    ids = []
    for index in range(count + checks):
        is_check = index >= count
        document = Document(
            study_id=current_study_id(),
            external_id=f"{'check' if is_check else 'doc'}-{index:03d}",
            content_hash=f"{index:064x}",
            paragraph_count=2,
            gold=GOLD if is_check else None,
        )
        document.paragraphs = [
            Paragraph(position=0, text="Anna met Bob. They talked."),
            Paragraph(position=1, text="Then it rained."),
        ]
        db.session.add(document)
        db.session.flush()
        ids.append(document.id)
    db.session.commit()
    return ids


def start(client, worker: str, **params):
    """GET /start as the worker `annotator=worker`."""
    return client.get("/start", query_string={"annotator": worker, **params})


def session_of(response) -> AnnotationSession:
    """The session a /start response redirected to."""
    token = token_from(response)
    db.session.expire_all()
    return db.session.scalars(db.select(AnnotationSession).filter_by(token=token)).one()


def occupied() -> Counter:
    """Submitted + active sessions per document id (whether or not they hold a place)."""
    db.session.expire_all()
    rows = db.session.execute(
        db.select(AnnotationSession.document_id).where(
            AnnotationSession.status.in_(("active", "submitted"))
        )
    )
    return Counter(document_id for (document_id,) in rows)


def assert_no_tasks(response) -> None:
    """The answer of /start when no document has a place for the worker."""
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    assert "No tasks left" in html
    assert "completion code:" not in html.lower()


def idle_for(session: AnnotationSession, minutes: float, column: str = "last_seen_at") -> None:
    """Pretend the session's last activity (or another moment, `column`) was `minutes` ago."""
    db.session.execute(
        db.update(AnnotationSession)
        .where(AnnotationSession.id == session.id)
        .values({column: utcnow() - timedelta(minutes=minutes)})
    )
    db.session.commit()
