"""Annotation sessions: start or resume, save and remove annotations, move, submit.

Every function here is the whole of one worker action: it checks the rules, changes the
rows and commits. Errors are ApiErrors with a message the worker can act on. Races are
settled by the database's unique constraints: insert in a savepoint, and on a conflict
read back the row the other request stored.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, timedelta
from functools import lru_cache
from typing import Any

from flask import current_app, url_for
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import joinedload

from app.annotate.completion import prolific_completion_url
from app.annotate.schemas import AnnotationIn, SpanIn, canonical_uuid
from app.errors import ApiError
from app.extensions import db
from app.identity import WorkerIdentity, get_or_create_annotator
from app.models import Annotation, AnnotationSession, Document, Paragraph, utcnow
from app.persistence import get_or_create
from app.spans import SpanError, check_annotation
from app.taxonomy import current_taxonomy

TOUCH_INTERVAL = timedelta(minutes=1)


@dataclass(frozen=True)
class SaveResult:
    """The stored annotation; `created` is False for a replay of an earlier save."""

    annotation: Annotation
    created: bool


@dataclass(frozen=True)
class Completion:
    """What Submit answers: the completion code and where the worker goes next."""

    completion_code: str
    redirect_url: str

    def to_dict(self) -> dict[str, str]:
        """The JSON body of POST /submit."""
        return {"completion_code": self.completion_code, "redirect_url": self.redirect_url}


# --- lookup -----------------------------------------------------------------------------


def find_session(token: str, *, lean: bool = False) -> AnnotationSession | None:
    """The session this capability token opens (with its document), or None.

    `lean` loads only the document columns that writes need, not its JSON metadata."""
    if not token or len(token) > 64:
        return None
    document = joinedload(AnnotationSession.document)
    if lean:
        document = document.load_only(
            Document.id, Document.external_id, Document.paragraph_count, Document.content_hash
        )
    query = db.select(AnnotationSession).options(document).filter_by(token=token)
    return db.session.scalars(query).first()


def session_or_404(token: str, *, lean: bool = False) -> AnnotationSession:
    """The session for this token; a 404 envelope when there is none."""
    session = find_session(token, lean=lean)
    if session is None:
        raise ApiError.not_found("No annotation session has this link. Check the address.")
    return session


def find_document(external_id: str) -> Document | None:
    """The document with this external id, or None."""
    if not external_id or len(external_id) > 200:
        return None
    return db.session.scalars(db.select(Document).filter_by(external_id=external_id)).first()


def touch(session: AnnotationSession) -> None:
    """Record activity; a session marked abandoned comes back to life when used again.

    last_seen_at is written at most once a minute: abandonment is measured in minutes,
    and skipping the UPDATE keeps a save to a few round trips."""
    now = utcnow()
    last = session.last_seen_at
    if last is not None and last.tzinfo is None:  # SQLite returns naive UTC datetimes
        last = last.replace(tzinfo=UTC)
    if last is None or now - last >= TOUCH_INTERVAL or session.status == "abandoned":
        session.last_seen_at = now
    if session.status == "abandoned":
        session.status = "active"


def is_submitted(session: AnnotationSession) -> bool:
    """True once the worker has submitted; the session is then read-only."""
    return session.status == "submitted"


def _ensure_writable(session: AnnotationSession) -> None:
    if is_submitted(session):
        raise ApiError(
            409,
            "session_submitted",
            "This task has already been submitted; it can no longer be changed.",
        )


def max_comment_length() -> int:
    """The comment limit: the smaller of the taxonomy's and the app's MAX_COMMENT_LENGTH."""
    limits = [current_taxonomy().comment.max_length]
    configured = current_app.config.get("MAX_COMMENT_LENGTH")
    if isinstance(configured, int) and configured > 0:
        limits.append(configured)
    return min(limits)


def live_annotations(session: AnnotationSession) -> list[Annotation]:
    """The session's annotations that were not removed, by paragraph and offset."""
    query = (
        db.select(Annotation)
        .where(Annotation.session_id == session.id, Annotation.deleted_at.is_(None))
        .order_by(
            Annotation.paragraph_id, Annotation.span_start, Annotation.span_end, Annotation.id
        )
    )
    return list(db.session.scalars(query))


