"""The worker's writes: save, remove, move, submit and heartbeat, one function each.

Each runs ONE guarded statement keyed by the session's capability token: the statement
itself checks what a lookup would have (the session exists and is not submitted, the
spans' paragraphs reached and their quotes still the stored text, the position in range)
and changes no row when a check fails. Only then does the action call explain_refusal()
(app.annotate.refusals), which looks the session up and raises the ApiError the contract
names, or finds that nothing refuses the action (a replay, a second Submit, a state that
changed in between, settled by running the statement once more). Nothing about a session
is kept in process memory: every answer comes from the database.

The statements run in autocommit (app.core.persistence.autocommit_connection): one statement
needs no transaction of its own. Races are settled by the statements: the unique
constraint on (session, client id) for saves (and the save's NOT EXISTS for an exact
duplicate under a new id: two such saves at the same instant may both pass it, which
costs one duplicate row, not a stall), `status <> 'submitted'` and a monotonic
`furthest` in moves. Every function is safe to run again (retry_on_disconnect).

Activity (last_seen_at; a session marked abandoned comes back to life, one that ended
before the task does not) is written with a save or remove when due, at most once a
minute (sessions.TOUCH_INTERVAL): on PostgreSQL by the same statement (a data-modifying
CTE), on SQLite by one right before it. A move and a Submit write it themselves. A save
and a move also record the session's first real work (`worked_at`, app.crowd.assignment.claims)
in the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from types import SimpleNamespace
from typing import Any

from sqlalchemy import Boolean, Row, and_, bindparam, case, exists, func, or_, select, update

from app.annotate.refusals import (
    ANNOTATIONS,
    BY_TOKEN,
    DOCUMENTS,
    DUPLICATE_KEY,
    DUPLICATE_PAIRED_KEY,
    INT32_MAX,
    SESSIONS,
    Action,
    changed_meanwhile,
    explain_refusal,
    keeps_rules_as_sent,
    spans_of,
)
from app.annotate.schemas import AnnotationIn, canonical_uuid
from app.annotate.timings import move_and_record
from app.core.persistence import autocommit_connection, end_orm_transaction, upsert_insert
from app.crowd.sessions import (
    TOUCH_INTERVAL,
    Completion,
    completion_for,
    inherits_failures_sql,
    submit_outcome,
    worker_failure,
)
from app.crowd.settings import study_settings
from app.models import Paragraph, utcnow
from app.rules.outcomes import session_outcome
from app.rules.statuses import SessionStatus
from app.suggestions import decisions as suggestion_decisions
from app.taxonomy import current_taxonomy

PARAGRAPHS = Paragraph.__table__

_connection = autocommit_connection
_finish = end_orm_transaction


@dataclass(frozen=True)
class SaveResult:
    """The stored annotation; `created` is False for a replay of an earlier save."""

    annotation: Row | SimpleNamespace  # the stored row (annotation_dict's shape)
    created: bool


@dataclass(frozen=True)
class Move:
    """Where a move left the session, and the paragraphs it revealed."""

    position: int
    furthest: int
    revealed: list[Paragraph]


# --- activity -----------------------------------------------------------------------------

# A session marked abandoned for want of activity comes back to life when used again; one
# that ended before the task (no_consent, failed_training: abandoned with an outcome) stays
# ended, and so holds no place (app.crowd.assignment.claims).
REVIVED_STATUS = case(
    (
        and_(SESSIONS.c.status == SessionStatus.ABANDONED, SESSIONS.c.outcome.is_(None)),
        SessionStatus.ACTIVE,
    ),
    else_=SESSIONS.c.status,
)

# Every caller is a request of the page (its load, its reads and writes, its heartbeat),
# so the page was loaded: the session claims its place (app.crowd.assignment.claims).
ACTIVITY = {
    "last_seen_at": bindparam("now"),
    "status": REVIVED_STATUS,
    "page_loaded_at": func.coalesce(SESSIONS.c.page_loaded_at, bindparam("now")),
}
# A save: activity, and the session's first real work (app.crowd.assignment.claims).
WORK = {**ACTIVITY, "worked_at": func.coalesce(SESSIONS.c.worked_at, bindparam("now"))}

# Record activity on the session with this id (app.annotate.reads, when due).
TOUCH = (
    update(SESSIONS)
    .where(SESSIONS.c.id == bindparam("sid"))
    .values(ACTIVITY)
    .execution_options(prepare=True)
)

# sessions.touch_due's rule in SQL: activity is due on a session marked abandoned (not an
# ended one), or last seen before `stale_before` (now - TOUCH_INTERVAL), or never.
TOUCH_IS_DUE = or_(
    and_(SESSIONS.c.status == SessionStatus.ABANDONED, SESSIONS.c.outcome.is_(None)),
    SESSIONS.c.last_seen_at.is_(None),
    SESSIONS.c.last_seen_at < bindparam("stale_before"),
)

# Record activity on the session with this token, when due.
_TOUCH_DUE = (
    update(SESSIONS).where(BY_TOKEN, TOUCH_IS_DUE).values(ACTIVITY).returning(SESSIONS.c.id)
)
# The same for a save: due also at the session's first work.
_WORK_DUE = (
    update(SESSIONS)
    .where(BY_TOKEN, or_(TOUCH_IS_DUE, SESSIONS.c.worked_at.is_(None)))
    .values(WORK)
    .returning(SESSIONS.c.id)
)


@lru_cache(maxsize=16)
def _with_activity(statement, touch):
    """The statement with the activity write `touch` as a data-modifying CTE
    (PostgreSQL), prepared once per connection (app.core.prepared)."""
    return statement.add_cte(touch.cte("touched")).execution_options(prepare=True)


def _run(statement, params: dict[str, Any], *, work: bool = False):
    """Run an action's statement and record activity when due (and, for `work`, the
    session's first work); the statement's result."""
    now = utcnow()
    params = {**params, "now": now, "stale_before": now - TOUCH_INTERVAL}
    touch = _WORK_DUE if work else _TOUCH_DUE
    connection = _connection()
    if connection.dialect.name == "postgresql":
        return connection.execute(_with_activity(statement, touch), params)
    connection.execute(touch, params)  # no data-modifying CTEs on SQLite
    return connection.execute(statement, params)


_SESSION_ID = select(SESSIONS.c.id).where(BY_TOKEN)


def heartbeat(token: str) -> None:
    """Record activity when due (a submitted session too: nothing refuses a heartbeat);
    a 404 envelope when the token opens no session."""
    found = _run(_SESSION_ID, {"session_token": token}).first()
    _finish()
    if found is None:
        explain_refusal(token, Action.HEARTBEAT)


# --- save ---------------------------------------------------------------------------------


def _values(data: AnnotationIn) -> dict[str, Any]:
    """The annotations row for this Add (but its session)."""
    paired = data.paired_span
    return {
        "client_id": data.id,
        "paragraph_id": data.span.paragraph_id,
        "span_start": data.span.start,
        "span_end": data.span.end,
        "span_text": data.span.text,
        "category": data.category,
        "paired_paragraph_id": paired.paragraph_id if paired else None,
        "paired_start": paired.start if paired else None,
        "paired_end": paired.end if paired else None,
        "paired_text": paired.text if paired else None,
        "comment": data.comment,
        "created_at": utcnow(),
        "severity": data.severity,
        "suggestion_id": None,  # an Accept or Edit: set by save (app.suggestions.decisions)
        "origin": "worker",
    }


def _param(name: str):
    return bindparam(name, type_=ANNOTATIONS.c[name].type)


def _quote_stored(prefix: str):
    """The span (paragraph_id / span_*, or paired_*) quotes its paragraph's stored text."""
    paragraph, start, end, text = (
        ("paragraph_id", "span_start", "span_end", "span_text")
        if prefix == "span"
        else ("paired_paragraph_id", "paired_start", "paired_end", "paired_text")
    )
    length = _param(end) - _param(start)
    return exists().where(
        PARAGRAPHS.c.document_id == SESSIONS.c.document_id,
        PARAGRAPHS.c.position == _param(paragraph),
        # Both databases count code points, as the offsets do (1-based).
        func.substr(PARAGRAPHS.c.text, _param(start) + 1, length) == _param(text),
    )


