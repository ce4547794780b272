"""The practice page (GET /s/<token>/training) and "Check my answers"
(POST /api/sessions/<token>/training): parse, call app.crowd.training.service, respond.

The blueprints are made here, not in the package's __init__.py (as in every crowd
sub-package): lower code imports the package's other modules (app.crowd.journey asks
service.training_pending), and importing those must not start the routes."""

from __future__ import annotations

from flask import Blueprint, jsonify, make_response, redirect, render_template, url_for
from flask_babel import gettext

from app.core.errors import ApiError
from app.core.extensions import db
from app.core.persistence import retry_on_disconnect
from app.core.rate_limits import limit_blueprint, url_token
from app.core.request_json import json_object
from app.core.security import capability_csrf_token, require_capability_csrf
from app.crowd import journey, sessions
from app.crowd.session_errors import NO_SESSION, step_pending_error
from app.crowd.training import service
from app.models import AnnotationSession, utcnow
from app.taxonomy import current_taxonomy, max_comment_length

bp = Blueprint("training", __name__)
api_bp = Blueprint("training_api", __name__)

# The same budget as the worker's other writes, keyed by the capability token.
limit_blueprint(api_bp, "ANNOTATE_WRITE_LIMIT", "annotate", url_token)


@bp.after_request
@api_bp.after_request
def _no_store(response):
    response.headers["Cache-Control"] = "no-store"
    return response


def _not_found_page():
    message = gettext(
        "This annotation link does not lead to a task. Check that you copied all of it."
    )
    return make_response(render_template("errors/error.html", status=404, message=message), 404)


def next_url(session: AnnotationSession) -> str:
    """The page of the step the worker is at now (app.crowd.journey): the next practice text,
    the task, or the end of the study."""
    return journey.step_url(session.token, journey.current_step(session))


def practice_bootstrap(
    session: AnnotationSession, state: service.TrainingState, document: service.PracticeDocument
) -> dict:
    """What the annotator page's JavaScript starts from in practice mode: the whole
    practice text (every paragraph reached), no saved annotations, no task API."""
    taxonomy = current_taxonomy()
    last = len(document.texts) - 1
    index = state.documents.index(document)
    return {
        "document": {
            "id": document.external_id,
            "title": document.title,
            "total_paragraphs": len(document.texts),
            "paragraphs": [
                {"paragraph_id": position, "text": text}
                for position, text in enumerate(document.texts)
            ],
        },
        "taxonomy": taxonomy.to_public_dict(),
        "position": 0,
        "furthest": last,
        "status": "active",
        "annotations": [],
        "entities": [],
        "token": session.token,
        "csrf_token": capability_csrf_token("annotate", session.token),
        "read_only": False,
        "preview": False,
        # No annotation, position or submit URL: practice answers stay in the page until
        # "Check my answers". The heartbeat keeps the session's place meanwhile.
        "api": {
            "session": None,
            "annotations": None,
            "position": None,
            "submit": None,
            "heartbeat": url_for("annotate_api.heartbeat", token=session.token),
        },
        "completion": None,
        "mturk": None,
        "max_comment_length": max_comment_length(),
        "practice": {
            "check": url_for("training_api.check", token=session.token),
            "document_id": document.external_id,
            "number": index + 1,
            "documents": len(state.documents),
            "attempts": state.attempts,
            "attempts_left": state.attempts_left(document),
        },
    }


@bp.get("/s/<token>/training")
@retry_on_disconnect
def practice_page(token: str):
    """The practice page: the annotator page on the next practice document."""
    session = sessions.find_session(token)
    if session is None:
        return _not_found_page()
    if journey.current_step(session) != journey.TRAINING:
        db.session.commit()
        return redirect(next_url(session), code=303)
    sessions.touch(session)
    state = service.training_state(session)
    if state.failed:  # used up in another session of the same study
        service.end_with_failed_training(session)
    document = state.current
    if session.page_loaded_at is None:
        session.page_loaded_at = utcnow()
    db.session.commit()
    if document is None or session.outcome is not None:
        return redirect(next_url(session), code=303)
    bootstrap = practice_bootstrap(session, state, document)
    return render_template(
        "training/practice.html",
        bootstrap=bootstrap,
        taxonomy=current_taxonomy(),
        document=document,
        practice=bootstrap["practice"],
        csrf_token_value=bootstrap["csrf_token"],
        read_only=False,
        preview=False,
    )


@api_bp.post("/api/sessions/<token>/training")
@retry_on_disconnect
def check(token: str):
    """Check my answers: feedback, pass or not, and where to go next."""
    session = sessions.find_session(token)
    if session is None:
        raise ApiError.not_found(NO_SESSION)
    require_capability_csrf("annotate", token)
    if journey.current_step(session) in (journey.CONSENT, journey.BEFORE_SURVEY):
        db.session.commit()
        raise step_pending_error()  # no step out of order: practice comes after consent
    if session.outcome is None:
        sessions.touch(session)
        sessions.record_work(session)  # a finished step: written with the attempt
    checked = service.check_attempt(session, json_object())
    body = checked.to_dict()
    if checked.failed or checked.finished:
        body["next_url"] = next_url(session)
    elif checked.result.passed:
        body["next_url"] = url_for("training.practice_page", token=token)
    else:
        body["next_url"] = None  # try again on this page
    return jsonify(body)