# --- start / resume ---------------------------------------------------------------------


def start_or_resume_session(document: Document, identity: WorkerIdentity) -> AnnotationSession:
    """The one session of this worker on this document, created if new; commits.

    Safe when the same worker opens the link twice at once: the unique constraint on
    (document, annotator) lets one insert win and the other reads that row back.
    """
    session, created = get_or_create(
        AnnotationSession,
        defaults={
            "platform": identity.platform,
            "platform_params": dict(identity.params),
            "taxonomy_version": current_taxonomy().version,
            "is_attention_check": document.is_attention_check,
        },
        document_id=document.id,
        annotator_id=get_or_create_annotator(identity).id,
    )
    if not created:
        _resume(session, identity)
    db.session.commit()
    return session


def _resume(session: AnnotationSession, identity: WorkerIdentity) -> None:
    # A returning MTurk worker may bring a new assignmentId: the latest parameters win.
    if identity.params:
        session.platform_params = {**(session.platform_params or {}), **identity.params}
    touch(session)


# --- annotations ------------------------------------------------------------------------


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


def _find_annotation(session: AnnotationSession, client_id: str) -> Annotation | None:
    query = db.select(Annotation).filter_by(session_id=session.id, client_id=client_id)
    return db.session.scalars(query).first()


def _replay(existing: Annotation, data: AnnotationIn) -> SaveResult:
    if _stored_key(existing) != _sent_key(data):
        raise ApiError.conflict(
            "An annotation with this id was already saved with different content. "
            "Reload the page to see what is stored.",
            field="id",
        )
    return SaveResult(existing, created=False)


def _texts(session: AnnotationSession, paragraph_ids: Iterable[int]) -> dict[int, str]:
    """Only the paragraphs the rules need, and only positions the worker has reached."""
    texts = document_texts(session.document_id, session.document.content_hash)
    last = min(session.furthest, len(texts) - 1)
    return {pid: texts[pid] for pid in set(paragraph_ids) if 0 <= pid <= last}


@lru_cache(maxsize=128)
def document_texts(document_id: int, content_hash: str) -> tuple[str, ...]:
    """A document's paragraph texts, memoised by content hash. The text under a hash never
    changes (an import that changes it changes the hash), so each process may keep a copy
    and a save needs no query for it."""
    query = (
        db.select(Paragraph.text)
        .where(Paragraph.document_id == document_id)
        .order_by(Paragraph.position)
    )
    return tuple(db.session.scalars(query))


def _check(session: AnnotationSession, data: AnnotationIn) -> None:
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
            texts=_texts(session, needed),
            furthest=session.furthest,
        )
    except SpanError as error:
        raise ApiError.unprocessable(error.message, code=error.code, field=error.field) from None


def save_annotation(session: AnnotationSession, data: AnnotationIn) -> SaveResult:
    """Store one Add; a replay of the same id and body returns the stored row (commits).

    The rules are checked first, then one INSERT ... ON CONFLICT DO NOTHING settles
    replays and concurrent duplicates in the database (the unique constraint on
    session and client id): a save is a handful of round trips."""
    _ensure_writable(session)
    _check(session, data)
    paired = data.paired_span
    annotation = Annotation(
        session_id=session.id,
        client_id=data.id,
        paragraph_id=data.span.paragraph_id,
        span_start=data.span.start,
        span_end=data.span.end,
        span_text=data.span.text,
        category=data.category,
        paired_paragraph_id=paired.paragraph_id if paired else None,
        paired_start=paired.start if paired else None,
        paired_end=paired.end if paired else None,
        paired_text=paired.text if paired else None,
        comment=data.comment,
        created_at=utcnow(),
    )
    annotation.id = _insert_unless_present(annotation)
    if annotation.id is None:
        existing = _find_annotation(session, data.id)
        db.session.commit()
        return _replay(existing, data)
    db.session.commit()
    return SaveResult(annotation, created=True)