# A worker's Add is a unit of its own: unit_id stays null (app.models.UNIT_ID).
_SAVED_COLUMNS = [
    c.name for c in ANNOTATIONS.c if c.name not in ("id", "session_id", "deleted_at", "unit_id")
]


def _no_live_duplicate(paired: bool):
    """No live annotation of the session has this category and these spans (refusals.
    DUPLICATE_KEY: the rule and its reason). The session is found again by its token, so
    the check depends on no row of the statement: PostgreSQL runs it once, probing the
    session's annotations by index (ix_annotations_session_paragraph), in every plan it
    keeps. Correlated with the session's row and inside an OR, a connection's generic
    plan made it a hashed subplan over the whole annotations table, read at every save
    (bench/README.md, save_load)."""
    same = [ANNOTATIONS.c[name] == _param(name) for name in DUPLICATE_KEY]
    if paired:
        same += [ANNOTATIONS.c[name] == _param(name) for name in DUPLICATE_PAIRED_KEY]
    else:
        same.append(ANNOTATIONS.c.paired_paragraph_id.is_(None))
    session = SESSIONS.alias("session_of_token")
    session_id = select(session.c.id).where(session.c.token == bindparam("session_token"))
    return ~exists().where(
        ANNOTATIONS.c.session_id == session_id.scalar_subquery(),
        ANNOTATIONS.c.deleted_at.is_(None),
        *same,
    )


