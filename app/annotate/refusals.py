"""Why a write's guarded statement changed no row (app.annotate.writes), and the rules
of a save that need no database.

explain_refusal() is the one place that looks a session up after a write: it raises the
ApiError the contract names (docs/contracts.md#worker-api: 404, 409, 422; 422
`duplicate_annotation` for an exact duplicate under a new id), or says what it
found when nothing refuses the write (a replay, a second Submit, a state that changed
between the statement and the look-up).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from enum import StrEnum
from typing import Any, NamedTuple

from sqlalchemy import Row, bindparam, select

from app.core.errors import ApiError
from app.core.persistence import autocommit_connection, end_orm_transaction
from app.crowd.session_errors import (
    NO_SESSION,
    step_pending_error,
    study_ended_error,
    submitted_error,
)
from app.crowd.sessions import document_texts
from app.models import Annotation, AnnotationSession, Document
from app.rules.annotation import AnnotationIn, SpanIn, canonical_uuid, check_rules
from app.rules.spans import SpanError
from app.rules.statuses import SessionStatus
from app.suggestions.decisions import stored_suggestion_id
from app.taxonomy import current_taxonomy, max_comment_length

SESSIONS = AnnotationSession.__table__
DOCUMENTS = Document.__table__
ANNOTATIONS = Annotation.__table__

# Positions and offsets are 32-bit columns: a larger number in a body is refused by the
# rules (explain_refusal), never sent to the database.
INT32_MAX = 2**31 - 1

# Every write's statement finds its session by the capability token.
BY_TOKEN = SESSIONS.c.token == bindparam("session_token")

# An exact duplicate (issue 26 point 4): a live annotation of the session with the same
# category and the same span, and the same paired span or none (offsets; the stored text
# there is the same). Comment and severity do not make another annotation: a second Add
# of one error only multiplies it in the analyses (gamma's alignment grew exponentially
# with them). The save's statement refuses it (app.annotate.writes); explain_refusal says why.
DUPLICATE_KEY = ("category", "paragraph_id", "span_start", "span_end")
DUPLICATE_PAIRED_KEY = ("paired_paragraph_id", "paired_start", "paired_end")


class Action(StrEnum):
    """A write whose guarded statement explain_refusal() explains."""

    SAVE = "save"
    REMOVE = "remove"
    MOVE = "move"
    SUBMIT = "submit"
    HEARTBEAT = "heartbeat"


class Explained(NamedTuple):
    """What explain_refusal found when nothing refuses the action: the session, and for a
    save or remove the stored annotation with that id (a replay), if any."""

    session: Row
    annotation: Row | None = None


# --- the one explanation of a refused statement ----------------------------------------------

_LOOKUP = (
    select(
        SESSIONS.c.id,
        SESSIONS.c.token,
        SESSIONS.c.status,
        SESSIONS.c.furthest,
        SESSIONS.c.platform,
        SESSIONS.c.completion_code,
        SESSIONS.c.outcome,
        SESSIONS.c.task_opened_at,
        SESSIONS.c.document_id,
        DOCUMENTS.c.content_hash,
        DOCUMENTS.c.paragraph_count,
        DOCUMENTS.c.gold,
    )
    .join_from(SESSIONS, DOCUMENTS)
    .where(BY_TOKEN)
)

_FIND = select(ANNOTATIONS).where(
    ANNOTATIONS.c.session_id == bindparam("sid"), ANNOTATIONS.c.client_id == bindparam("cid")
)

_DUPLICATE = (
    select(ANNOTATIONS.c.client_id)
    .where(
        ANNOTATIONS.c.session_id == bindparam("sid"),
        ANNOTATIONS.c.deleted_at.is_(None),
        *[ANNOTATIONS.c[name] == bindparam(name) for name in DUPLICATE_KEY],
        *[
            ANNOTATIONS.c[name].is_not_distinct_from(
                bindparam(name, type_=ANNOTATIONS.c[name].type)
            )
            for name in DUPLICATE_PAIRED_KEY
        ],
    )
    .order_by(ANNOTATIONS.c.id)
    .limit(1)
)


# A second Submit answers the first's completion; a heartbeat has nothing to refuse.
_ALLOWED_AFTER_SUBMIT = (Action.SUBMIT, Action.HEARTBEAT)


def explain_refusal(token: str, action: Action, sent: Any = None) -> Explained:
    """Why an action's guarded statement changed no row: look the session up and raise
    the ApiError the contract names (404 no session, 409 submitted, 422 a rule or the
    position, 409 a save's id stored with other content, 404 a remove's unknown id).

    Returns what it found when nothing refuses the action: a replay (the stored
    annotation), a second Submit, a Submit whose outcome the attention checks decide, or
    a state that changed between the statement and the look-up (the caller runs its
    statement once more). `sent`: the save's body, the remove's id, the move's target."""
    connection = autocommit_connection()
    session = None
    if token and len(token) <= 64:
        session = connection.execute(_LOOKUP, {"session_token": token}).first()
    if session is None:
        end_orm_transaction()
        raise ApiError.not_found(NO_SESSION)
    if session.status == SessionStatus.SUBMITTED and action not in _ALLOWED_AFTER_SUBMIT:
        end_orm_transaction()
        raise submitted_error()
    if action in (Action.MOVE, Action.SUBMIT) and session.status != SessionStatus.SUBMITTED:
        _check_task_open(session)
    annotation = None
    if action == Action.SAVE:
        _check(sent, _reached_texts(session, sent), session.furthest)
        annotation = connection.execute(_FIND, {"sid": session.id, "cid": sent.id}).first()
        if annotation is not None and _stored_key(annotation) != _sent_key(sent):
            end_orm_transaction()
            raise ApiError.conflict(
                "An annotation with this id was already saved with different content. "
                "Reload the page to see what is stored.",
                field="id",
            )
        if annotation is None and sent.suggestion_id is None:
            _check_not_duplicate(connection, session.id, sent)
    elif action == Action.REMOVE:
        canonical = canonical_uuid(sent)
        if canonical:
            annotation = connection.execute(_FIND, {"sid": session.id, "cid": canonical}).first()
        if annotation is None:
            end_orm_transaction()
            raise ApiError.not_found("This session has no annotation with that id.", field="id")
    elif action == Action.MOVE:
        _check_position(session, sent)
    elif action == Action.SUBMIT and session.status != SessionStatus.SUBMITTED:
        _check_finished(session)
    end_orm_transaction()
    return Explained(session, annotation)