_COPIED = (
    "session_id", "client_id", "paragraph_id", "span_start", "span_end", "span_text",
    "category", "paired_paragraph_id", "paired_start", "paired_end", "paired_text",
    "comment", "created_at",
)  # fmt: skip


def _insert_unless_present(annotation: Annotation) -> int | None:
    """INSERT the row unless (session, client id) exists; its new id, or None."""
    statement = _insert_statement(db.session.get_bind().dialect.name)
    values = {name: getattr(annotation, name) for name in _COPIED}
    return db.session.execute(statement, values).scalar()


@lru_cache(maxsize=4)
def _insert_statement(dialect: str):
    """INSERT ... ON CONFLICT DO NOTHING RETURNING id, built once per dialect (a Core
    statement with bound parameters: building it per save cost more than running it)."""
    insert = {"postgresql": postgresql_insert, "sqlite": sqlite_insert}[dialect]
    table = Annotation.__table__
    return (
        insert(table)
        .on_conflict_do_nothing(index_elements=["session_id", "client_id"])
        .returning(table.c.id)
    )


def remove_annotation(session: AnnotationSession, client_id: str) -> None:
    """Soft-delete one of this session's annotations (again is fine); commits."""
    _ensure_writable(session)
    canonical = canonical_uuid(client_id)
    annotation = _find_annotation(session, canonical) if canonical else None
    if annotation is None:
        raise ApiError.not_found("This session has no annotation with that id.", field="id")
    if annotation.deleted_at is None:
        annotation.deleted_at = utcnow()
    db.session.commit()


# --- progress and submit ----------------------------------------------------------------


def move_position(session: AnnotationSession, paragraph_id: int) -> list[Paragraph]:
    """Go to a paragraph (at most one past the furthest); returns newly revealed ones."""
    _ensure_writable(session)
    total = session.document.paragraph_count
    limit = min(session.furthest + 1, total - 1)
    if not 0 <= paragraph_id <= limit:
        raise ApiError.unprocessable(
            f"You can go to paragraphs 0 to {limit} (one past the furthest you have read); "
            f"{paragraph_id} is not among them.",
            code="position_out_of_range",
            field="paragraph_id",
        )
    revealed: list[Paragraph] = []
    if paragraph_id > session.furthest:  # the worker reads on: send the new paragraphs
        texts = document_texts(session.document_id, session.document.content_hash)
        revealed = [
            Paragraph(position=position, text=texts[position])
            for position in range(session.furthest + 1, paragraph_id + 1)
        ]
        session.furthest = paragraph_id
    session.position = paragraph_id
    db.session.commit()
    return revealed


def completion_for(session: AnnotationSession) -> Completion:
    """The completion code and the address to go to after Submit."""
    redirect_url = None
    if session.platform == "prolific":
        template = current_app.config.get("COMPLETION_URL") or (
            current_taxonomy().study.completion_url
        )
        redirect_url = prolific_completion_url(template, session.completion_code)
    if redirect_url is None:
        redirect_url = url_for("annotate.complete", token=session.token)
    return Completion(session.completion_code, redirect_url)


def submit_session(session: AnnotationSession) -> Completion:
    """Submit once every paragraph was reached; a second Submit answers the same; commits."""
    if not is_submitted(session):
        last = session.document.paragraph_count - 1
        if session.furthest < last:
            raise ApiError.unprocessable(
                f"Read every paragraph first: you have reached paragraph {session.furthest + 1} "
                f"of {last + 1}.",
                code="not_finished",
                field="furthest",
            )
        session.status = "submitted"
        session.submitted_at = utcnow()
    db.session.commit()
    return completion_for(session)
