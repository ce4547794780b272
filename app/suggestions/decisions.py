"""Workers' decisions on suggestions: what the page shows, and the rules of each write.

A suggestion is *decided* in a session when the session has a live annotation made from
it (Accept or Edit: `annotations.suggestion_id`, `origin` suggestion-accepted or
suggestion-edited) or a rejection not withdrawn. Removing that annotation (or undoing
the rejection) makes it undecided again; every row stays (soft deletes), so the exports
keep each decision ever made. An Add made from a suggestion is an *Accept* when it keeps
the suggestion's category, spans and comment (the model's comment, else its question)
exactly, an *Edit* otherwise: the server decides, not the page. (Severities, issue 18
point 4, are not part of that comparison: an Accept asks the worker for one.) A worker
may not move past a paragraph whose suggestions are undecided (422
`suggestions_undecided`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, bindparam, exists, func, select, update

from app.core.errors import ApiError
from app.core.extensions import db
from app.crowd.session_errors import NO_SESSION, submitted_error
from app.models import Annotation, AnnotationSession, Suggestion, SuggestionRejection, utcnow
from app.rules.statuses import SessionStatus

SUGGESTIONS = Suggestion.__table__
SESSIONS = AnnotationSession.__table__
ANNOTATIONS = Annotation.__table__
REJECTIONS = SuggestionRejection.__table__
ACCEPTED, EDITED, WORKER = "suggestion-accepted", "suggestion-edited", "worker"
DECISION_OF_ORIGIN = {ACCEPTED: "accepted", EDITED: "edited"}


@dataclass(frozen=True)
class SessionKey:
    """What a decision needs of the session a capability token opens."""

    id: int
    document_id: int
    furthest: int
    status: str


_SESSION = select(
    SESSIONS.c.id, SESSIONS.c.document_id, SESSIONS.c.furthest, SESSIONS.c.status
).where(SESSIONS.c.token == bindparam("token"))


def find_session(token: str) -> SessionKey | None:
    """The session this token opens, or None."""
    row = None
    if token and len(token) <= 64:
        row = db.session.execute(_SESSION, {"token": token}).first()
    db.session.commit()
    return None if row is None else SessionKey(*row)


def session_or_404(token: str, *, writable: bool = False) -> SessionKey:
    """The session this token opens: 404 when none; 409 when `writable` and submitted."""
    session = find_session(token)
    if session is None:
        raise ApiError.not_found(NO_SESSION)
    if writable and session.status == SessionStatus.SUBMITTED:
        raise submitted_error()
    return session


def _span(paragraph_id: int | None, start: int | None, end: int | None, text: str | None):
    if paragraph_id is None:
        return None
    return {"paragraph_id": paragraph_id, "start": start, "end": end, "text": text}


def accept_comment(suggestion: Any) -> str | None:
    """The comment an Accept keeps: the model's comment, else its question."""
    return suggestion.comment or suggestion.question


def suggestion_dict(suggestion: Any) -> dict[str, Any]:
    """A suggestion as the page gets it (no source: the worker sees "suggested" only)."""
    return {
        "id": suggestion.external_id,
        "category": suggestion.category,
        "labels": list(suggestion.labels or []),
        "span": _span(
            suggestion.paragraph_id,
            suggestion.span_start,
            suggestion.span_end,
            suggestion.span_text,
        ),
        "paired_span": _span(
            suggestion.paired_paragraph_id,
            suggestion.paired_start,
            suggestion.paired_end,
            suggestion.paired_text,
        ),
        "question": suggestion.question,
        "comment": accept_comment(suggestion),
    }


# --- the page's state ---------------------------------------------------------------------

_LIVE_MADE = select(
    ANNOTATIONS.c.suggestion_id, ANNOTATIONS.c.origin, ANNOTATIONS.c.client_id
).where(
    ANNOTATIONS.c.session_id == bindparam("sid"),
    ANNOTATIONS.c.suggestion_id.is_not(None),
    ANNOTATIONS.c.deleted_at.is_(None),
)
_LIVE_REJECTED = select(REJECTIONS.c.suggestion_id, REJECTIONS.c.client_id).where(
    REJECTIONS.c.session_id == bindparam("sid"), REJECTIONS.c.withdrawn_at.is_(None)
)


