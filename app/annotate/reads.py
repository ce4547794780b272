"""The annotator page's reads (GET /s/<token>, GET /api/sessions/<token>) without the
ORM's unit of work or a transaction, on the request's autocommit connection: the session
with its document, its activity written when due (at most once a minute, and at the
page's first load) and the visit of the paragraph it shows started, in one statement on
PostgreSQL (three on SQLite); then its live annotations. Every worker opens the page at
the start of a task, so this is the cost of a study's opening burst (see
docs/performance.md, "Why the worker's calls are cheap").

The views returned have the attributes the serializers and the page's template read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Row, bindparam, func, or_, select, update

from app.annotate.timings import record_visit, visit_params, visit_statement
from app.annotate.writes import ACTIVITY, ANNOTATIONS, DOCUMENTS, SESSIONS, TOUCH, TOUCH_IS_DUE
from app.core.persistence import autocommit_connection, end_orm_transaction
from app.crowd.sessions import TOUCH_INTERVAL, touch_due
from app.models import utcnow
from app.rules.languages import direction_of
from app.rules.statuses import SessionStatus


@dataclass(frozen=True, slots=True)
class DocumentView:
    """The document columns the page shows (no gold answers, no metadata)."""

    id: int
    external_id: str
    title: str | None
    entities: list[str] | None
    content_hash: str
    paragraph_count: int
    language: str | None = None  # BCP 47: the page's lang and dir (app.rules.languages)

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
        SESSIONS.c.task_opened_at,
        SESSIONS.c.document_id,
        DOCUMENTS.c.external_id,
        DOCUMENTS.c.title,
        DOCUMENTS.c.entities,
        DOCUMENTS.c.content_hash,
        DOCUMENTS.c.paragraph_count,
        DOCUMENTS.c.language,
    )
    .join_from(SESSIONS, DOCUMENTS)
    # Not "token": in the page's UPDATE (a CTE) a parameter named like a column would be
    # taken as a value to SET.
    .where(SESSIONS.c.token == bindparam("session_token"))
    .execution_options(prepare=True)  # app.core.prepared: the page and GET of every session
)

# The page and GET /api/sessions serve the task only once the steps before it are done
# (their callers ask app.crowd.journey first): the first read marks the task open, which the
# moves' guard asks for (app.annotate.writes).
_TASK_OPENED = {"task_opened_at": func.coalesce(SESSIONS.c.task_opened_at, bindparam("now"))}
_TOUCH_AND_OPEN = TOUCH.values(_TASK_OPENED)

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


def _read_and_record():
    """PostgreSQL: the session's read, its activity write when due and the visit of the
    paragraph it shows, as one statement (data-modifying CTEs see the row as read; the
    status is the one the activity write left)."""
    found = _SESSION.cte("found")
    touched = (
        update(SESSIONS)
        .where(
            SESSIONS.c.id == select(found.c.id).scalar_subquery(),
            # or the page's first load, or the task's first read
            or_(
                TOUCH_IS_DUE,
                SESSIONS.c.page_loaded_at.is_(None),
                SESSIONS.c.task_opened_at.is_(None),
            ),
        )
        .values({**ACTIVITY, **_TASK_OPENED})
        .returning(SESSIONS.c.status)
        .cte("touched")
    )
    shown = select(found.c.id, found.c.position).where(found.c.status != SessionStatus.SUBMITTED)
    visiting = shown.cte("visiting")
    visit = visit_statement(visiting, select(visiting.c.position).scalar_subquery()).cte("visit")
    columns = [
        func.coalesce(select(touched.c.status).scalar_subquery(), found.c.status).label("status")
        if column.name == "status"
        else column
        for column in found.c
    ]
    return (
        select(*columns).select_from(found).add_cte(touched, visit).execution_options(prepare=True)
    )


_READ_AND_RECORD = _read_and_record()


def _read_sqlite(connection, token: str) -> tuple[Row | None, str]:
    """SQLite (no data-modifying CTEs): the read, then the activity write when due, then
    the visit; the row, and the status as the activity write left it."""
    row = connection.execute(_SESSION, {"session_token": token}).first()
    if row is None:
        return None, ""
    status = row.status
    first = row.page_loaded_at is None or row.task_opened_at is None
    if first or touch_due(row.last_seen_at, status, row.outcome):
        connection.execute(_TOUCH_AND_OPEN, {"sid": row.id, "now": utcnow()})
        if status == SessionStatus.ABANDONED and row.outcome is None:  # as TOUCH sets it
            status = SessionStatus.ACTIVE
    if status != SessionStatus.SUBMITTED:  # the page shows the current paragraph: a visit starts
        record_visit(row.id, row.position, utcnow())
    return row, status


def read_session(token: str) -> SessionView | None:
    """The session this capability token opens, activity recorded (a session marked
    abandoned comes back to life) and the visit of its current paragraph started; None
    when there is none. The first load is written at once: until then the session holds
    its place only for a minute (app.crowd.assignment.claims)."""
    if not token or len(token) > 64:
        return None
    connection = autocommit_connection()
    if connection.dialect.name == "postgresql":
        now = utcnow()
        params = {"session_token": token, "stale_before": now - TOUCH_INTERVAL, **visit_params(now)}
        row = connection.execute(_READ_AND_RECORD, params).first()
        status = "" if row is None else row.status
    else:
        row, status = _read_sqlite(connection, token)
    end_orm_transaction()
    if row is None:
        return None
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
