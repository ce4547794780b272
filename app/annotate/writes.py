"""The worker's frequent writes: save, remove and move, each one statement or two.

A worker saves every few seconds, so these skip the ORM's unit of work. The full path
reads the session's columns with one Core SELECT into a `SessionRef`, then makes each
change in a single statement run in autocommit (one statement needs no transaction of
its own; see app.persistence.autocommit_connection). A process that has served the
session before (KnownSessions) skips the SELECT for saves, removes and moves: the INSERT
or UPDATE itself checks what the lookup would have (save_known, remove_known,
move_known, submit_known), and anything out of the ordinary goes the full path. Races are settled by
the statements themselves: the unique constraint on (session, client id) for saves,
`status <> 'submitted'` and a monotonic `furthest` in the WHERE/SET of a move. Every
function is safe to run again (see app.persistence.retry_on_disconnect).
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from types import SimpleNamespace
from typing import Any

from flask import current_app
from sqlalchemy import Row, bindparam, case, func, select, update

from app.annotate.schemas import AnnotationIn, SpanIn, canonical_uuid
from app.annotate.sessions import (
    NO_SESSION,
    TOUCH_INTERVAL,
    Completion,
    completion_for,
    document_texts,
    ensure_writable,
    max_comment_length,
    seen_seconds_ago,
    submit_outcome,
    submitted_error,
    touch_due,
)
from app.annotate.timings import move_and_record
from app.errors import ApiError
from app.models import (
    Annotation,
    AnnotationSession,
    Document,
    Paragraph,
    utcnow,
)
from app.persistence import (
    autocommit_connection,
    end_orm_transaction,
    upsert_insert,
)
from app.spans import SpanError, check_annotation
from app.study import study_settings
from app.suggestions import decisions as suggestion_decisions
from app.taxonomy import current_taxonomy

SESSIONS = AnnotationSession.__table__
DOCUMENTS = Document.__table__
ANNOTATIONS = Annotation.__table__


@dataclass(frozen=True, slots=True)
class SessionRef:
    """The columns of a session (and its document) that a write needs."""

    id: int
    status: str
    position: int
    furthest: int
    last_seen_at: datetime | None
    document_id: int
    content_hash: str
    paragraph_count: int


@dataclass(frozen=True, slots=True)
class SessionKey:
    """What a write needs to know about a session that does not change while it is used:
    its id and its document (whose text may only change while the document has no
    annotations: the one-statement writes check the hash)."""

    id: int
    document_id: int
    content_hash: str
    paragraph_count: int


class KnownSessions:
    """This process's memory of the sessions it served: token -> SessionKey, when it last
    recorded activity for each, and the furthest paragraph it last saw each reach (a
    lower bound: furthest never decreases while the text stays the same). Filled when a
    session is opened, read or looked up; lets the writes of a known session skip the
    lookup (save_known, remove_known, move_known, submit_known). Bounded: forgotten
    wholesale past `limit` entries."""

    def __init__(self, limit: int = 50_000) -> None:
        self.limit = limit
        self.keys: dict[str, SessionKey] = {}
        self.touched_at: dict[int, float] = {}  # time.monotonic() of last_seen_at
        self.furthest: dict[int, int] = {}

    def knows(self, token: str) -> bool:
        return token in self.keys

    def remember(self, token: str, key: SessionKey, furthest: int) -> None:
        if len(self.keys) >= self.limit:
            self.keys.clear()
            self.touched_at.clear()
            self.furthest.clear()
        self.keys[token] = key
        self.reached(key.id, furthest)

    def reached(self, session_id: int, furthest: int) -> None:
        """Note that the session has read at least up to `furthest`."""
        self.furthest[session_id] = max(furthest, self.furthest.get(session_id, -1))

    def touched(self, session_id: int, seconds_ago: float = 0.0) -> None:
        """Note that the session's last_seen_at was written `seconds_ago`."""
        self.touched_at[session_id] = time.monotonic() - seconds_ago

    def touch_due(self, session_id: int) -> bool:
        """True at most once a minute per session (and process) since last_seen_at was
        last known written; the caller then writes it."""
        now = time.monotonic()
        if now - self.touched_at.get(session_id, -math.inf) < TOUCH_INTERVAL.total_seconds():
            return False
        self.touched_at[session_id] = now
        return True


def known_sessions() -> KnownSessions:
    """The app's KnownSessions (one per app, so tests' databases never mix)."""
    known = current_app.extensions.get("annotate_known_sessions")
    if known is None:
        known = current_app.extensions["annotate_known_sessions"] = KnownSessions()
    return known


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