def session_suggestions(session_id: int, document_id: int, furthest: int) -> list[dict[str, Any]]:
    """The suggestions of the paragraphs the session has reached, each with its decision
    ("accepted" | "edited" | "rejected" | None) and the annotation it made."""
    rows = db.session.execute(
        select(SUGGESTIONS)
        .where(SUGGESTIONS.c.document_id == document_id, SUGGESTIONS.c.paragraph_id <= furthest)
        .order_by(SUGGESTIONS.c.paragraph_id, SUGGESTIONS.c.span_start, SUGGESTIONS.c.id)
    ).all()
    made = {row.suggestion_id: row for row in db.session.execute(_LIVE_MADE, {"sid": session_id})}
    rejected = dict(db.session.execute(_LIVE_REJECTED, {"sid": session_id}).all())
    db.session.commit()
    result = []
    for row in rows:
        record = suggestion_dict(row)
        annotation = made.get(row.id)
        if annotation is not None:
            record["decision"] = DECISION_OF_ORIGIN[annotation.origin]
            record["annotation_id"] = annotation.client_id
        else:
            record["decision"] = "rejected" if row.id in rejected else None
            record["annotation_id"] = None
        result.append(record)
    return result


# --- Accept and Edit: the annotation's link -----------------------------------------------


def _find(document_id: int, external_id: str) -> Suggestion:
    suggestion = db.session.scalars(
        select(Suggestion).where(
            Suggestion.external_id == external_id, Suggestion.document_id == document_id
        )
    ).first()
    if suggestion is None:
        raise ApiError.unprocessable(
            "This document has no suggestion with that id.",
            code="unknown_suggestion",
            field="suggestion_id",
        )
    return suggestion


def _decided_elsewhere(session_id: int, suggestion_id: int, client_id: str | None) -> bool:
    made = exists().where(
        ANNOTATIONS.c.session_id == session_id,
        ANNOTATIONS.c.suggestion_id == suggestion_id,
        ANNOTATIONS.c.deleted_at.is_(None),
        ANNOTATIONS.c.client_id != (client_id or ""),
    )
    rejected = exists().where(
        REJECTIONS.c.session_id == session_id,
        REJECTIONS.c.suggestion_id == suggestion_id,
        REJECTIONS.c.withdrawn_at.is_(None),
        REJECTIONS.c.client_id != (client_id or ""),
    )
    return bool(db.session.scalar(select(made | rejected)))


def _already_decided() -> ApiError:
    return ApiError(
        409,
        "suggestion_decided",
        "This suggestion has already been decided in this task: remove that annotation "
        "(or undo the rejection) first.",
        {"field": "suggestion_id"},
    )


def annotation_link(token: str, annotation: Any) -> dict[str, Any]:
    """The `suggestion_id` and `origin` columns of an Add (`annotation`: the request's
    AnnotationIn): worker when it names no suggestion; else accepted or edited (rule
    above). 422 for a suggestion of another document, 409 when it is already decided.
    A token that opens no writable session gets the worker's columns: the save's own
    statement then refuses it, with the contract's answer (404, 409 submitted)."""
    external_id = annotation.suggestion_id
    if external_id is None:
        return {"suggestion_id": None, "origin": WORKER}
    session = find_session(token)
    if session is None or session.status == SessionStatus.SUBMITTED:
        return {"suggestion_id": None, "origin": WORKER}
    suggestion = _find(session.document_id, external_id)
    if _decided_elsewhere(session.id, suggestion.id, annotation.id):
        db.session.commit()
        raise _already_decided()
    db.session.commit()
    paired = annotation.paired_span
    sent = (
        annotation.category,
        (annotation.span.paragraph_id, annotation.span.start, annotation.span.end),
        None if paired is None else (paired.paragraph_id, paired.start, paired.end),
        annotation.comment,
    )
    offered = (
        suggestion.category,
        (suggestion.paragraph_id, suggestion.span_start, suggestion.span_end),
        None
        if suggestion.paired_paragraph_id is None
        else (suggestion.paired_paragraph_id, suggestion.paired_start, suggestion.paired_end),
        accept_comment(suggestion),
    )
    return {"suggestion_id": suggestion.id, "origin": ACCEPTED if sent == offered else EDITED}


