"""Worker JSON API (DESIGN.md "HTTP (contract)"): parse, call app.annotate.sessions, respond.

The CSRF check uses a token derived from the session token and SECRET_KEY, not a cookie:
crowd platforms show the task in third-party iframes where cookies may be blocked.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from flask import jsonify

from app import steps
from app.annotate import api_bp, reads, writes
from app.annotate import sessions as domain
from app.annotate.schemas import AnnotationIn, HeartbeatIn, PositionIn, SubmitIn, parse_body
from app.annotate.serializers import annotation_dict, paragraph_dict, session_state
from app.annotate.writes import SessionRef
from app.api_spec import build_spec
from app.errors import ApiError
from app.persistence import retry_on_disconnect
from app.rate_limits import limit_blueprint, url_token
from app.request_json import json_object
from app.security import require_capability_csrf

Body = TypeVar("Body")
Result = TypeVar("Result")


# One limit for every write of a session, keyed by the capability token, not the IP (many
# workers may share one NAT address).
limit_blueprint(api_bp, "ANNOTATE_WRITE_LIMIT", "annotate", url_token)


@api_bp.after_request
def _no_store(response):
    response.headers["Cache-Control"] = "no-store"
    return response


def _check_csrf(token: str) -> None:
    require_capability_csrf("annotate", token)


def _writable_ref(token: str, *, touch: bool = True) -> SessionRef:
    ref = writes.session_ref_or_404(token)
    _check_csrf(token)
    if touch:
        writes.touch(ref)
    return ref


def _require_task_step(token: str) -> None:
    """409 while the study has not reached this session's task (consent, a survey or
    training still to do) or ended before it (no_consent, failed_training): the task's
    text and Submit stay closed to a worker the pages would not show them to. No query
    when the taxonomy has no step besides the task (app.steps)."""
    found = steps.step_of_token(token)
    if found is None or found[1] in (steps.TASK, steps.AFTER_SURVEY, steps.DONE):
        return
    if found[1] == steps.ENDED:
        raise ApiError(409, "study_ended", "The study has ended for this task; reload the page.")
    raise ApiError(
        409,
        "step_pending",
        "This task opens after the earlier steps of the study; reload the page.",
    )


def _known(token: str) -> bool:
    """Whether this process has served the session (its writes may then take the
    one-statement paths); the CSRF header is checked first, as on the full path."""
    if not writes.known_sessions().knows(token):
        return False
    _check_csrf(token)
    return True


def _known_first(
    token: str,
    schema: type[Body],
    known: Callable[[str, Body], Result | None],
    full: Callable[[SessionRef, Body], Result],
    *,
    touch: bool = True,
) -> Result:
    """A write that a process which has served the session before tries in one statement
    (`known`, which answers None when it cannot settle the write); otherwise the full
    path: lookup (404), CSRF, activity, then `full`. The body is parsed once."""
    data = None
    if _known(token):
        data = parse_body(schema, json_object())
        result = known(token, data)
        if result is not None:
            return result
    ref = _writable_ref(token, touch=touch)
    return full(ref, data or parse_body(schema, json_object()))


@api_bp.get("/api/sessions/<token>")
@retry_on_disconnect
def get_session(token: str):
    """The session's state: paragraphs reached, taxonomy, progress, live annotations."""
    _require_task_step(token)
    session = reads.read_session(token)
    if session is None:
        raise ApiError.not_found(domain.NO_SESSION)
    return jsonify(session_state(session, reads.live_annotations(session.id)))


@api_bp.post("/api/sessions/<token>/annotations")
@retry_on_disconnect
def save(token: str):
    """Store one annotation (idempotent per client id)."""
    result = _known_first(token, AnnotationIn, writes.save_known, writes.save_annotation)
    body = annotation_dict(result.annotation)
    if result.annotation.deleted_at is not None:
        body["removed"] = True
    return jsonify(body), 201 if result.created else 200


@api_bp.delete("/api/sessions/<token>/annotations/<annotation_id>")
@retry_on_disconnect
def remove(token: str, annotation_id: str):
    """Remove (soft-delete) one annotation; 204 also when it was already removed."""
    if _known(token) and writes.remove_known(token, annotation_id):
        return "", 204
    writes.remove_annotation(_writable_ref(token), annotation_id)
    return "", 204


@api_bp.put("/api/sessions/<token>/position")
@retry_on_disconnect
def position(token: str):
    """Move to a paragraph; moving one past the furthest reveals it."""
    move = _known_first(
        token,
        PositionIn,
        lambda token, data: writes.move_known(token, data.paragraph_id, data.active_seconds),
        lambda ref, data: writes.move_position(ref, data.paragraph_id, data.active_seconds),
        touch=False,  # a move records activity itself
    )
    return jsonify(
        position=move.position,
        furthest=move.furthest,
        paragraphs=[paragraph_dict(p) for p in move.revealed],
    )


@api_bp.post("/api/sessions/<token>/submit")
@retry_on_disconnect
def submit(token: str):
    """Submit the session; idempotent. Answers the completion code and next address."""
    _require_task_step(token)
    if _known(token):
        parse_body(SubmitIn, json_object(optional=True))
        completion = writes.submit_known(token)
        if completion is not None:
            return jsonify(completion.to_dict())
    session = domain.session_or_404(token, lean=True)
    _check_csrf(token)
    domain.touch(session)
    parse_body(SubmitIn, json_object(optional=True))
    return jsonify(domain.submit_session(session).to_dict())


@api_bp.post("/api/sessions/<token>/heartbeat")
@retry_on_disconnect
def heartbeat(token: str):
    """The page is open and in use: the session keeps its place, or takes it back
    (app.assignment.claims). Answers 204; a submitted session has nothing to keep."""
    ref = _writable_ref(token, touch=False)
    parse_body(HeartbeatIn, json_object(optional=True))
    writes.touch(ref)
    return "", 204


@api_bp.get("/api/openapi.json")
def openapi():
    """The OpenAPI 3.1 description of the JSON APIs, merged from app/api_spec/*.yaml."""
    return jsonify(build_spec())
