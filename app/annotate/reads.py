"""The annotator page's reads (GET /s/<token>, GET /api/sessions/<token>) without the
ORM's unit of work or a transaction: two SELECTs (the session with its document, then its
live annotations) on the request's autocommit connection, and the activity UPDATE when
one is due (at most once a minute, and at the page's first load). Every worker opens the
page at the start of a task, so this is the cost of a study's opening burst (see README
"Performance").

The views returned have the attributes the serializers and the page's template read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Row, bindparam, select

from app.annotate.sessions import touch_due
from app.annotate.timings import record_visit
from app.annotate.writes import ANNOTATIONS, DOCUMENTS, SESSIONS, TOUCH
from app.languages import direction_of
from app.models import utcnow
from app.persistence import autocommit_connection, end_orm_transaction
from app.statuses import SessionStatus


@dataclass(frozen=True, slots=True)
class DocumentView:
    """The document columns the page shows (no gold answers, no metadata)."""

    id: int
    external_id: str
    title: str | None
    entities: list[str] | None
    content_hash: str
    paragraph_count: int
    language: str | None = None  # BCP 47: the page's lang and dir (app.languages)

    @property
    def direction(self) -> str | None:
        """The text direction of the language's script (rtl or ltr); None without a language."""
        return direction_of(self.language)


@dataclass(frozen=True, slots=True)
class SessionView:
    """A session as the page and GET /api/sessions/<token> show it."""

    id: int
    token: str
    status: str
    position: int
    furthest: int
    platform: str
    platform_params: dict[str, Any] | None
    completion_code: str
    outcome: str | None
    document: DocumentView


_SESSION = (
    select(
        SESSIONS.c.id,
        SESSIONS.c.token,
        SESSIONS.c.status,
        SESSIONS.c.position,
        SESSIONS.c.furthest,
        SESSIONS.c.platform,
        SESSIONS.c.platform_params,
        SESSIONS.c.completion_code,
        SESSIONS.c.outcome,
        SESSIONS.c.last_seen_at,
        SESSIONS.c.page_loaded_at,
        SESSIONS.c.document_id,
        DOCUMENTS.c.external_id,
        DOCUMENTS.c.title,
        DOCUMENTS.c.entities,
        DOCUMENTS.c.content_hash,
        DOCUMENTS.c.paragraph_count,
        DOCUMENTS.c.language,
    )
    .join_from(SESSIONS, DOCUMENTS)
    .where(SESSIONS.c.token == bindparam("token"))
    .execution_options(prepare=True)  # app.prepared: the page and GET of every session
)

_LIVE_ANNOTATIONS = (
    select(ANNOTATIONS)
    .where(ANNOTATIONS.c.session_id == bindparam("sid"), ANNOTATIONS.c.deleted_at.is_(None))
    .order_by(
        ANNOTATIONS.c.paragraph_id,
        ANNOTATIONS.c.span_start,
        ANNOTATIONS.c.span_end,
        ANNOTATIONS.c.id,
    )
    .execution_options(prepare=True)
)


def read_session(token: str) -> SessionView | None:
    """The session this capability token opens, activity recorded (a session marked
    abandoned comes back to life); None when there is none."""
    if not token or len(token) > 64:
        return None
    connection = autocommit_connection()
    row = connection.execute(_SESSION, {"token": token}).first()
    if row is None:
        end_orm_transaction()
        return None
    status = row.status
    # The first load is written at once: until then the session holds its place only
    # for a minute (app.assignment.claims).
    if row.page_loaded_at is None or touch_due(row.last_seen_at, status):
        connection.execute(TOUCH, {"sid": row.id, "now": utcnow()})
        if status == SessionStatus.ABANDONED:  # as TOUCH sets it
            status = SessionStatus.ACTIVE
    if status != SessionStatus.SUBMITTED:  # the page shows the current paragraph: a visit starts
        record_visit(row.id, row.position, utcnow())
    end_orm_transaction()
    document = DocumentView(
        row.document_id,
        row.external_id,
        row.title,
        row.entities,
        row.content_hash,
        row.paragraph_count,
        row.language,
    )
    return SessionView(
        row.id,
        row.token,
        status,
        row.position,
        row.furthest,
        row.platform,
        row.platform_params,
        row.completion_code,
        row.outcome,
        document,
    )


def live_annotations(session_id: int) -> list[Row]:
    """The session's annotations that were not removed, by paragraph and offset."""
    rows = autocommit_connection().execute(_LIVE_ANNOTATIONS, {"sid": session_id}).all()
    end_orm_transaction()
    return rows