_connection = autocommit_connection
_finish = end_orm_transaction


# --- lookup and activity ----------------------------------------------------------------

_LOOKUP = (
    select(
        SESSIONS.c.id,
        SESSIONS.c.status,
        SESSIONS.c.position,
        SESSIONS.c.furthest,
        SESSIONS.c.last_seen_at,
        SESSIONS.c.document_id,
        DOCUMENTS.c.content_hash,
        DOCUMENTS.c.paragraph_count,
    )
    .join_from(SESSIONS, DOCUMENTS)
    .where(SESSIONS.c.token == bindparam("token"))
)

# Activity: a session marked abandoned comes back to life when used again. Every caller
# is a request of the page (its load, its reads and writes, its heartbeat), so the page
# was loaded: the session claims its place (app.assignment.claims).
_REVIVED_STATUS = case((SESSIONS.c.status == "abandoned", "active"), else_=SESSIONS.c.status)

TOUCH = (
    update(SESSIONS)
    .where(SESSIONS.c.id == bindparam("sid"))
    .values(
        last_seen_at=bindparam("now"),
        status=_REVIVED_STATUS,
        page_loaded_at=func.coalesce(SESSIONS.c.page_loaded_at, bindparam("now")),
    )
)


def session_ref_or_404(token: str) -> SessionRef:
    """The session this capability token opens; a 404 envelope when there is none."""
    row = None
    if token and len(token) <= 64:
        row = _connection().execute(_LOOKUP, {"token": token}).first()
    if row is None:
        raise ApiError.not_found(NO_SESSION)
    ref = SessionRef(*row)
    key = SessionKey(ref.id, ref.document_id, ref.content_hash, ref.paragraph_count)
    known_sessions().remember(token, key, ref.furthest)
    return ref


def _touch_known(connection, session_id: int) -> None:
    """After a write of a known session: record activity when this process has not
    written it for a minute."""
    if known_sessions().touch_due(session_id):
        connection.execute(TOUCH, {"sid": session_id, "now": utcnow()})


def touch(ref: SessionRef) -> None:
    """Record activity (at most once a minute; see sessions.touch_due)."""
    known = known_sessions()
    if touch_due(ref.last_seen_at, ref.status):
        _connection().execute(TOUCH, {"sid": ref.id, "now": utcnow()})
        known.touched(ref.id)
    else:
        known.touched(ref.id, seen_seconds_ago(ref.last_seen_at))


# --- save -------------------------------------------------------------------------------


def _span_key(span: SpanIn | None) -> tuple[int, int, int, str] | None:
    return None if span is None else (span.paragraph_id, span.start, span.end, span.text)


def _stored_key(annotation: Row) -> tuple[Any, ...]:
    paired = None
    if annotation.paired_paragraph_id is not None:
        paired = (
            annotation.paired_paragraph_id,
            annotation.paired_start,
            annotation.paired_end,
            annotation.paired_text,
        )
    span = (annotation.paragraph_id, annotation.span_start, annotation.span_end)
    made_from = suggestion_decisions.stored_suggestion_id(annotation.suggestion_id)
    return (
        annotation.category,
        (*span, annotation.span_text),
        paired,
        annotation.comment,
        made_from,
    )


def _sent_key(data: AnnotationIn) -> tuple[Any, ...]:
    spans = (_span_key(data.span), _span_key(data.paired_span))
    return (data.category, *spans, data.comment, data.suggestion_id)


def _needed(data: AnnotationIn) -> list[int]:
    """The paragraphs an annotation's spans are in."""
    if data.paired_span is None:
        return [data.span.paragraph_id]
    return [data.span.paragraph_id, data.paired_span.paragraph_id]


def _check(data: AnnotationIn, texts: tuple[str, ...], furthest: int) -> None:
    """The annotation rules (app.spans) against the paragraphs up to `furthest`."""
    taxonomy = current_taxonomy()
    last = min(furthest, len(texts) - 1)
    try:
        check_annotation(
            category=taxonomy.category(data.category),
            known_categories=list(taxonomy.keys),
            category_key=data.category,
            span=data.span.to_span(),
            paired_span=data.paired_span.to_span() if data.paired_span else None,
            comment=data.comment,
            comment_required=taxonomy.comment.required,
            comment_label=taxonomy.comment.label,
            max_comment_length=max_comment_length(),
            # Only the paragraphs the rules need, and only positions the worker has reached.
            texts={pid: texts[pid] for pid in set(_needed(data)) if 0 <= pid <= last},
            furthest=furthest,
        )
    except SpanError as error:
        raise ApiError.unprocessable(error.message, code=error.code, field=error.field) from None


