"""GET /start: the study's single entry link, pasted into Prolific or MTurk."""

from __future__ import annotations

from flask import current_app, make_response, redirect, render_template, request, url_for

from app.assignment import bp
from app.assignment.service import assign
from app.identity import (
    ANON_COOKIE,
    identity_from_args,
    is_mturk_preview,
    new_anonymous_identity,
)
from app.study import instructions_markup
from app.taxonomy import current_taxonomy

ANON_COOKIE_MAX_AGE = 365 * 24 * 3600


@bp.get("/start")
def start():
    """Resume the worker's session or hand out the document that most needs annotators."""
    taxonomy = current_taxonomy()
    if is_mturk_preview(request.args):
        # MTurk shows the HIT before it is accepted: describe the task, hold no place.
        return render_template(
            "assignment/preview.html", taxonomy=taxonomy, instructions=instructions_markup(taxonomy)
        )
    identity = identity_from_args(request.args, request.cookies.get(ANON_COOKIE))
    new_cookie = identity is None
    if identity is None:
        identity = new_anonymous_identity()
    session = assign(identity)
    if session is None:
        response = make_response(render_template("assignment/no_tasks.html", taxonomy=taxonomy))
    else:
        response = redirect(url_for("annotate.session_page", token=session.token))
    if new_cookie:
        response.set_cookie(
            ANON_COOKIE,
            identity.external_id,
            max_age=ANON_COOKIE_MAX_AGE,
            httponly=True,
            samesite="Lax",
            secure=bool(current_app.config.get("SESSION_COOKIE_SECURE")),
        )
    # The answer depends on the database at this moment: never replay a cached one.
    response.headers["Cache-Control"] = "no-store"
    return response