def _check_task_open(session: Row) -> None:
    """A move or Submit of a session that ended before its task, or whose task was never
    served (an earlier step pending), is refused (the move's and Submit's guards)."""
    if session.outcome is not None:
        end_orm_transaction()
        raise study_ended_error()
    if session.task_opened_at is None and current_taxonomy().has_steps_around_task:
        end_orm_transaction()
        raise step_pending_error()


def _check_not_duplicate(connection: Any, session_id: int, data: AnnotationIn) -> None:
    """422 `duplicate_annotation` when a live annotation of the session has the same
    category and spans (DUPLICATE_KEY) under another id."""
    paired = data.paired_span
    params = {
        "sid": session_id,
        "category": data.category,
        "paragraph_id": data.span.paragraph_id,
        "span_start": data.span.start,
        "span_end": data.span.end,
        "paired_paragraph_id": paired.paragraph_id if paired else None,
        "paired_start": paired.start if paired else None,
        "paired_end": paired.end if paired else None,
    }
    found = connection.execute(_DUPLICATE, params).first()
    if found is not None:
        end_orm_transaction()
        raise ApiError.unprocessable(
            "You have already added this annotation: the same error type on the same "
            "text. Remove that one first, or change the span or the error type.",
            code="duplicate_annotation",
            field="span",
            duplicate_of=found.client_id,
        )


def _check_position(session: Row, paragraph_id: int) -> None:
    limit = min(session.furthest + 1, session.paragraph_count - 1)
    if not 0 <= paragraph_id <= limit:
        raise ApiError.unprocessable(
            f"You can go to paragraphs 0 to {limit} (one past the furthest you have read); "
            f"{paragraph_id} is not among them.",
            code="position_out_of_range",
            field="paragraph_id",
        )


def _check_finished(session: Row) -> None:
    last = session.paragraph_count - 1
    if session.furthest < last:
        raise ApiError.unprocessable(
            f"Read every paragraph first: you have reached paragraph {session.furthest + 1} "
            f"of {last + 1}.",
            code="not_finished",
            field="furthest",
        )


def changed_meanwhile() -> ApiError:
    """The statement refused twice what the look-up between found allowed."""
    return ApiError.conflict("The task changed while this was being saved. Try again.")


# --- the rules of a save -----------------------------------------------------------------


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
    made_from = stored_suggestion_id(annotation.suggestion_id)  # issue 18: Accept / Edit
    text = (annotation.category, (*span, annotation.span_text), paired, annotation.comment)
    return (*text, made_from, annotation.severity)


def _sent_key(data: AnnotationIn) -> tuple[Any, ...]:
    spans = (_span_key(data.span), _span_key(data.paired_span))
    return (data.category, *spans, data.comment, data.suggestion_id, data.severity)


def spans_of(data: AnnotationIn) -> list[SpanIn]:
    return [data.span] if data.paired_span is None else [data.span, data.paired_span]


def _reached_texts(session: Row, data: AnnotationIn) -> dict[int, str]:
    """The stored texts of the paragraphs the annotation's spans are in, where reached."""
    texts = document_texts(session.document_id, session.content_hash)
    last = min(session.furthest, len(texts) - 1)
    return {
        s.paragraph_id: texts[s.paragraph_id] for s in spans_of(data) if 0 <= s.paragraph_id <= last
    }


def _check(data: AnnotationIn, texts: Mapping[int, Any], furthest: int) -> None:
    """The annotation rules (app.rules.annotation) against these paragraph texts."""
    try:
        check_rules(
            data,
            texts,
            furthest,
            taxonomy=current_taxonomy(),
            max_comment_length=max_comment_length(),
            comment_required=current_taxonomy().comment.required,
        )
    except SpanError as error:
        raise ApiError.unprocessable(error.message, code=error.code, field=error.field) from None


class _Quoted:
    """A paragraph as the annotation quotes it: each span's slice is the text it sends.
    The rules that need the stored text then pass exactly when the quotes are right,
    which the save's statement checks in the database."""

    def __init__(self, quotes: dict[tuple[int, int], str]) -> None:
        self.quotes = quotes

    def __len__(self) -> int:
        return INT32_MAX

    def __getitem__(self, where: slice) -> str:
        return self.quotes[(where.start, where.stop)]


def keeps_rules_as_sent(data: AnnotationIn) -> bool:
    """Whether the annotation keeps every rule if its quotes are the stored text and its
    paragraphs reached (both checked by the statement, in the database)."""
    quoted: dict[int, _Quoted] = {}
    for span in spans_of(data):
        if 0 <= span.paragraph_id <= INT32_MAX:
            quotes = quoted.setdefault(span.paragraph_id, _Quoted({})).quotes
            quotes[(span.start, span.end)] = span.text
    try:
        _check(data, quoted, furthest=sys.maxsize)
    except ApiError:
        return False
    return True
