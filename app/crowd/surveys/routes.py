"""Worker pages of the study steps around the task: consent, the surveys, the early end.

Each page first asks app.crowd.journey where the session is and sends the worker there when it
is not this page, so a reload, the back button or a second POST never skips or repeats
a step. Forms are plain HTML (they work without JavaScript) and carry the CSRF token
derived from the session's capability token (app.core.security), as the worker API does:
nothing depends on a cookie inside a crowd platform's iframe.
"""

from __future__ import annotations

from flask import Blueprint, abort, redirect, render_template, request, url_for
from flask_babel import gettext
from markupsafe import Markup

from app.core.extensions import db
from app.core.i18n import N_
from app.core.persistence import retry_on_disconnect
from app.core.security import CSRF_HEADER, capability_csrf_token, check_capability_csrf
from app.crowd import journey, sessions
from app.crowd.surveys import store
from app.crowd.surveys.answers import field_name, parse_survey_form
from app.models import AnnotationSession, utcnow
from app.taxonomy import current_taxonomy

bp = Blueprint("surveys", __name__)

CSRF_SCOPE = "annotate"  # the same token as the annotator page's: one capability
SURVEY_STEPS = {"before": journey.BEFORE_SURVEY, "after": journey.AFTER_SURVEY}
# Worker-visible text, in one place; translated where it is shown (the 404 page translates
# its description: app/core/errors.py).
TEXT = {
    "not_found": N_(
        "This annotation link does not lead to a task. Check that you copied all of it."
    ),
    "csrf": N_("This form has expired. Reload the page and send it again."),
    "bad_decision": N_("Choose I agree or I do not agree."),
}


def _text(key: str) -> str:
    """TEXT[key] in the page's language."""
    return gettext(TEXT[key])


@bp.after_request
def _no_store(response):
    # Pages carry capability tokens: never serve them from a cache.
    response.headers["Cache-Control"] = "no-store"
    return response


def _session_at(token: str, step: str) -> tuple[AnnotationSession | None, str | None]:
    """(session, None) when the session is at `step`; (None, where to go) otherwise."""
    session = sessions.find_session(token)
    if session is None:
        abort(404, description=TEXT["not_found"])
    current = journey.current_step(session)
    if current != step:
        return None, journey.step_url(token, current)
    return session, None


def _seen(session: AnnotationSession) -> None:
    """Record activity, and that a browser loaded a page of the session: a worker reading
    the consent or a survey holds the document's place (app.crowd.assignment.claims)."""
    sessions.touch(session)
    if session.page_loaded_at is None:
        session.page_loaded_at = utcnow()
    db.session.commit()


def _csrf_refused(token: str):
    """The 400 page for a POST without this session's CSRF token (form field, or the
    X-CSRFToken header as the API takes it); None for a GET or a good token. Checked
    before anything else: a forged POST learns nothing, not even where the session is."""
    if request.method != "POST":
        return None
    sent = request.form.get("csrf_token") or request.headers.get(CSRF_HEADER)
    if check_capability_csrf(CSRF_SCOPE, token, sent):
        return None
    return render_template("errors/error.html", status=400, message=_text("csrf")), 400


def _render(template: str, session: AnnotationSession, status: int = 200, **context):
    page = render_template(
        template,
        session=session,
        document=session.document,
        taxonomy=current_taxonomy(),
        csrf_token_value=capability_csrf_token(CSRF_SCOPE, session.token),
        **context,
    )
    return page, status


@bp.route("/s/<token>/consent", methods=["GET", "POST"])
@retry_on_disconnect
def consent(token: str):
    """The consent page: the taxonomy's Markdown, then I agree / I do not agree."""
    refused = _csrf_refused(token)
    if refused is not None:
        return refused
    session, elsewhere = _session_at(token, journey.CONSENT)
    if session is None:
        return redirect(elsewhere, code=303)
    taxonomy = current_taxonomy()
    # Safe to mark: rendered by markdown-it with raw HTML escaped (app.taxonomy.surveys).
    consent_html = Markup(taxonomy.consent_html)  # noqa: S704
    if request.method == "GET":
        _seen(session)
        return _render("surveys/consent.html", session, consent_html=consent_html, error=None)
    decision = request.form.get("decision")
    if decision not in ("agree", "decline"):
        return _render(
            "surveys/consent.html",
            session,
            422,
            consent_html=consent_html,
            error=_text("bad_decision"),
        )
    sessions.record_work(session)  # a finished step: written with the decision
    store.record_consent(session.id, decision == "agree", taxonomy.consent or "")
    return redirect(journey.step_url(token, journey.current_step(session)), code=303)


@bp.route("/s/<token>/survey/before", methods=["GET", "POST"])
@retry_on_disconnect
def before_survey(token: str):
    """The survey before the task: a form of labelled fields, then Continue."""
    return _survey(token, "before")


@bp.route("/s/<token>/survey/after", methods=["GET", "POST"])
@retry_on_disconnect
def after_survey(token: str):
    """The survey after Submit: a form of labelled fields, then Finish (the end)."""
    return _survey(token, "after")


def _survey(token: str, which: str):
    refused = _csrf_refused(token)
    if refused is not None:
        return refused
    session, elsewhere = _session_at(token, SURVEY_STEPS[which])
    if session is None:
        return redirect(elsewhere, code=303)
    questions = current_taxonomy().survey.questions(which)
    if request.method == "GET":
        _seen(session)
        return _render_survey(session, which, {}, {})
    parsed = parse_survey_form(questions, request.form.getlist, gettext)
    if parsed.errors:
        return _render_survey(session, which, parsed.raw, parsed.errors, status=422)
    sessions.record_work(session)  # a finished step: written with the answers
    store.save_survey(session.id, which, questions, parsed.answers)
    after = journey.current_step(session)
    if after == journey.DONE:
        # The last step: the completion page, which sends the worker back to the study.
        return redirect(url_for("annotate.complete", token=token, follow=1), code=303)
    return redirect(journey.step_url(token, after), code=303)


def _render_survey(session, which, raw, errors, *, status=200, error=None):
    questions = current_taxonomy().survey.questions(which)
    return _render(
        "surveys/survey.html",
        session,
        status,
        which=which,
        action=url_for(f"surveys.{which}_survey", token=session.token),
        questions=questions,
        field_name=field_name,
        raw=raw,
        errors=errors,
        error=error,
    )


@bp.get("/s/<token>/end")
@retry_on_disconnect
def ended(token: str):
    """The end of a study that ended before the task (declined consent), with the way
    back to the study; it follows that link by itself. Records no activity: the session
    stays released."""
    session = sessions.find_session(token)
    if session is None:
        abort(404, description=TEXT["not_found"])
    current = journey.current_step(session)
    if current != journey.ENDED:
        return redirect(journey.step_url(token, current), code=303)
    address = sessions.exit_url(session)
    return_url = None if address == url_for("annotate.complete", token=token) else address
    return _render(
        "surveys/end.html",
        session,
        outcome=session.outcome or "no_consent",
        return_url=return_url,
        # The outcome's platform code, never the session's own: that one is earned by
        # doing the task (app.crowd.sessions.end_code).
        shown_code=sessions.end_code(session, earned=False),
    )
