"""The adjudication page and its JSON API (researcher login; cookie-based CSRF)."""

from __future__ import annotations

from flask import jsonify, render_template
from flask_login import current_user

from app.adjudication import bp
from app.adjudication.service import (
    adjudication_state,
    decision_json,
    document_or_404,
    save_decision,
)
from app.core.console_urls import console_url
from app.core.errors import ApiError
from app.core.request_json import json_object
from app.taxonomy import current_taxonomy


@bp.get("/documents/<path:document_id>/adjudicate")
def page(document_id: str):
    """The document with every annotator's spans, candidates and decision buttons."""
    try:
        document = document_or_404(document_id)
    except ApiError as error:
        return render_template("errors/error.html", status=404, message=error.message), 404
    return render_template(
        "research/adjudicate.html",
        document=document,
        state_url=console_url("adjudication.state", document_id=document.external_id),
        decisions_url=console_url("adjudication.decide", document_id=document.external_id),
    )


@bp.get("/api/documents/<path:document_id>/adjudication")
def state(document_id: str):
    """Paragraphs, annotators, candidates and the current decisions (resumes the page)."""
    document = document_or_404(document_id)
    return jsonify(adjudication_state(document, current_taxonomy()))


@bp.post("/api/documents/<path:document_id>/adjudication/decisions")
def decide(document_id: str):
    """Save one decision: 201 new, 200 replay, 409 same id other body, 422 broken rule."""
    document = document_or_404(document_id)
    row, created = save_decision(document, current_user, json_object(), current_taxonomy())
    return jsonify(decision_json(row)), 201 if created else 200
