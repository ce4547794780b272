"""GET /start and /study/<slug>/start: a study's single entry link, pasted into Prolific or MTurk
(the blueprint `bp`); /start enters the default study (app.crowd.study_entry)."""

from __future__ import annotations

from flask import Blueprint, make_response, redirect, render_template, request, url_for

from app.core.persistence import retry_on_disconnect
from app.core.rate_limits import limit_opens
from app.crowd import submissions
from app.crowd.assignment.service import Stopped, assign
from app.crowd.identity import (
    OpenRefused,
    opened_response,
    refusal_page,
    remember_anonymous,
    request_identity,
)
from app.crowd.networks import PlaceRefused, place_refusal
from app.crowd.settings import instructions_markup
from app.crowd.study_entry import (
    StudyUnavailable,
    admit_platform,
    enter_study,
    kind_entry,
    unavailable_page,
)
from app.rules.platforms import is_mturk_preview
from app.taxonomy import current_taxonomy

bp = Blueprint("assignment", __name__)
bp.register_error_handler(OpenRefused, refusal_page)
bp.register_error_handler(PlaceRefused, place_refusal)
bp.register_error_handler(StudyUnavailable, unavailable_page)


@bp.get("/start")
@bp.get("/study/<slug>/start")
@limit_opens
@retry_on_disconnect
def start(slug: str | None = None):
    """Resume the worker's session or hand out the document that most needs annotators.

    Resuming needs proof of being that worker: assign() resumes through
    sessions.start_or_resume_session, which refuses (OpenRefused) without it. A platform
    submission (Prolific SESSION_ID, MTurk assignmentId) is one session and one document:
    reopening the link lands on that session at its step (app.crowd.submissions). The order:
    placeholders refused (request_identity), the arrival admitted (its Prolific study,
    verification, first binding wins), then assign(): a flagged worker stopped, the
    submission's session resumed, and only a new session counted against the client
    network's cap (PlaceRefused). A study that is closed, archived or (for all but signed
    links) a draft opens nothing (StudyUnavailable). A study of another kind answers
    through the entry its package registered (a validation study: its validators' round,
    app.validation.study_start), after the same checks of the study."""
    study = enter_study(slug)
    entry = kind_entry(study)
    if entry is not None:
        return entry(study)
    taxonomy = current_taxonomy()
    if is_mturk_preview(request.args):
        # MTurk shows the HIT before it is accepted: describe the task, hold no place.
        return render_template(
            "assignment/preview.html", taxonomy=taxonomy, instructions=instructions_markup(taxonomy)
        )
    identity, anonymous = request_identity(target="start")
    admit_platform(study, identity.platform)
    identity = submissions.admit(identity)
    session = assign(identity)
    if session is None or isinstance(session, Stopped):
        page = render_template(
            "assignment/no_tasks.html",
            taxonomy=taxonomy,
            stopped=isinstance(session, Stopped),
            exit_url=session.exit_url if session else None,
        )
        response = make_response(page)
        if anonymous:
            remember_anonymous(response, identity)
    else:
        response = redirect(url_for("annotate.session_page", token=session.token))
        opened_response(response, identity, anonymous, "a", session.id)
    # The answer depends on the database at this moment: never replay a cached one.
    response.headers["Cache-Control"] = "no-store"
    return response
