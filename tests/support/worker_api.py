"""A worker's requests through the Flask test client: open a task, save, move, submit; the
sample document most worker-API tests use, and the envelope of an error answer."""

from __future__ import annotations

import re
import uuid
from datetime import timedelta
from typing import Any

from app.core.extensions import db
from app.core.security import capability_csrf_token
from app.imports.document_formats import DocumentInput
from app.imports.document_store import import_documents
from app.models import Annotation, AnnotationSession, Annotator, ParagraphTiming, utcnow

PARAGRAPHS = (
    "Zoë met 🚢 Łukasz at the harbour. Zoë smiled.",
    "The ship left at dawn. Łukasz waved at the ship.",
    "Later, he said nothing about the ship.",
)


def token_from(response) -> str:
    """The capability token of the page a response redirects to: /s/<token> (a worker's
    task) or /v/<token> (a validator's round)."""
    assert response.status_code in (302, 303), (
        response.status_code,
        response.get_data(as_text=True)[:500],
    )
    location = response.headers["Location"]
    match = re.fullmatch(r"/[sv]/([A-Za-z0-9_-]+)", location)
    assert match, location
    return match.group(1)


def make_document(
    external_id: str = "doc-1", paragraphs: tuple[str, ...] = PARAGRAPHS, **extra: Any
) -> None:
    """Import one document through the real importer."""
    import_documents(
        [DocumentInput(external_id, extra.pop("title", "A voyage"), paragraphs, **extra)]
    )


def start(client, document_id: str = "doc-1", **params: str) -> str:
    """Open the worker link (committing the test's own transaction first, as between real
    requests: a worker's first open then takes its one-statement path on PostgreSQL,
    app.crowd.opening); the session token from the redirect. Without parameters the
    direct annotator `a` opens it."""
    db.session.commit()
    response = client.get(f"/annotate/{document_id}", query_string=params or {"annotator": "a"})
    return token_from(response)


def start_session(client, document_id: str = "doc-1", **params: str) -> str:
    """`start`, by the direct annotator alice unless other parameters are given."""
    return start(client, document_id, **(params or {"annotator": "alice"}))


def start_study(client, **params: str) -> str:
    """Open the study link /start (committing the test's own transaction first); the token
    of the session it hands out. A study with `completion:` codes or a `prolific_study_id`
    is entered only there (unsigned /annotate/<doc> links create no session)."""
    db.session.commit()
    return token_from(client.get("/start", query_string=params))


def csrf(token: str) -> dict[str, str]:
    """The header a page sends on writes."""
    return {"X-CSRFToken": capability_csrf_token("annotate", token)}


def span(paragraph_id: int, needle: str, occurrence: int = 0) -> dict[str, Any]:
    """A span dict for the `occurrence`-th match of `needle` in PARAGRAPHS (code points)."""
    text = PARAGRAPHS[paragraph_id]
    start_at = -1
    for _ in range(occurrence + 1):
        start_at = text.index(needle, start_at + 1)
    return {
        "paragraph_id": paragraph_id,
        "start": start_at,
        "end": start_at + len(needle),
        "text": needle,
    }


def quote(paragraph_id: int, text: str, start: int, end: int) -> dict[str, Any]:
    """The span of text[start:end] in paragraph `paragraph_id`, whose text is `text`."""
    return {"paragraph_id": paragraph_id, "start": start, "end": end, "text": text[start:end]}


def body(**overrides: Any) -> dict[str, Any]:
    """A valid singleton annotation in paragraph 0 of PARAGRAPHS."""
    data = {
        "id": str(uuid.uuid4()),
        "category": "ungrammatical",
        "span": span(0, "Łukasz"),
        "paired_span": None,
        "comment": None,
    }
    data.update(overrides)
    return data


def save(client, token: str, data: Any, headers: dict[str, str] | None = None):
    """POST an annotation with the right CSRF header unless others are given."""
    return client.post(
        f"/api/sessions/{token}/annotations",
        json=data,
        headers=csrf(token) if headers is None else headers,
    )


def move(client, token: str, paragraph_id: Any):
    """PUT the position."""
    return client.put(
        f"/api/sessions/{token}/position", json={"paragraph_id": paragraph_id}, headers=csrf(token)
    )


def read_to_the_end(client, token: str, paragraphs: int) -> None:
    """Move through every paragraph, as "No more errors" does."""
    for paragraph_id in range(1, paragraphs):
        answer = move(client, token, paragraph_id)
        assert answer.status_code == 200, answer.data


def submit(client, token: str, **kwargs: Any):
    """POST submit."""
    return client.post(f"/api/sessions/{token}/submit", headers=csrf(token), **kwargs)


def error_of(response) -> dict[str, Any]:
    """The envelope's error object (and proof that the body is the envelope)."""
    payload = response.get_json()
    assert set(payload) == {"error"}
    assert set(payload["error"]) == {"code", "message", "details"}
    assert payload["error"]["message"]
    return payload["error"]


def delete_all_work() -> None:
    """Delete every session, its annotations and timings, and every annotator (as before an
    import of an export into the same database)."""
    for model in (Annotation, ParagraphTiming, AnnotationSession, Annotator):
        db.session.execute(db.delete(model))
    db.session.commit()


def session_row(token: str) -> AnnotationSession:
    """The stored session, read fresh."""
    db.session.expire_all()
    return db.session.scalars(db.select(AnnotationSession).filter_by(token=token)).one()


def make_stale(token: str, minutes: int = 10):
    """Move the session's last_seen_at into the past, as if `minutes` had passed; return
    that moment (aware, in UTC, on both databases: app.models.UTCDateTime)."""
    row = session_row(token)
    row.last_seen_at = utcnow() - timedelta(minutes=minutes)
    db.session.commit()
    return row.last_seen_at
