"""Validator pages and JSON API (docs/contracts.md#validator-api): parse, call the domain,
respond.

Blind by construction: `item_json` (app.validation.serializers) builds the only item
representation a validator receives, with no source, origin annotator or annotation link.
The API's CSRF token is derived from the session token (app.core.security), so it works
without cookies.
"""

from __future__ import annotations

from typing import Any

from flask import jsonify, redirect, render_template, request, url_for
from flask_babel import gettext
from markupsafe import Markup
from sqlalchemy import select

from app.core.errors import ApiError
from app.core.extensions import db
from app.core.persistence import retry_on_disconnect
from app.core.rate_limits import limit_opens, rate_limited, url_token
from app.core.request_json import json_object
from app.core.security import (
    CSRF_HEADER,
    capability_csrf_token,
    check_capability_csrf,
    require_capability_csrf,
)
from app.crowd.identity import (
    OpenRefused,
    WorkerIdentity,
    opened_response,
    refusal_page,
    request_identity,
)
from app.crowd.networks import PlaceRefused, place_refusal
from app.crowd.study_entry import StudyUnavailable, admit_platform, enter_study, unavailable_page
from app.models import ValidationItem, ValidationRound, ValidationSession
from app.rules.platforms import is_mturk_preview
from app.studies import current_study_id
from app.taxonomy import current_taxonomy
from app.validation import bp
from app.validation.assignment import next_item, progress, record_judgment, start_session
from app.validation.consent import (
    AGREED,
    DECLINED,
    PENDING,
    consent_state,
    consent_text,
    record_consent,
)
from app.validation.reasons import CATEGORY, QUESTION, item_protocol, round_reasons
from app.validation.schemas import parse_judgment
from app.validation.serializers import (
    completion_json,
    declined_json,
    item_json,
    judgment_json,
)

CSRF_SCOPE = "validate"


write_limit = rate_limited("VALIDATE_WRITE_LIMIT", "validate", url_token)
bp.register_error_handler(OpenRefused, refusal_page)
bp.register_error_handler(PlaceRefused, place_refusal)
bp.register_error_handler(StudyUnavailable, unavailable_page)


@bp.after_request
def _no_store(response):
    # Pages and answers carry capability tokens and live progress: never cache them.
    response.headers["Cache-Control"] = "no-store"
    return response


def _round_or_404(name: str) -> ValidationRound | None:
    return db.session.scalars(
        select(ValidationRound).filter_by(name=name, study_id=current_study_id())
    ).first()


def _session_or_404(token: str) -> ValidationSession:
    session = db.session.scalars(select(ValidationSession).filter_by(token=token)).first()
    if session is None:
        raise ApiError.not_found("No validation session has this address.")
    return session


def _reasons(round_: ValidationRound) -> dict[str, list[str]]:
    validation = current_taxonomy().validation
    return round_reasons(round_.settings, validation.reasons, validation.category_reasons)


def _protocols(round_: ValidationRound) -> list[str]:
    """The protocols the round's items are judged by (app.validation.reasons), in page order."""
    with_question = ValidationItem.question.is_not(None)
    found = db.session.execute(
        select(with_question).where(ValidationItem.round_id == round_.id).distinct()
    ).scalars()
    present = {QUESTION if has else CATEGORY for has in found}
    return [p for p in (CATEGORY, QUESTION) if p in present] or [CATEGORY]


def _item_reasons(session: ValidationSession, body: object) -> list[str]:
    """The reasons allowed for the posted item: those of its protocol (all of the round's
    when the item is unknown; recording it then answers 404)."""
    reasons = _reasons(session.round)
    item_id = body.get("item_id") if isinstance(body, dict) else None
    if not isinstance(item_id, str):
        return reasons[QUESTION] + reasons[CATEGORY]
    question = db.session.execute(
        select(ValidationItem.question).where(
            ValidationItem.round_id == session.round_id, ValidationItem.public_id == item_id
        )
    ).first()
    if question is None:
        return reasons[QUESTION] + reasons[CATEGORY]
    return reasons[item_protocol(question[0])]


@bp.get("/validate/<round_name>")
@bp.get("/study/<slug>/validate/<round_name>")
@limit_opens
@retry_on_disconnect
def start(round_name: str, slug: str | None = None):
    """Start or resume this validator's session in the round of the study (the default
    study at /validate/...), then go to its page."""
    study = enter_study(slug)
    round_ = _round_or_404(round_name)
    if round_ is None:
        page = render_template("validation/no_round.html", round_name=round_name)
        return page, 404
    if is_mturk_preview(request.args):
        return preview_page(round_)
    identity, anonymous = request_identity(target=f"round:{round_name}")
    admit_platform(study, identity.platform)
    return open_round(round_, identity, anonymous)


