"""The session viewer: one worker's session as they saw it, read-only, for researchers.

The page is the annotator page itself (templates/annotate/session.html and
static/js/annotator/) started with read-only bootstrap data: the same rendering code draws
the highlights and the table. The bootstrap carries no capability token, no CSRF token
and no API address, so a researcher viewing a session can never act in it.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from app.annotate.serializers import annotation_dict, document_dict, document_entities
from app.core.extensions import db
from app.models import Annotation, AnnotationSession
from app.taxonomy import current_taxonomy, max_comment_length


def viewer_bootstrap(session: AnnotationSession) -> dict[str, Any]:
    """What the annotator page's JavaScript starts from, read-only: every paragraph the
    worker reached, with the last one as the Current Paragraph, and their live annotations."""
    live = db.session.scalars(
        select(Annotation)
        .where(Annotation.session_id == session.id, Annotation.deleted_at.is_(None))
        .order_by(Annotation.paragraph_id, Annotation.span_start, Annotation.id)
    ).all()
    document = session.document
    last = min(session.furthest, document.paragraph_count - 1)
    return {
        "document": document_dict(document, last=last),
        "taxonomy": current_taxonomy().to_public_dict(),
        "position": last,
        "furthest": last,
        "status": session.status,
        "annotations": [annotation_dict(a) for a in live],
        "entities": document_entities(document),
        "token": None,
        "csrf_token": None,
        "read_only": True,
        # Researchers read paragraph numbers with their export id ("2 (id 1)").
        "viewer": True,
        "preview": False,
        "api": {"session": None, "annotations": None, "position": None, "submit": None},
        "completion": None,
        "mturk": None,
        "max_comment_length": max_comment_length(),
    }


def session_annotations(session: AnnotationSession) -> list[Annotation]:
    """Every annotation of the session, removed ones included, in export order."""
    return list(
        db.session.scalars(
            select(Annotation)
            .where(Annotation.session_id == session.id)
            .order_by(Annotation.paragraph_id, Annotation.span_start, Annotation.id)
        )
    )