def _values(session_id: int, data: AnnotationIn) -> dict[str, Any]:
    """The annotations row for this Add."""
    paired = data.paired_span
    return {
        "session_id": session_id,
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
        "suggestion_id": None,  # app.suggestions.decisions.annotation_link sets both
        "origin": "worker",
    }


def _created(new_id: int, values: dict[str, Any]) -> SaveResult:
    # The row as stored, without building an ORM object for it.
    return SaveResult(SimpleNamespace(id=new_id, deleted_at=None, **values), created=True)


def save_annotation(ref: SessionRef, data: AnnotationIn) -> SaveResult:
    """Store one Add; a replay of the same id and body returns the stored row.

    The rules are checked first, then one INSERT ... ON CONFLICT DO NOTHING settles
    replays and concurrent duplicates in the database (the unique constraint on session
    and client id): a new annotation costs one statement."""
    ensure_writable(ref.status)
    _check(data, document_texts(ref.document_id, ref.content_hash), ref.furthest)
    values = _values(ref.id, data)
    if data.suggestion_id is not None:  # an Accept or Edit: its link and origin
        link = suggestion_decisions.annotation_link(
            ref.id, ref.document_id, data.suggestion_id, data
        )
        values.update(link)
    connection = _connection()
    new_id = connection.execute(_insert_statement(connection.dialect.name), values).scalar()
    if new_id is not None:
        _finish()
        return _created(new_id, values)
    existing = _find_annotation(ref, data.id)
    _finish()
    if _stored_key(existing) != _sent_key(data):
        raise ApiError.conflict(
            "An annotation with this id was already saved with different content. "
            "Reload the page to see what is stored.",
            field="id",
        )
    return SaveResult(existing, created=False)


@lru_cache(maxsize=4)
def _insert_statement(dialect: str):
    """INSERT ... ON CONFLICT DO NOTHING RETURNING id, built once per dialect."""
    insert = upsert_insert(dialect)
    return (
        insert(ANNOTATIONS)
        .on_conflict_do_nothing(index_elements=["session_id", "client_id"])
        .returning(ANNOTATIONS.c.id)
    )


_COLUMNS = [column.name for column in ANNOTATIONS.c if column.name not in ("id", "deleted_at")]

# The document's current text hash, as a scalar subquery of the session row (PostgreSQL
# plans it in half the time of a join: ~0.05 ms of every save and move).
_TEXT_HASH = (
    select(DOCUMENTS.c.content_hash)
    .where(DOCUMENTS.c.id == SESSIONS.c.document_id)
    .scalar_subquery()
)

# The new row, inserted only if the session is active, has reached the spans' paragraphs
# and its document still has the text the spans were checked against.
_GUARDED_ROW = (
    select(*[bindparam(name, type_=ANNOTATIONS.c[name].type) for name in _COLUMNS])
    .select_from(SESSIONS)
    .where(
        SESSIONS.c.id == bindparam("session_id"),
        SESSIONS.c.status == "active",
        SESSIONS.c.furthest >= bindparam("reach"),
        bindparam("content_hash") == _TEXT_HASH,
    )
)


@lru_cache(maxsize=4)
def _guarded_insert_statement(dialect: str):
    """INSERT ... SELECT <the row> FROM the session if writable ... ON CONFLICT DO NOTHING
    RETURNING id, built once per dialect."""
    insert = upsert_insert(dialect)
    return (
        insert(ANNOTATIONS)
        .from_select(_COLUMNS, _GUARDED_ROW)
        .on_conflict_do_nothing(index_elements=["session_id", "client_id"])
        .returning(ANNOTATIONS.c.id)
    )


def save_known(token: str, data: AnnotationIn) -> SaveResult | None:
    """Store a new Add for a session this process has served before, in one statement:
    the session's state is checked by the INSERT itself instead of a lookup first.

    None when this path cannot settle the save (an unknown session, a rule broken, the
    session submitted or abandoned, a paragraph not reached, a replay): the caller then
    takes the full path (session_ref_or_404, save_annotation), which answers each case
    as it always has. The caller has checked the CSRF token."""
    known = known_sessions()
    key = known.keys.get(token)
    if key is None or data.suggestion_id is not None:  # Accept/Edit: the full path links it
        return None
    try:
        _check(data, document_texts(key.document_id, key.content_hash), furthest=sys.maxsize)
    except ApiError:
        return None
    values = _values(key.id, data)
    params = {**values, "reach": max(_needed(data)), "content_hash": key.content_hash}
    connection = _connection()
    statement = _guarded_insert_statement(connection.dialect.name)
    new_id = connection.execute(statement, params).scalar()
    if new_id is None:
        _finish()
        return None
    _touch_known(connection, key.id)
    _finish()
    return _created(new_id, values)


