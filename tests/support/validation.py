"""Helpers for the export and validation tests: documents, sessions and annotations written
straight to the database (the annotate API has its own tests), and validator API calls."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from app.core.extensions import db
from app.core.security import capability_csrf_token
from app.crowd.identity import WorkerIdentity, get_or_create_annotator
from app.imports.document_formats import DocumentInput
from app.imports.document_store import import_documents
from app.models import Annotation, AnnotationSession
from app.taxonomy import current_taxonomy
from tests.support.worker_api import token_from

DOCS = {
    "doc-a": (
        "Zoë met 🚢 Łukasz at the harbour. Zoë smiled.",
        'The ship left at dawn, "quietly"; Łukasz waved.\nThen he slept.',
    ),
    "doc-b": ("Anna wrote a letter. Anna wrote a letter again.", "Nobody answered it."),
}


def make_documents(docs: dict[str, tuple[str, ...]] = DOCS) -> None:
    """Import documents through the real importer."""
    import_documents([DocumentInput(doc_id, None, paras) for doc_id, paras in docs.items()])


def make_session(
    document_id: str,
    annotator: str,
    *,
    status: str = "active",
    platform: str = "direct",
    params: dict[str, str] | None = None,
    last_seen: datetime | None = None,
    furthest: int = 0,
) -> AnnotationSession:
    """An annotation session for (document, annotator), stored."""
    from app.models import Document

    document = db.session.scalars(db.select(Document).filter_by(external_id=document_id)).one()
    who = get_or_create_annotator(WorkerIdentity(platform, annotator))
    now = datetime.now(UTC)
    session = AnnotationSession(
        document_id=document.id,
        annotator_id=who.id,
        status=status,
        platform=platform,
        platform_params=params or {},
        taxonomy_version=current_taxonomy().version,
        furthest=furthest,
        position=furthest,
        last_seen_at=last_seen or now,
        submitted_at=now if status == "submitted" else None,
    )
    db.session.add(session)
    db.session.commit()
    return session


def add_annotation(
    session: AnnotationSession,
    paragraph_id: int,
    needle: str,
    category: str,
    *,
    occurrence: int = 0,
    paired: tuple[int, str] | None = None,
    comment: str | None = None,
    removed: bool = False,
    created: datetime | None = None,
) -> Annotation:
    """Store an annotation on the `occurrence`-th `needle` of a paragraph (code points)."""
    text = paragraph_text(session, paragraph_id)
    start = -1
    for _ in range(occurrence + 1):
        start = text.index(needle, start + 1)
    values: dict[str, Any] = {}
    if paired is not None:
        p_par, p_text = paired
        p_start = paragraph_text(session, p_par).index(p_text)
        values = {
            "paired_paragraph_id": p_par,
            "paired_start": p_start,
            "paired_end": p_start + len(p_text),
            "paired_text": p_text,
        }
    annotation = Annotation(
        session_id=session.id,
        client_id=f"c-{session.id}-{paragraph_id}-{start}-{category}-{removed}",
        paragraph_id=paragraph_id,
        span_start=start,
        span_end=start + len(needle),
        span_text=needle,
        category=category,
        comment=comment,
        created_at=created or datetime.now(UTC),
        deleted_at=datetime.now(UTC) + timedelta(seconds=1) if removed else None,
        **values,
    )
    db.session.add(annotation)
    db.session.commit()
    return annotation


def paragraph_text(session: AnnotationSession, paragraph_id: int) -> str:
    """The stored text of a paragraph of the session's document."""
    return session.document.paragraphs[paragraph_id].text


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    """Write records as JSON lines."""
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), "utf-8")
    return path


def item_record(
    id_: str, text: str, source: str | None = "gpt-4", document_id: str = "doc-b"
) -> dict[str, Any]:
    """A generic item record (JSON lines): a span of `text` in a document of DOCS; without a
    source when `source` is None."""
    record = {"id": id_, "source": source, "document_id": document_id, "span": {"text": text}}
    return {key: value for key, value in record.items() if value is not None}


def start_validator(client, round_name: str, **params: str) -> str:
    """Open the validator link and return the session token from the redirect."""
    return token_from(
        client.get(f"/validate/{round_name}", query_string=params or {"annotator": "v1"})
    )


def vcsrf(token: str) -> dict[str, str]:
    """The validator page's CSRF header."""
    return {"X-CSRFToken": capability_csrf_token("validate", token)}


def next_item(client, token: str) -> dict[str, Any]:
    """GET next; asserts 200."""
    response = client.get(f"/api/validators/{token}/next")
    assert response.status_code == 200, response.data
    return response.get_json()


def judge(client, token: str, item_id: str, verdict: str = "agree", reasons=None, **extra):
    """POST a judgment with the right CSRF header."""
    body = {"item_id": item_id, "verdict": verdict, "reasons": reasons or [], **extra}
    return client.post(f"/api/validators/{token}/judgments", json=body, headers=vcsrf(token))


def public_ids(round_name: str) -> dict[str, str]:
    """external id -> the public id validators see, of a round's items."""
    from app.models import ValidationItem, ValidationRound

    rows = db.session.execute(
        db.select(ValidationItem.external_id, ValidationItem.public_id)
        .join(ValidationRound, ValidationRound.id == ValidationItem.round_id)
        .where(ValidationRound.name == round_name)
    ).all()
    db.session.commit()
    return dict(rows)