def preview_page(round_: ValidationRound) -> str:
    """MTurk's preview of a round's HIT: what the task is, no session created."""
    return render_template(
        "validation/preview.html", reasons=_reasons(round_), protocols=_protocols(round_)
    )


def open_round(round_: ValidationRound, identity: WorkerIdentity, anonymous: bool):
    """Start or resume the validator's session in the round and send them to its page
    (the round's link and a validation study's start link both end here)."""
    session = start_session(round_, identity)
    response = redirect(url_for("validation.session_page", token=session.token), code=302)
    return opened_response(response, identity, anonymous, "v", session.id)


@bp.get("/v/<token>")
@retry_on_disconnect
def session_page(token: str):
    """The validator page: one item at a time, loaded by static/js/validator/. A
    validation study's consent comes first (app.validation.consent)."""
    session = _session_or_404(token)
    state = consent_state(session)
    if state == PENDING:
        return redirect(url_for("validation.consent", token=token), code=303)
    if state == DECLINED:
        return _declined_page(session)
    config = {
        "next_url": url_for("validation.api_next", token=token),
        "judgments_url": url_for("validation.api_judgments", token=token),
        "storage_key": f"falte-validator:{token}",
    }
    return render_template(
        "validation/session.html",
        csrf_token_value=capability_csrf_token(CSRF_SCOPE, token),
        reasons=_reasons(session.round),
        protocols=_protocols(session.round),
        config=config,
    )


@bp.route("/v/<token>/consent", methods=["GET", "POST"])
@retry_on_disconnect
def consent(token: str):
    """A validation study's consent page: its Markdown, then I agree / I do not agree."""
    if request.method == "POST":
        sent = request.form.get("csrf_token") or request.headers.get(CSRF_HEADER)
        if not check_capability_csrf(CSRF_SCOPE, token, sent):
            message = gettext("This form has expired. Reload the page and send it again.")
            return render_template("errors/error.html", status=400, message=message), 400
    session = _session_or_404(token)
    text = consent_text(session)
    if text is None or consent_state(session) != PENDING:
        return redirect(url_for("validation.session_page", token=token), code=303)
    decision = request.form.get("decision") if request.method == "POST" else None
    if decision in ("agree", "decline"):
        record_consent(session, decision == "agree", text)
        return redirect(url_for("validation.session_page", token=token), code=303)
    error = None if request.method == "GET" else gettext("Choose I agree or I do not agree.")
    page = render_template(
        "validation/consent.html",
        token=token,
        # Safe to mark: rendered by markdown-it with raw HTML escaped (app.taxonomy.surveys).
        consent_html=Markup(current_taxonomy().consent_html),  # noqa: S704
        csrf_token_value=capability_csrf_token(CSRF_SCOPE, token),
        error=error,
    )
    return page, 200 if error is None else 422


def _declined_page(session: ValidationSession):
    """The end of a validator who declined the consent: the way back, with the study's
    no_consent address."""
    return render_template("validation/declined.html", **declined_json(session))


@bp.get("/api/validators/<token>/next")
@retry_on_disconnect
def api_next(token: str):
    """The item to judge now (the same one until it is judged), or null when done."""
    session = _session_or_404(token)
    if consent_state(session) != AGREED:
        raise ApiError(409, "consent_pending", "Answer the consent page first.")
    item = next_item(session)
    body: dict[str, Any] = {
        "item": item_json(item) if item else None,
        "progress": progress(session),
    }
    if item is None:
        body.update(completion_json(session, body["progress"]["done"]))
    return jsonify(body)


@bp.post("/api/validators/<token>/judgments")
@write_limit
@retry_on_disconnect
def api_judgments(token: str):
    """Record a judgment: 201 when new, 200 for an identical retry, 409 for a change."""
    session = _session_or_404(token)
    require_capability_csrf(CSRF_SCOPE, token)
    if consent_state(session) != AGREED:
        raise ApiError(409, "consent_pending", "Answer the consent page first.")
    body = json_object()
    data = parse_judgment(body, _item_reasons(session, body))
    judgment, created = record_judgment(session, data)
    body = {"judgment": judgment_json(judgment), "progress": progress(session)}
    return jsonify(body), 201 if created else 200