@lru_cache(maxsize=8)
def _save_statement(dialect: str, paired: bool, decided: bool):
    """INSERT ... SELECT <the row> FROM the session if it is not submitted, has reached the
    spans' paragraphs and they quote its document's text, and (unless the Add is the
    decision on a suggestion, `decided`: each suggestion is decided once a session,
    app.suggestions.decisions) has no live annotation of the same category and spans ...
    ON CONFLICT DO NOTHING RETURNING id: built once per dialect and shape."""
    guards = [
        BY_TOKEN,
        SESSIONS.c.status != SessionStatus.SUBMITTED,
        SESSIONS.c.furthest >= bindparam("reach"),
        _quote_stored("span"),
    ]
    if paired:
        guards.append(_quote_stored("paired"))
    if not decided:
        guards.append(_no_live_duplicate(paired))
    row = select(SESSIONS.c.id, *[_param(name) for name in _SAVED_COLUMNS]).where(*guards)
    return (
        upsert_insert(dialect)(ANNOTATIONS)
        .from_select(["session_id", *_SAVED_COLUMNS], row)
        .on_conflict_do_nothing(index_elements=["session_id", "client_id"])
        .returning(ANNOTATIONS.c.id, ANNOTATIONS.c.session_id)
    )


def save(token: str, data: AnnotationIn) -> SaveResult:
    """Store one Add; a replay of the same id and body answers the stored row.

    The rules that need no stored text are checked first; one INSERT then checks the rest
    and settles replays and concurrent duplicates (the unique constraint on session and
    client id): a new annotation costs one statement."""
    values = _values(data)
    if data.suggestion_id is not None:  # an Accept or Edit: the suggestion and the origin
        values |= suggestion_decisions.annotation_link(token, data)
    params = {
        **values,
        "session_token": token,
        "reach": max(s.paragraph_id for s in spans_of(data)),
    }
    for _ in range(2):
        inserted = None
        if keeps_rules_as_sent(data):
            statement = _save_statement(
                _connection().dialect.name,
                data.paired_span is not None,
                values["suggestion_id"] is not None,
            )
            inserted = _run(statement, params, work=True).first()
            _finish()
        if inserted is not None:
            row = SimpleNamespace(id=inserted.id, session_id=inserted.session_id, deleted_at=None)
            return SaveResult(SimpleNamespace(**vars(row), **values), created=True)
        stored = explain_refusal(token, Action.SAVE, data).annotation
        if stored is not None:
            return SaveResult(stored, created=False)
    raise changed_meanwhile()


