"""A worker's requests through the Flask test client: open a task, save, move, submit."""

from __future__ import annotations

from typing import Any

from app.core.extensions import db
from app.core.security import capability_csrf_token


def start(client, document_id: str, **params: str) -> str:
    """Open the worker link (committing the test's own transaction first, as between real
    requests); the session token from the redirect."""
    db.session.commit()
    response = client.get(f"/annotate/{document_id}", query_string=params or {"annotator": "a"})
    assert response.status_code == 302, response.data
    return response.headers["Location"].removeprefix("/s/")


def start_study(client, **params: str) -> str:
    """Open the study link /start (committing the test's own transaction first); the token
    of the session it hands out. A study with `completion:` codes or a `prolific_study_id`
    is entered only there (unsigned /annotate/<doc> links create no session)."""
    db.session.commit()
    response = client.get("/start", query_string=params)
    assert response.status_code == 302, response.data
    return response.headers["Location"].removeprefix("/s/")


def csrf(token: str) -> dict[str, str]:
    """The header a page sends on writes."""
    return {"X-CSRFToken": capability_csrf_token("annotate", token)}


def save(client, token: str, annotation: dict[str, Any]):
    """POST one annotation."""
    return client.post(f"/api/sessions/{token}/annotations", json=annotation, headers=csrf(token))


def read_to_the_end(client, token: str, paragraphs: int) -> None:
    """Move through every paragraph, as "No more errors" does."""
    for paragraph_id in range(1, paragraphs):
        answer = client.put(
            f"/api/sessions/{token}/position",
            json={"paragraph_id": paragraph_id},
            headers=csrf(token),
        )
        assert answer.status_code == 200, answer.data


def submit(client, token: str):
    """POST submit."""
    return client.post(f"/api/sessions/{token}/submit", headers=csrf(token))