_FIND = select(ANNOTATIONS).where(
    ANNOTATIONS.c.session_id == bindparam("sid"), ANNOTATIONS.c.client_id == bindparam("cid")
)


def _find_annotation(ref: SessionRef, client_id: str) -> Row | None:
    """The stored row (on the same connection as the write, so that a retried request
    needs one fresh connection, not two)."""
    return _connection().execute(_FIND, {"sid": ref.id, "cid": client_id}).first()


# --- remove -----------------------------------------------------------------------------

_REMOVE = (
    update(ANNOTATIONS)
    .where(
        ANNOTATIONS.c.session_id == bindparam("sid"),
        ANNOTATIONS.c.client_id == bindparam("cid"),
        ANNOTATIONS.c.deleted_at.is_(None),
    )
    .values(deleted_at=bindparam("now"))
)


def remove_annotation(ref: SessionRef, client_id: str) -> None:
    """Soft-delete one of this session's annotations; removing it again is fine."""
    ensure_writable(ref.status)
    canonical = canonical_uuid(client_id)
    if canonical:
        params = {"sid": ref.id, "cid": canonical, "now": utcnow()}
        removed = _connection().execute(_REMOVE, params).rowcount
        # Nothing changed: removed before (a replay), or no such annotation.
        found = removed or _find_annotation(ref, canonical) is not None
        _finish()
        if found:
            return
    raise ApiError.not_found("This session has no annotation with that id.", field="id")


# A remove for a known session: the UPDATE itself checks that the session is active.
_GUARDED_REMOVE = _REMOVE.where(
    select(SESSIONS.c.id)
    .where(SESSIONS.c.id == bindparam("sid"), SESSIONS.c.status == "active")
    .exists()
)


def remove_known(token: str, client_id: str) -> bool:
    """Remove an annotation of a session this process has served before, in one
    statement. False when this path cannot settle it (an unknown session, a bad id, the
    session not active, a replay, no such annotation): the caller then takes the full
    path (session_ref_or_404, remove_annotation), which answers each case as before.
    The caller has checked the CSRF token."""
    key = known_sessions().keys.get(token)
    canonical = canonical_uuid(client_id)
    if key is None or not canonical:
        return False
    params = {"sid": key.id, "cid": canonical, "now": utcnow()}
    connection = _connection()
    removed = connection.execute(_GUARDED_REMOVE, params).rowcount
    if removed:
        _touch_known(connection, key.id)
    _finish()
    return bool(removed)


# --- move -------------------------------------------------------------------------------

_MOVE = (
    update(SESSIONS)
    .where(SESSIONS.c.id == bindparam("sid"), SESSIONS.c.status != "submitted")
    .values(
        position=bindparam("to"),
        # Another tab may have read further meanwhile: furthest never goes back.
        furthest=case(
            (SESSIONS.c.furthest < bindparam("to"), bindparam("to")),
            else_=SESSIONS.c.furthest,
        ),
        last_seen_at=bindparam("now"),
        status=_REVIVED_STATUS,
    )
)


_MOVE_RETURNING = _MOVE.returning(SESSIONS.c.furthest)


def move_position(ref: SessionRef, paragraph_id: int, active_seconds: float | None = None) -> Move:
    """Go to a paragraph (at most one past the furthest); a move also records activity and
    the paragraph timings (app/annotate/timings.py: same statement on PostgreSQL)."""
    ensure_writable(ref.status)
    limit = min(ref.furthest + 1, ref.paragraph_count - 1)
    if not 0 <= paragraph_id <= limit:
        raise ApiError.unprocessable(
            f"You can go to paragraphs 0 to {limit} (one past the furthest you have read); "
            f"{paragraph_id} is not among them.",
            code="position_out_of_range",
            field="paragraph_id",
        )
    params = {"sid": ref.id, "to": paragraph_id, "now": utcnow()}
    moved = move_and_record(_MOVE_RETURNING, params, active_seconds) is not None
    _finish()
    if not moved:
        raise submitted_error()  # submitted in another tab since it was read
    known_sessions().reached(ref.id, max(ref.furthest, paragraph_id))
    revealed: list[Paragraph] = []
    if paragraph_id > ref.furthest:  # the worker reads on: send the new paragraphs
        texts = document_texts(ref.document_id, ref.content_hash)
        revealed = [
            Paragraph(position=position, text=texts[position])
            for position in range(ref.furthest + 1, paragraph_id + 1)
        ]
    return Move(paragraph_id, max(ref.furthest, paragraph_id), revealed)