# --- remove ---------------------------------------------------------------------------------

_WRITABLE_SESSION = (
    select(SESSIONS.c.id)
    .where(BY_TOKEN, SESSIONS.c.status != SessionStatus.SUBMITTED)
    .scalar_subquery()
)

_REMOVE = (
    update(ANNOTATIONS)
    .where(
        ANNOTATIONS.c.session_id == _WRITABLE_SESSION,
        ANNOTATIONS.c.client_id == bindparam("cid"),
        ANNOTATIONS.c.deleted_at.is_(None),
    )
    .values(deleted_at=bindparam("now"))
    .returning(ANNOTATIONS.c.id)
)


def remove(token: str, client_id: str) -> None:
    """Soft-delete one of this session's annotations; removing it again is fine."""
    canonical = canonical_uuid(client_id)
    for _ in range(2):
        removed = None
        if canonical:
            removed = _run(_REMOVE, {"session_token": token, "cid": canonical}).first()
            _finish()
        if removed is not None:
            return
        stored = explain_refusal(token, Action.REMOVE, client_id).annotation
        if stored.deleted_at is not None:  # removed before: a replay
            return
    raise changed_meanwhile()


# --- move -----------------------------------------------------------------------------------

_BEFORE = SESSIONS.alias("before")

_MOVE_ROW = (
    update(SESSIONS)
    .where(
        BY_TOKEN,
        SESSIONS.c.status != SessionStatus.SUBMITTED,
        # Not ended before the task (declined, failed), and the task served: no paragraph
        # text before consent, surveys and training (`task_open`: the study has no such step).
        SESSIONS.c.outcome.is_(None),
        or_(bindparam("task_open", type_=Boolean), SESSIONS.c.task_opened_at.is_not(None)),
        SESSIONS.c.furthest + 1 >= bindparam("to"),
        select(DOCUMENTS.c.paragraph_count)
        .where(DOCUMENTS.c.id == SESSIONS.c.document_id)
        .scalar_subquery()
        > bindparam("to"),
    )
    .values(
        position=bindparam("to"),
        # Another tab may have read further meanwhile: furthest never goes back.
        furthest=case(
            (SESSIONS.c.furthest < bindparam("to"), bindparam("to")),
            else_=SESSIONS.c.furthest,
        ),
        last_seen_at=bindparam("now"),
        status=REVIVED_STATUS,
        worked_at=func.coalesce(SESSIONS.c.worked_at, bindparam("now")),
    )
)
_MOVE = _MOVE_ROW.returning(
    SESSIONS.c.id,
    SESSIONS.c.furthest,
    # How far the worker had read: PostgreSQL evaluates a subquery of the statement
    # on the rows as they were before it (SQLite's RETURNING sees them updated).
    select(_BEFORE.c.furthest)
    .where(_BEFORE.c.id == SESSIONS.c.id)
    .scalar_subquery()
    .label("furthest_before"),
    select(PARAGRAPHS.c.text)
    .where(
        PARAGRAPHS.c.document_id == SESSIONS.c.document_id,
        PARAGRAPHS.c.position == bindparam("to"),
    )
    .scalar_subquery()
    .label("text"),
)

_FURTHEST = select(SESSIONS.c.furthest).where(BY_TOKEN)
# SQLite's move: the same UPDATE, returning only the moved row's own columns.
_MOVE_SQLITE = _MOVE_ROW.returning(SESSIONS.c.id, SESSIONS.c.furthest)
_TEXT_AT = select(PARAGRAPHS.c.text).where(
    PARAGRAPHS.c.document_id == select(SESSIONS.c.document_id).where(BY_TOKEN).scalar_subquery(),
    PARAGRAPHS.c.position == bindparam("to"),
)