def stored_suggestion_id(suggestion_pk: int | None) -> str | None:
    """The external id of a stored annotation's suggestion (for replays and answers)."""
    if suggestion_pk is None:
        return None
    external = db.session.scalar(
        select(Suggestion.external_id).where(Suggestion.id == suggestion_pk)
    )
    db.session.commit()
    return external


# --- Reject -----------------------------------------------------------------------------


def reject(
    session_id: int, document_id: int, furthest: int, external_id: str, client_id: str
) -> bool:
    """Record a rejection (idempotent per client id); True when it is new. 422 for an
    unknown suggestion or one in a paragraph not reached, 409 when already decided
    otherwise."""
    suggestion = _find(document_id, external_id)
    if suggestion.paragraph_id > furthest:
        db.session.commit()
        raise ApiError.unprocessable(
            "That suggestion is in a paragraph you have not reached.",
            code="paragraph_not_reached",
            field="suggestion_id",
        )
    existing = db.session.scalars(
        select(SuggestionRejection).where(
            SuggestionRejection.session_id == session_id,
            SuggestionRejection.client_id == client_id,
        )
    ).first()
    if existing is not None:
        db.session.commit()
        if existing.suggestion_id != suggestion.id:
            raise ApiError.conflict(
                "A rejection with this id was already saved for another suggestion.", field="id"
            )
        return False
    if _decided_elsewhere(session_id, suggestion.id, client_id):
        db.session.commit()
        raise _already_decided()
    db.session.add(
        SuggestionRejection(session_id=session_id, suggestion_id=suggestion.id, client_id=client_id)
    )
    db.session.commit()
    return True


def withdraw_rejection(session_id: int, document_id: int, external_id: str) -> None:
    """Undo the session's live rejection of a suggestion (kept, with withdrawn_at)."""
    suggestion = _find(document_id, external_id)
    db.session.execute(
        update(REJECTIONS)
        .where(
            REJECTIONS.c.session_id == session_id,
            REJECTIONS.c.suggestion_id == suggestion.id,
            REJECTIONS.c.withdrawn_at.is_(None),
        )
        .values(withdrawn_at=utcnow())
    )
    db.session.commit()


# --- the move guard -----------------------------------------------------------------------

_UNDECIDED = (
    select(func.min(SUGGESTIONS.c.paragraph_id), func.count(SUGGESTIONS.c.id))
    .select_from(SUGGESTIONS.join(SESSIONS, SESSIONS.c.document_id == SUGGESTIONS.c.document_id))
    .where(
        SESSIONS.c.token == bindparam("token"),
        SESSIONS.c.arm == "show",
        SESSIONS.c.status != SessionStatus.SUBMITTED,
        SUGGESTIONS.c.paragraph_id >= SESSIONS.c.position,
        SUGGESTIONS.c.paragraph_id < bindparam("to"),
        ~exists().where(
            and_(
                ANNOTATIONS.c.session_id == SESSIONS.c.id,
                ANNOTATIONS.c.suggestion_id == SUGGESTIONS.c.id,
                ANNOTATIONS.c.deleted_at.is_(None),
            )
        ),
        ~exists().where(
            and_(
                REJECTIONS.c.session_id == SESSIONS.c.id,
                REJECTIONS.c.suggestion_id == SUGGESTIONS.c.id,
                REJECTIONS.c.withdrawn_at.is_(None),
            )
        ),
    )
)


def guard_move(token: str, to: int) -> None:
    """422 `suggestions_undecided` when the move to paragraph `to` would pass a paragraph
    (from the current one on) with undecided suggestions (open sessions in the show arm;
    any other case is left to the move's own statement)."""
    first, count = db.session.execute(_UNDECIDED, {"token": token, "to": to}).one()
    db.session.commit()
    if count:
        raise ApiError.unprocessable(
            f"Decide on every suggestion in paragraph {first + 1} first (Accept, Reject or "
            f"Edit): {count} still undecided.",
            code="suggestions_undecided",
            field="paragraph_id",
            paragraph_id=first,
            undecided=count,
        )
