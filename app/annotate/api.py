"""Worker JSON API (docs/contracts.md#worker-api): parse, call app.annotate.writes, respond.

The CSRF check uses a token derived from the session token and SECRET_KEY, not a cookie:
crowd platforms show the task in third-party iframes where cookies may be blocked.
"""

from __future__ import annotations

from typing import TypeVar

from flask import jsonify

from app.annotate import api_bp, reads, writes
from app.annotate.schemas import (
    AnnotationIn,
    HeartbeatIn,
    PositionIn,
    RejectionIn,
    SubmitIn,
    parse_body,
)
from app.annotate.serializers import annotation_dict, paragraph_dict, session_state
from app.api_spec import build_spec
from app.core.errors import ApiError
from app.core.persistence import retry_on_disconnect
from app.core.rate_limits import limit_blueprint, url_token
from app.core.request_json import json_object
from app.core.security import require_capability_csrf
from app.crowd import journey
from app.crowd.session_errors import NO_SESSION, step_pending_error, study_ended_error
from app.rules.statuses import SessionStatus
from app.suggestions import arms as suggestion_arms
from app.suggestions import decisions as suggestion_decisions

Body = TypeVar("Body")
PAST_THE_END = 2**31 - 1  # Submit passes every paragraph (the suggestions guard)

# One limit for every write of a session, keyed by the capability token, not the IP (many
# workers may share one NAT address).
limit_blueprint(api_bp, "ANNOTATE_WRITE_LIMIT", "annotate", url_token)


@api_bp.after_request
def _no_store(response):
    response.headers["Cache-Control"] = "no-store"
    return response


def _checked(token: str, schema: type[Body] | None = None, *, optional: bool = False):
    """The CSRF header (derived from the token: no look-up needed), then the body parsed
    with `schema`. A token that opens no session answers 404 before any complaint about
    the request itself, as a look-up first would."""
    try:
        require_capability_csrf("annotate", token)
        return None if schema is None else parse_body(schema, json_object(optional=optional))
    except ApiError:
        writes.explain_refusal(token, writes.Action.HEARTBEAT)  # 404 when no session
        raise


def _require_task_step(token: str) -> None:
    """409 while the study has not reached this session's task (consent, a survey or
    training still to do) or ended before it (no_consent, failed_training): the task's
    text and Submit stay closed to a worker the pages would not show them to. No query
    when the taxonomy has no step besides the task (app.crowd.journey)."""
    found = journey.step_of_token(token)
    if found is None or found[1] in (journey.TASK, journey.AFTER_SURVEY, journey.DONE):
        return
    if found[1] == journey.ENDED:
        raise study_ended_error()
    raise step_pending_error()


@api_bp.get("/api/sessions/<token>")
@retry_on_disconnect
def get_session(token: str):
    """The session's state: paragraphs reached, taxonomy, progress, live annotations."""
    _require_task_step(token)
    session = reads.read_session(token)
    if session is None:
        raise ApiError.not_found(NO_SESSION)
    if session.outcome is not None and session.status != SessionStatus.SUBMITTED:
        raise study_ended_error()  # ended before its task, in a study without steps
    return jsonify(session_state(session, reads.live_annotations(session.id)))


@api_bp.post("/api/sessions/<token>/annotations")
@retry_on_disconnect
def save(token: str):
    """Store one annotation (idempotent per client id)."""
    data = _checked(token, AnnotationIn)
    result = writes.save(token, data)
    body = annotation_dict(result.annotation)
    if result.annotation.deleted_at is not None:
        body["removed"] = True
    return jsonify(body), 201 if result.created else 200


@api_bp.delete("/api/sessions/<token>/annotations/<annotation_id>")
@retry_on_disconnect
def remove(token: str, annotation_id: str):
    """Remove (soft-delete) one annotation; 204 also when it was already removed."""
    _checked(token)
    writes.remove(token, annotation_id)
    return "", 204


@api_bp.put("/api/sessions/<token>/position")
@retry_on_disconnect
def position(token: str):
    """Move to a paragraph; moving one past the furthest reveals it."""
    data = _checked(token, PositionIn)
    _guard_suggestions(token, data.paragraph_id)
    move = writes.move(token, data.paragraph_id, data.active_seconds)
    return jsonify(
        position=move.position,
        furthest=move.furthest,
        paragraphs=[paragraph_dict(p) for p in move.revealed],
    )


@api_bp.post("/api/sessions/<token>/submit")
@retry_on_disconnect
def submit(token: str):
    """Submit the session; idempotent. Answers the completion code and next address."""
    _checked(token, SubmitIn, optional=True)
    _require_task_step(token)
    _guard_suggestions(token, PAST_THE_END)
    return jsonify(writes.submit(token).to_dict())


def _guard_suggestions(token: str, paragraph_id: int) -> None:
    """A move past a paragraph with undecided suggestions is refused (422); studies
    without suggestions skip the query."""
    if suggestion_arms.uses_suggestions():
        suggestion_decisions.guard_move(token, paragraph_id)


@api_bp.get("/api/sessions/<token>/suggestions")
@retry_on_disconnect
def suggestions(token: str):
    """The suggestions of the paragraphs reached, with the session's decisions (an empty
    list for sessions outside the show arm). Their spans quote the text: not before the
    study's earlier steps (409, as the session's read)."""
    _require_task_step(token)
    session = suggestion_decisions.session_or_404(token)
    shown = suggestion_arms.session_arm(session.id) == "show"
    items = (
        suggestion_decisions.session_suggestions(session.id, session.document_id, session.furthest)
        if shown
        else []
    )
    return jsonify(suggestions=items)


@api_bp.post("/api/sessions/<token>/suggestions/<suggestion_id>/rejection")
@retry_on_disconnect
def reject_suggestion(token: str, suggestion_id: str):
    """Reject a suggestion (idempotent per client id): 201, or 200 for a replay."""
    data = _checked(token, RejectionIn)
    session = suggestion_decisions.session_or_404(token, writable=True)
    created = suggestion_decisions.reject(
        session.id, session.document_id, session.furthest, suggestion_id, data.id
    )
    body = {"id": data.id, "suggestion_id": suggestion_id, "decision": "rejected"}
    return jsonify(body), 201 if created else 200


@api_bp.delete("/api/sessions/<token>/suggestions/<suggestion_id>/rejection")
@retry_on_disconnect
def withdraw_rejection(token: str, suggestion_id: str):
    """Undo the rejection of a suggestion (the row is kept); 204, also when none."""
    _checked(token)
    session = suggestion_decisions.session_or_404(token, writable=True)
    suggestion_decisions.withdraw_rejection(session.id, session.document_id, suggestion_id)
    return "", 204


@api_bp.post("/api/sessions/<token>/heartbeat")
@retry_on_disconnect
def heartbeat(token: str):
    """The page is open and in use: the session keeps its place, or takes it back
    (app.crowd.assignment.claims). Answers 204; a submitted session has nothing to keep."""
    _checked(token, HeartbeatIn, optional=True)
    writes.heartbeat(token)
    return "", 204


@api_bp.get("/api/openapi.json")
def openapi():
    """The OpenAPI 3.1 description of the JSON APIs, merged from app/api_spec/*.yaml."""
    return jsonify(build_spec())
