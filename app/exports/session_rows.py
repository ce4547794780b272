"""The sessions export: one row per annotation session, with its status, progress and counts
(`flask export-annotations --what sessions`, /research/export/sessions.csv)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import func, select

from app.core.extensions import db
from app.crowd.checks.flagged import left_out_workers
from app.crowd.settings import study_settings
from app.exports.record import BATCH, ExportFilter, iso_text
from app.models import Annotation, AnnotationSession, Annotator, Document
from app.studies import current_study_id
from app.taxonomy import Taxonomy, current_taxonomy

# Platform parameters stored per session -> column. Prolific's SESSION_ID is named
# platform_session_id so that `session_id` means the same thing in both exports.
PLATFORM_COLUMNS = (
    ("study_id", "study_id"),
    ("session_id", "platform_session_id"),
    ("assignment_id", "assignment_id"),
    ("hit_id", "hit_id"),
)
SESSION_COLUMNS = (
    "session_id",
    "document_id",
    "annotator_id",
    "platform",
    *(column for _, column in PLATFORM_COLUMNS),
    "status",
    "outcome",
    "started_at",
    "last_seen_at",
    "submitted_at",
    "completion_code",
    "furthest_paragraph",
    "annotations",
    "is_attention_check",
    "arm",
    "flagged",  # the worker is left out of the study's figures (app.crowd.checks.flagged)
    "verification",
    "taxonomy_version",  # the version the session started with (app.studies.taxonomies)
)


def iter_session_records(
    document: str | None = None, taxonomy: Taxonomy | None = None, now: datetime | None = None
) -> Iterator[dict[str, Any]]:
    """One row per annotation session, including those with no annotations at all."""
    taxonomy = taxonomy or current_taxonomy()
    idle_since = (now or datetime.now(UTC)) - timedelta(
        minutes=taxonomy.study.abandon_after_minutes
    )
    live = (
        select(Annotation.session_id, func.count(Annotation.id).label("n"))
        .where(Annotation.deleted_at.is_(None))
        .group_by(Annotation.session_id)
        .subquery()
    )
    query = (
        select(AnnotationSession, Document.external_id, Annotator, func.coalesce(live.c.n, 0))
        .join(Document, AnnotationSession.document_id == Document.id)
        .join(Annotator, AnnotationSession.annotator_id == Annotator.id)
        .outerjoin(live, live.c.session_id == AnnotationSession.id)
        .where(AnnotationSession.study_id == current_study_id())
        .order_by(Document.external_id, AnnotationSession.id)
    )
    if document is not None:
        query = query.where(Document.external_id == document)
    flagged = set(left_out_workers(study_settings()))
    result = db.session.execute(query.execution_options(yield_per=BATCH, stream_results=True))
    for session, document_id, annotator, count in result:
        status = session.status
        last_seen = session.last_seen_at
        if status == "active" and last_seen is not None and last_seen < idle_since:
            status = "abandoned"
        params = session.platform_params or {}
        yield {
            "session_id": str(session.id),
            "document_id": document_id,
            "annotator_id": annotator.label,
            "platform": session.platform,
            **{column: params.get(key) for key, column in PLATFORM_COLUMNS},
            "status": status,
            "outcome": session.outcome,
            "started_at": iso_text(session.started_at),
            "last_seen_at": iso_text(session.last_seen_at),
            "submitted_at": iso_text(session.submitted_at),
            # A code is earned at Submit: one listed earlier could pay unfinished work.
            "completion_code": session.completion_code if session.status == "submitted" else None,
            "furthest_paragraph": session.furthest,
            "annotations": count,
            "is_attention_check": session.is_attention_check,
            "arm": session.arm,
            "flagged": annotator.id in flagged,
            # Prolific's API on the arrival: verified | unverified; empty when not asked.
            "verification": session.verification,
            "taxonomy_version": session.taxonomy_version,
        }
        db.session.expunge(session)  # keep the identity map from growing with the export


def count_sessions(flt: ExportFilter) -> int:
    """How many rows the sessions export holds."""
    query = (
        select(func.count(AnnotationSession.id))
        .join(Document, AnnotationSession.document_id == Document.id)
        .where(AnnotationSession.study_id == current_study_id())
    )
    if flt.document is not None:
        query = query.where(Document.external_id == flt.document)
    return db.session.scalar(query) or 0
