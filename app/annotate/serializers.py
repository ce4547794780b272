"""JSON shapes of the worker API and the page's bootstrap data.

A worker never sees a document's external id: it can name an attention check (a planted
check is `<source>-check-<seed>`) or anything else the researchers put in it. Worker pages
and the worker API give the document the session's opaque id instead (`public_document_id`,
docs/crowd-studies.md "What workers see"); the researchers' pages keep the external id.
"""

from __future__ import annotations

import hashlib
import hmac
from functools import lru_cache
from typing import Any

from flask import current_app, url_for
from sqlalchemy import Row

from app.annotate.reads import DocumentView, SessionView
from app.core.security import capability_csrf_token
from app.crowd.sessions import completion_for, document_texts, is_submitted
from app.models import Annotation, Document, Paragraph
from app.rules.entities import entities_for
from app.rules.platforms import mturk_target
from app.rules.statuses import SessionStatus
from app.suggestions.arms import session_arm
from app.suggestions.decisions import session_suggestions, stored_suggestion_id
from app.taxonomy import current_taxonomy, max_comment_length


def paragraph_dict(paragraph: Paragraph) -> dict[str, Any]:
    """{"paragraph_id", "text"}."""
    return {"paragraph_id": paragraph.position, "text": paragraph.text}


def annotation_dict(annotation: Annotation | Row) -> dict[str, Any]:
    """The stored annotation as the API returns it."""
    paired = None
    if annotation.paired_paragraph_id is not None:
        paired = {
            "paragraph_id": annotation.paired_paragraph_id,
            "start": annotation.paired_start,
            "end": annotation.paired_end,
            "text": annotation.paired_text,
        }
    return {
        "id": annotation.client_id,
        "category": annotation.category,
        "span": {
            "paragraph_id": annotation.paragraph_id,
            "start": annotation.span_start,
            "end": annotation.span_end,
            "text": annotation.span_text,
        },
        "paired_span": paired,
        "comment": annotation.comment,
        "severity": annotation.severity,
        "created_at": annotation.created_at.isoformat(),
        **_made_from(annotation),
    }


def _made_from(annotation: Annotation | Row) -> dict[str, Any]:
    """An annotation made from a suggestion names it and its origin; others add nothing
    (the API's answer for the workers' own annotations stays as it was)."""
    pk = getattr(annotation, "suggestion_id", None)
    if pk is None:
        return {}
    return {"suggestion_id": stored_suggestion_id(pk), "origin": annotation.origin}


def document_entities(document: Document | DocumentView) -> list[str]:
    """Coreference cue strings for this document under the taxonomy's `entities` mode."""
    mode = current_taxonomy().entities
    own = list(document.entities or [])
    if mode == "none" or own or mode == "document":
        return entities_for(mode, own, [])
    return list(_auto_entities(document.id, document.content_hash))


@lru_cache(maxsize=256)
def _auto_entities(document_id: int, content_hash: str) -> tuple[str, ...]:
    """Auto-detected names of a document's text, memoised by its content hash."""
    return tuple(entities_for("auto", [], list(document_texts(document_id, content_hash))))


def public_document_id(token: str) -> str:
    """The id a worker's page and API give the session's document: `doc-` and 20 hex digits
    of an HMAC of the session token (a key derived from SECRET_KEY), stable for the
    session, the same for no two sessions, and telling nothing of the document."""
    key = hmac.new(
        str(current_app.config["SECRET_KEY"]).encode(), b"falte public document id", hashlib.sha256
    ).digest()
    return "doc-" + hmac.new(key, token.encode(), hashlib.sha256).hexdigest()[:20]


def worker_document(document: Document | DocumentView, token: str) -> DocumentView:
    """The document as a worker is shown it: its external id replaced by the session's
    public id (`token`: the session's capability token)."""
    return DocumentView(
        document.id,
        public_document_id(token),
        document.title,
        document.entities,
        document.content_hash,
        document.paragraph_count,
        document.language,
    )


def preview_document(document: Document) -> DocumentView:
    """The document as an MTurk HIT preview shows it (no session yet): an id as opaque as
    a session's."""
    return worker_document(document, f"preview\n{document.id}")


def document_dict(document: Document | DocumentView, *, last: int) -> dict[str, Any]:
    """The document as the page gets it: only the paragraphs 0..last (those reached)."""
    texts = document_texts(document.id, document.content_hash)
    return {
        "id": document.external_id,
        "title": document.title,
        "language": document.language,
        "direction": document.direction,
        "total_paragraphs": document.paragraph_count,
        "paragraphs": [
            {"paragraph_id": position, "text": text}
            for position, text in enumerate(texts[: last + 1])
        ],
    }


def session_state(session: SessionView, annotations: list[Row]) -> dict[str, Any]:
    """GET /api/sessions/<token>: the document so far, taxonomy, progress and the live
    annotations (reads.live_annotations)."""
    document = worker_document(session.document, session.token)
    return {
        "document": document_dict(document, last=session.furthest),
        "taxonomy": current_taxonomy().to_public_dict(),
        "position": session.position,
        "furthest": session.furthest,
        "status": SessionStatus.SUBMITTED if is_submitted(session) else SessionStatus.ACTIVE,
        "annotations": [annotation_dict(a) for a in annotations],
        "entities": document_entities(document),
    }


def api_urls(token: str) -> dict[str, str]:
    """The endpoints the page calls; DELETE goes to `annotations + "/" + id`."""
    return {
        "session": url_for("annotate_api.get_session", token=token),
        "annotations": url_for("annotate_api.save", token=token),
        "position": url_for("annotate_api.position", token=token),
        "submit": url_for("annotate_api.submit", token=token),
        "heartbeat": url_for("annotate_api.heartbeat", token=token),
        # A rejection goes to `suggestions + "/" + id + "/rejection"`.
        "suggestions": url_for("annotate_api.suggestions", token=token),
    }


def page_bootstrap(session: SessionView, annotations: list[Row]) -> dict[str, Any]:
    """Everything the annotator page's JavaScript starts from (rendered with |tojson)."""
    submitted = is_submitted(session)
    return {
        **session_state(session, annotations),
        "token": session.token,
        "csrf_token": capability_csrf_token("annotate", session.token),
        "read_only": submitted,
        "preview": False,
        "api": api_urls(session.token),
        "completion": completion_for(session).to_dict() if submitted else None,
        "mturk": mturk_target(session.platform, session.platform_params or {}),
        "max_comment_length": max_comment_length(),
        "suggestions": page_suggestions(session),
    }


def page_suggestions(session: SessionView) -> list[dict[str, Any]]:
    """The suggestions the page shows: those of the paragraphs reached, for a session in
    the show arm (its arm is chosen at its first load, app.suggestions.arms)."""
    if session_arm(session.id) != "show":
        return []
    return session_suggestions(session.id, session.document.id, session.furthest)


def preview_bootstrap(document: Document) -> dict[str, Any]:
    """An MTurk HIT preview: the first paragraph, read-only, no session and no API."""
    return {
        "document": document_dict(preview_document(document), last=0),
        "taxonomy": current_taxonomy().to_public_dict(),
        "position": 0,
        "furthest": 0,
        "status": "preview",
        "annotations": [],
        "entities": document_entities(document),
        "token": None,
        "csrf_token": None,
        "read_only": True,
        "preview": True,
        "api": {
            "session": None,
            "annotations": None,
            "position": None,
            "submit": None,
            "heartbeat": None,
            "suggestions": None,
        },
        "completion": None,
        "mturk": None,
        "max_comment_length": max_comment_length(),
        "suggestions": [],
    }
