"""Worker pages: start or resume a session, the annotator page, the completion page."""

from __future__ import annotations

from flask import make_response, redirect, render_template, request, url_for
from flask_babel import gettext

from app.annotate import bp, opening, reads
from app.annotate.serializers import (
    page_bootstrap,
    preview_bootstrap,
    preview_document,
    worker_document,
)
from app.core.extensions import db
from app.core.persistence import retry_on_disconnect
from app.core.rate_limits import limit_opens
from app.core.security import capability_csrf_token
from app.crowd import journey, sessions, submissions
from app.crowd.identity import (
    OpenRefused,
    opened_response,
    refusal_page,
    request_identity,
)
from app.crowd.networks import PlaceRefused, place_refusal
from app.crowd.study_entry import StudyUnavailable, admit_platform, admit_study, unavailable_page
from app.models import AnnotationSession, Document
from app.rules.platforms import is_mturk_preview, mturk_target
from app.rules.statuses import SessionStatus
from app.taxonomy import current_taxonomy


@bp.after_request
def _no_store(response):
    # Pages carry capability tokens and live progress: never serve them from a cache.
    response.headers["Cache-Control"] = "no-store"
    return response


def _no_document(document_id: str):
    page = render_template("annotate/no_document.html", document_id=document_id)
    return page, 404


bp.register_error_handler(OpenRefused, refusal_page)
bp.register_error_handler(PlaceRefused, place_refusal)
bp.register_error_handler(StudyUnavailable, unavailable_page)


@bp.get("/annotate/<document_id>")
@bp.get("/study/<slug>/annotate/<document_id>")
@limit_opens
@retry_on_disconnect
def start(document_id: str, slug: str | None = None):
    """Start or resume this worker's session on the document, then go to its page.

    A worker's first session on a document is one statement on PostgreSQL
    (opening.open_session); resuming needs proof of being that worker (app.crowd.identity). In a
    study entered through /start (`completion:` codes or `prolific_study_id`), only a
    signed annotator link creates a session here (PlaceRefused otherwise). A platform
    submission that has a session already goes to it, whatever the document
    (app.crowd.submissions: one submission, one session)."""
    found, key = opening.study_and_document(slug, document_id)
    study = admit_study(found, slug)
    if key is None or document_id in current_taxonomy().training.documents:
        return _no_document(document_id)  # a practice text is no task (app.crowd.training)
    if is_mturk_preview(request.args):
        return _preview(key.id, document_id)
    identity, anonymous = request_identity(target=document_id)
    admit_platform(study, identity.platform)
    identity = submissions.admit(identity)
    # A study entered through /start hands out its documents there: a direct link creates
    # a session only when signed (the researchers' own); existing sessions still resume.
    may_create = identity.platform == "direct" or not current_taxonomy().study.enters_through_start
    opened = opening.open_session(key, identity, may_create=may_create)
    if opened is None:  # deleted a moment ago
        return _no_document(document_id)
    response = redirect(url_for("annotate.session_page", token=opened.token), code=302)
    return opened_response(response, identity, anonymous, "a", opened.session_id)


@bp.get("/id=<document_id>")
def falte_start(document_id: str):
    """The original FALTE address, /id=<document_id>: same as /annotate/<document_id>."""
    return start(document_id)


def _preview(document_pk: int, document_id: str):
    """An MTurk HIT preview: the task read-only, and no session is created."""
    document = db.session.get(Document, document_pk)
    if document is None:
        return _no_document(document_id)
    return render_template(
        "annotate/session.html",
        bootstrap=preview_bootstrap(document),
        taxonomy=current_taxonomy(),
        document=preview_document(document),
        csrf_token_value="",
        read_only=True,
        preview=True,
    )


def _session_or_404_page(token: str) -> AnnotationSession | None:
    session = sessions.find_session(token)
    if session is not None:
        sessions.touch(session)
    return session


@bp.get("/s/<token>")
@retry_on_disconnect
def session_page(token: str):
    """The annotator page of one session (or the study step the worker is at)."""
    elsewhere = _step_elsewhere(token, journey.TASK)
    if elsewhere is not None:
        return redirect(elsewhere, code=303)
    session = reads.read_session(token)
    if session is None:
        return _not_found_page()
    if session.outcome is not None and session.status != SessionStatus.SUBMITTED:
        # Ended before its task (the worker had failed in the study), in a study without
        # steps, where app.crowd.journey asked nothing.
        return redirect(journey.step_url(token, journey.ENDED), code=303)
    bootstrap = page_bootstrap(session, reads.live_annotations(session.id))
    return render_template(
        "annotate/session.html",
        bootstrap=bootstrap,
        taxonomy=current_taxonomy(),
        document=worker_document(session.document, token),
        csrf_token_value=bootstrap["csrf_token"],
        read_only=bootstrap["read_only"],
        preview=False,
    )


@bp.get("/s/<token>/complete")
@retry_on_disconnect
def complete(token: str):
    """The completion page: the code to copy (the outcome's platform code, or the session's
    own where the study has none), and for MTurk the form posting the HIT."""
    elsewhere = _step_elsewhere(token, journey.DONE)
    if elsewhere is not None:  # not done yet (the after-survey), or ended before the task
        return redirect(elsewhere, code=303)
    session = _session_or_404_page(token)
    if session is None:
        return _not_found_page()
    if not sessions.is_submitted(session):
        return redirect(url_for("annotate.session_page", token=token))
    exit_url = sessions.exit_url(session)
    prolific_url = None
    if exit_url != url_for("annotate.complete", token=token):
        prolific_url = exit_url
    db.session.commit()
    return render_template(
        "annotate/complete.html",
        session=session,
        document=worker_document(session.document, token),
        completion_code=session.completion_code,
        shown_code=sessions.end_code(session),
        prolific_url=prolific_url,
        # Straight after the last step (the after-survey's Finish): go back to the study.
        follow=request.args.get("follow") == "1",
        mturk=mturk_target(session.platform, session.platform_params or {}),
        csrf_token_value=capability_csrf_token("annotate", token),
    )


def _step_elsewhere(token: str, here: str) -> str | None:
    """The page of the step the session is at when it is not `here` (app.crowd.journey); None
    when it is, or when there is no such session (the page answers that itself). The
    task page also shows a submitted session (read-only) once every step is done."""
    found = journey.step_of_token(token)
    if found is None:
        return None
    step = found[1]
    if step == here or (here == journey.TASK and step == journey.DONE):
        return None
    return journey.step_url(token, step)


def _not_found_page():
    message = gettext(
        "This annotation link does not lead to a task. Check that you copied all of it."
    )
    response = make_response(render_template("errors/error.html", status=404, message=message), 404)
    return response
