"""Time per paragraph, read back: one row per session and paragraph reached.

Shared by `flask export-annotations --what paragraphs`, /research/export/paragraphs.csv
and the dashboard's rushing and fatigue figures. The rows are written by
app/annotate/timings.py (see its definitions of seconds visible and active seconds).
A paragraph is *reached* when its position is at most the session's `furthest`; a
reached paragraph without a timing row (sessions from before timings were recorded)
has null seconds.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

from sqlalchemy import Select, and_, func, select

from app.core.extensions import db
from app.models import Annotation, AnnotationSession, Document, Paragraph, ParagraphTiming
from app.rules.statuses import SessionStatus
from app.studies import current_study_id

PARAGRAPH_COLUMNS = (
    "session_id",
    "document_id",
    "paragraph_id",
    "seconds_visible",
    "active_seconds",
    "annotations",
    "words",
)
BATCH = 1000


def seconds_visible(
    stored: float, visit_started: float | None, session_end: datetime | None
) -> float:
    """Closed visits plus the open one, counted up to the session's end (submit or last
    activity); an open visit the clock cannot place counts nothing."""
    end = None if session_end is None else session_end.timestamp()
    if visit_started is None or end is None or end <= visit_started:
        return stored
    return stored + (end - visit_started)


def iter_paragraph_records(
    document: str | None = None, submitted_only: bool = False
) -> Iterator[dict[str, Any]]:
    """One record per session and paragraph reached (PARAGRAPH_COLUMNS), in document,
    session and paragraph order."""
    live = (
        select(
            Annotation.session_id,
            Annotation.paragraph_id,
            func.count(Annotation.id).label("n"),
        )
        .where(Annotation.deleted_at.is_(None))
        .group_by(Annotation.session_id, Annotation.paragraph_id)
        .subquery()
    )
    timing = ParagraphTiming
    columns = select(
        AnnotationSession.id,
        Document.external_id,
        Paragraph.position,
        Paragraph.text,
        AnnotationSession.status,
        AnnotationSession.submitted_at,
        AnnotationSession.last_seen_at,
        timing.seconds_visible,
        timing.active_seconds,
        timing.visit_started,
        func.coalesce(live.c.n, 0),
    ).select_from(AnnotationSession)
    query = (
        _reached(columns, document, submitted_only)
        .outerjoin(
            timing,
            and_(
                timing.session_id == AnnotationSession.id,
                timing.paragraph_id == Paragraph.position,
            ),
        )
        .outerjoin(
            live,
            and_(
                live.c.session_id == AnnotationSession.id,
                live.c.paragraph_id == Paragraph.position,
            ),
        )
        .order_by(Document.external_id, AnnotationSession.id, Paragraph.position)
    )
    rows = db.session.execute(query.execution_options(yield_per=BATCH, stream_results=True))
    for row in rows:
        (sid, external_id, position, text, status, submitted, seen) = row[:7]
        stored, active, open_since, count = row[7:]
        end = submitted if status == SessionStatus.SUBMITTED else seen
        yield {
            "session_id": str(sid),
            "document_id": external_id,
            "paragraph_id": position,
            "seconds_visible": None
            if stored is None
            else round(seconds_visible(stored, open_since, end), 1),
            "active_seconds": None if active is None else round(active, 1),
            "annotations": count,
            "words": len(text.split()),
        }


def count_paragraph_rows(document: str | None = None, submitted_only: bool = False) -> int:
    """How many rows iter_paragraph_records yields."""
    query = select(func.count()).select_from(AnnotationSession)
    return db.session.scalar(_reached(query, document, submitted_only)) or 0


def _reached(query: Select, document: str | None, submitted_only: bool) -> Select:
    """`query` over (session, paragraph reached) pairs: the paragraphs of each session's
    document up to its furthest, optionally of one document or submitted sessions only."""
    query = query.join(Document, AnnotationSession.document_id == Document.id).join(
        Paragraph,
        and_(
            Paragraph.document_id == Document.id,
            Paragraph.position <= AnnotationSession.furthest,
        ),
    )
    query = query.where(AnnotationSession.study_id == current_study_id())
    if document is not None:
        query = query.where(Document.external_id == document)
    if submitted_only:
        query = query.where(AnnotationSession.status == SessionStatus.SUBMITTED)
    return query
