"""The worker's frequent writes: save, remove and move, each one or two statements.

A worker saves every few seconds, so these skip the ORM's unit of work: the session's
columns are read with one Core SELECT into a `SessionRef`, and each change is a single
statement run in autocommit (one statement needs no transaction of its own, and leaving
out BEGIN/COMMIT saves a round trip). Races are settled by the statements themselves:
the unique constraint on (session, client id) for saves, `status <> 'submitted'` and a
monotonic `furthest` in the WHERE/SET of a move. Every function is safe to run again
(see app.persistence.retry_on_disconnect).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from types import SimpleNamespace
from typing import Any

from sqlalchemy import Connection, bindparam, case, select, update
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from app.annotate.schemas import AnnotationIn, SpanIn, canonical_uuid
from app.annotate.sessions import (
    document_texts,
    ensure_writable,
    max_comment_length,
    submitted_error,
    touch_due,
)
from app.errors import ApiError
from app.extensions import db
from app.models import Annotation, AnnotationSession, Document, Paragraph, utcnow
from app.spans import SpanError, check_annotation
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


@dataclass(frozen=True)
class SaveResult:
    """The stored annotation; `created` is False for a replay of an earlier save."""

    annotation: Annotation | SimpleNamespace  # the stored row (annotation_dict's shape)
    created: bool


@dataclass(frozen=True)
class Move:
    """Where a move left the session, and the paragraphs it revealed."""

    position: int
    furthest: int
    revealed: list[Paragraph]


def _connection() -> Connection:
    """The request's database connection, in autocommit when the request starts with it:
    each write is one statement. (A session already in a transaction, as when tests share
    one session across requests, keeps it; the functions below commit at their end, which
    costs no round trip in autocommit.)"""
    if db.session().in_transaction():
        return db.session.connection()
    return db.session.connection(execution_options={"isolation_level": "AUTOCOMMIT"})


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

# Activity: a session marked abandoned comes back to life when used again.
_REVIVED_STATUS = case((SESSIONS.c.status == "abandoned", "active"), else_=SESSIONS.c.status)

_TOUCH = (
    update(SESSIONS)
    .where(SESSIONS.c.id == bindparam("sid"))
    .values(last_seen_at=bindparam("now"), status=_REVIVED_STATUS)
)


def session_ref_or_404(token: str) -> SessionRef:
    """The session this capability token opens; a 404 envelope when there is none."""
    row = None
    if token and len(token) <= 64:
        row = _connection().execute(_LOOKUP, {"token": token}).first()
    if row is None:
        raise ApiError.not_found("No annotation session has this link. Check the address.")
    return SessionRef(*row)


def touch(ref: SessionRef) -> None:
    """Record activity (at most once a minute; see sessions.touch_due)."""
    if touch_due(ref.last_seen_at, ref.status):
        _connection().execute(_TOUCH, {"sid": ref.id, "now": utcnow()})


# --- save -------------------------------------------------------------------------------


def _span_key(span: SpanIn | None) -> tuple[int, int, int, str] | None:
    return None if span is None else (span.paragraph_id, span.start, span.end, span.text)


def _stored_key(annotation: Annotation) -> tuple[Any, ...]:
    paired = None
    if annotation.paired_paragraph_id is not None:
        paired = (
            annotation.paired_paragraph_id,
            annotation.paired_start,
            annotation.paired_end,
            annotation.paired_text,
        )
    span = (annotation.paragraph_id, annotation.span_start, annotation.span_end)
    return (annotation.category, (*span, annotation.span_text), paired, annotation.comment)


def _sent_key(data: AnnotationIn) -> tuple[Any, ...]:
    return (data.category, _span_key(data.span), _span_key(data.paired_span), data.comment)


def _texts(ref: SessionRef, paragraph_ids: Iterable[int]) -> dict[int, str]:
    """Only the paragraphs the rules need, and only positions the worker has reached."""
    texts = document_texts(ref.document_id, ref.content_hash)
    last = min(ref.furthest, len(texts) - 1)
    return {pid: texts[pid] for pid in set(paragraph_ids) if 0 <= pid <= last}


def _check(ref: SessionRef, data: AnnotationIn) -> None:
    taxonomy = current_taxonomy()
    needed = [data.span.paragraph_id]
    if data.paired_span is not None:
        needed.append(data.paired_span.paragraph_id)
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
            texts=_texts(ref, needed),
            furthest=ref.furthest,
        )
    except SpanError as error:
        raise ApiError.unprocessable(error.message, code=error.code, field=error.field) from None


def save_annotation(ref: SessionRef, data: AnnotationIn) -> SaveResult:
    """Store one Add; a replay of the same id and body returns the stored row.

    The rules are checked first, then one INSERT ... ON CONFLICT DO NOTHING settles
    replays and concurrent duplicates in the database (the unique constraint on session
    and client id): a new annotation costs one statement."""
    ensure_writable(ref.status)
    _check(ref, data)
    paired = data.paired_span
    values = {
        "session_id": ref.id,
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
    }
    connection = _connection()
    new_id = connection.execute(_insert_statement(connection.dialect.name), values).scalar()
    if new_id is not None:
        db.session.commit()
        # The row as stored, without building an ORM object for it.
        return SaveResult(SimpleNamespace(id=new_id, deleted_at=None, **values), created=True)
    existing = _find_annotation(ref, data.id)
    db.session.commit()
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
    insert = {"postgresql": postgresql_insert, "sqlite": sqlite_insert}[dialect]
    return (
        insert(ANNOTATIONS)
        .on_conflict_do_nothing(index_elements=["session_id", "client_id"])
        .returning(ANNOTATIONS.c.id)
    )


def _find_annotation(ref: SessionRef, client_id: str) -> Annotation | None:
    query = db.select(Annotation).filter_by(session_id=ref.id, client_id=client_id)
    return db.session.scalars(query).first()


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
        db.session.commit()
        if found:
            return
    raise ApiError.not_found("This session has no annotation with that id.", field="id")


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


def move_position(ref: SessionRef, paragraph_id: int) -> Move:
    """Go to a paragraph (at most one past the furthest); a move also records activity."""
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
    moved = _connection().execute(_MOVE, params).rowcount
    db.session.commit()
    if not moved:
        raise submitted_error()  # submitted in another tab since it was read
    revealed: list[Paragraph] = []
    if paragraph_id > ref.furthest:  # the worker reads on: send the new paragraphs
        texts = document_texts(ref.document_id, ref.content_hash)
        revealed = [
            Paragraph(position=position, text=texts[position])
            for position in range(ref.furthest + 1, paragraph_id + 1)
        ]
    return Move(paragraph_id, max(ref.furthest, paragraph_id), revealed)