def move(token: str, paragraph_id: int, active_seconds: float | None = None) -> Move:
    """Go to a paragraph (at most one past the furthest); a move also records activity and
    the paragraph timings (app/annotate/timings.py: same statement on PostgreSQL). Going
    one past the furthest reveals that paragraph."""
    for _ in range(2):
        moved = None
        if 0 <= paragraph_id <= INT32_MAX:
            moved, before, text = _move(token, paragraph_id, active_seconds)
            _finish()
        if moved is not None:
            revealed = []
            if before < paragraph_id:  # the worker reads on: send the new paragraph
                revealed = [Paragraph(position=paragraph_id, text=text)]
            return Move(paragraph_id, moved.furthest, revealed)
        explain_refusal(token, Action.MOVE, paragraph_id)
    raise changed_meanwhile()


def _move(
    token: str, paragraph_id: int, active_seconds: float | None
) -> tuple[Row | None, int, str | None]:
    """The moved row (None if nothing moved), how far the worker had read before, and the
    text of the paragraph moved to."""
    params = {
        "session_token": token,
        "to": paragraph_id,
        "now": utcnow(),
        "task_open": not current_taxonomy().has_steps_around_task,
    }
    if _connection().dialect.name == "postgresql":
        moved = move_and_record(_MOVE, params, active_seconds)
        if moved is None:
            return None, -1, None
        return moved, moved.furthest_before, moved.text
    # SQLite renders the columns of RETURNING's subqueries unqualified (`WHERE document_id
    # = document_id` matched every document): read before and the text apart.
    before = _connection().execute(_FURTHEST, params).scalar()
    moved = move_and_record(_MOVE_SQLITE, params, active_seconds)
    if moved is None:
        return None, -1, None
    text = _connection().execute(_TEXT_AT, params).scalar()
    return moved, -1 if before is None else before, text


# --- submit ---------------------------------------------------------------------------------

# Submit: not yet submitted nor ended before the task, every paragraph reached. It sets
# the outcome its caller decided: without a look at the annotations, only when the
# attention checks cannot change it (`decided`, or a document without gold spans, stored
# as SQL NULL); but a worker who failed in the study keeps that outcome (failing is
# final: sessions.worker_failure).
_FAILURE = worker_failure(SESSIONS.c.annotator_id, SESSIONS.c.study_id, SESSIONS.c.id)
_SUBMIT = (
    update(SESSIONS)
    .where(
        BY_TOKEN,
        SESSIONS.c.status != SessionStatus.SUBMITTED,
        SESSIONS.c.outcome.is_(None),
        SESSIONS.c.furthest + 1
        >= select(DOCUMENTS.c.paragraph_count)
        .where(DOCUMENTS.c.id == SESSIONS.c.document_id)
        .scalar_subquery(),
        or_(
            bindparam("decided", type_=Boolean),
            exists().where(DOCUMENTS.c.id == SESSIONS.c.document_id, DOCUMENTS.c.gold.is_(None)),
        ),
    )
    .values(
        status=SessionStatus.SUBMITTED,
        outcome=case(
            (and_(inherits_failures_sql(SESSIONS), _FAILURE.is_not(None)), _FAILURE),
            else_=bindparam("outcome"),
        ),
        submitted_at=bindparam("now"),
        last_seen_at=bindparam("now"),
    )
    .returning(
        SESSIONS.c.token, SESSIONS.c.platform, SESSIONS.c.completion_code, SESSIONS.c.outcome
    )
    .execution_options(prepare=True)
)


def submit(token: str) -> Completion:
    """Submit once every paragraph was reached, setting the outcome; a second Submit
    answers the same."""
    settings = study_settings()
    checks_decide = settings.attention_checks == "fail"
    params: dict[str, Any] = {
        "session_token": token,
        "now": utcnow(),
        # Without gold spans nothing can fail the checks (sessions.submit_outcome).
        "outcome": session_outcome(failed_checks=False, attention_checks=settings.attention_checks),
        "decided": not checks_decide,
    }
    for _ in range(2):
        row = _connection().execute(_SUBMIT, params).first()
        _finish()
        if row is not None:
            return completion_for(row)
        session = explain_refusal(token, Action.SUBMIT).session
        if session.status == SessionStatus.SUBMITTED:
            return completion_for(session)
        if checks_decide and session.gold:
            params |= {"outcome": submit_outcome(session.id, session.gold, settings)}
            params["decided"] = True
    raise changed_meanwhile()
