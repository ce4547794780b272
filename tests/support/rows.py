"""Rows written straight to the database for tests that need a study's state without
going through the worker API (which has its own tests): annotators and annotations."""

from __future__ import annotations

import uuid
from typing import Any

from app.core.extensions import db
from app.models import Annotation, Annotator


def direct_annotator(worker: str) -> Annotator:
    """The direct annotator `worker`, created (and flushed, so it has its id) when new."""
    found = db.session.scalar(db.select(Annotator).filter_by(platform="direct", external_id=worker))
    if found is None:
        found = Annotator(platform="direct", external_id=worker)
        db.session.add(found)
        db.session.flush()
    return found


def add_span(
    session_id: int, paragraph_id: int, start: int, text: str, category: str, **fields: Any
) -> Annotation:
    """Add (not commit) an annotation of `text` starting at code point `start` of a
    paragraph; `fields` set the rest (client_id: a fresh UUID unless given)."""
    annotation = Annotation(
        session_id=session_id,
        client_id=fields.pop("client_id", None) or str(uuid.uuid4()),
        paragraph_id=paragraph_id,
        span_start=start,
        span_end=start + len(text),
        span_text=text,
        category=category,
        **fields,
    )
    db.session.add(annotation)
    return annotation