# Moves of a known session: the UPDATE checks what the lookup would have (not submitted,
# at most one past the furthest, the document's text unchanged) and says how far the
# worker has now read.
_GUARDED_MOVE = _MOVE.where(
    SESSIONS.c.furthest + 1 >= bindparam("to"),
    bindparam("text_hash") == _TEXT_HASH,
).returning(SESSIONS.c.furthest)


def move_known(token: str, paragraph_id: int, active_seconds: float | None = None) -> Move | None:
    """Move a session this process has served before, in one statement (on SQLite, plus
    the paragraph timings' one, app/annotate/timings.py).

    None when this path cannot settle the move (an unknown session, a paragraph out of
    range, the session submitted, the text replaced): the caller then takes the full
    path (session_ref_or_404, move_position). The paragraphs sent are those after the
    furthest this process knew the session had reached: exactly the revealed one when
    this process saw the worker's last move; when another process or tab read further
    meanwhile, also those (which the page adds once, like any other). The caller has
    checked the CSRF token."""
    known = known_sessions()
    key = known.keys.get(token)
    if key is None or not 0 <= paragraph_id < key.paragraph_count:
        return None
    params = {
        "sid": key.id,
        "to": paragraph_id,
        "now": utcnow(),
        "text_hash": key.content_hash,
    }
    furthest = move_and_record(_GUARDED_MOVE, params, active_seconds)
    _finish()
    if furthest is None:
        return None
    known_before = known.furthest.get(key.id, -1)
    known.reached(key.id, furthest)
    known.touched(key.id)
    texts = document_texts(key.document_id, key.content_hash)
    first = max(known_before, paragraph_id - 1) + 1
    revealed = [Paragraph(position=p, text=texts[p]) for p in range(first, furthest + 1)]
    return Move(paragraph_id, furthest, revealed)


# --- submit -----------------------------------------------------------------------------

# Submit for a known session: not yet submitted, every paragraph reached, the text the
# worker read still the document's. It sets the outcome its caller decided.
_GUARDED_SUBMIT = (
    update(SESSIONS)
    .where(
        SESSIONS.c.id == bindparam("sid"),
        SESSIONS.c.status != "submitted",
        SESSIONS.c.furthest >= bindparam("last"),
        bindparam("text_hash") == _TEXT_HASH,
    )
    .values(
        status="submitted",
        outcome=bindparam("outcome"),
        submitted_at=bindparam("now"),
        last_seen_at=bindparam("now"),
    )
    .returning(
        SESSIONS.c.token, SESSIONS.c.platform, SESSIONS.c.completion_code, SESSIONS.c.outcome
    )
)

# Under `attention_checks: fail` the outcome of a session on an attention-check document
# depends on its annotations: the one statement takes only sessions whose document has no
# gold spans (stored as SQL NULL), whose outcome needs none; the others go the full path.
_GUARDED_SUBMIT_WITHOUT_GOLD = _GUARDED_SUBMIT.where(
    select(DOCUMENTS.c.id)
    .where(DOCUMENTS.c.id == SESSIONS.c.document_id, DOCUMENTS.c.gold.is_(None))
    .exists()
)


def submit_known(token: str) -> Completion | None:
    """Submit a session this process has served before, in one statement. None when this
    path cannot settle it (an unknown session, not every paragraph reached, already
    submitted: a second Submit answers the same, the text replaced, an attention check
    that decides the outcome): the caller then takes the full path
    (sessions.submit_session), which answers each case as before. The caller has checked
    the CSRF token and the body."""
    key = known_sessions().keys.get(token)
    if key is None:
        return None
    settings = study_settings()
    checks_decide = settings.attention_checks == "fail"
    params = {
        "sid": key.id,
        "last": key.paragraph_count - 1,
        "text_hash": key.content_hash,
        "now": utcnow(),
        # The statement below only submits when no gold spans could change the outcome.
        "outcome": submit_outcome(key.id, None, settings),
    }
    statement = _GUARDED_SUBMIT_WITHOUT_GOLD if checks_decide else _GUARDED_SUBMIT
    row = _connection().execute(statement, params).first()
    _finish()
    return None if row is None else completion_for(row)
