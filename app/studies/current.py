"""The study a request or a command works on.

A worker's start link names it (`/study/<slug>/start`; the unprefixed addresses the
default study), a session belongs to one, a command takes `--study SLUG`. Whoever knows
sets it with `use_study` at the start of the request or command; everything below asks
`current_study()`. Not set, it is the study of the session whose capability token the
request's address holds (`/s/<token>`, `/api/sessions/<token>/...`, `/v/<token>`, ...),
looked up only when something asks (the worker's writes never do), else the default
study. Kept in `flask.g`, so it lives as long as the request's or the command's app
context, never across requests.
"""

from __future__ import annotations

from flask import Flask, g, has_request_context, request
from sqlalchemy import select

from app.core.extensions import db
from app.models import AnnotationSession, Study, ValidationRound, ValidationSession
from app.studies.service import default_study


def init_app(app: Flask) -> None:
    """Every request starts without a study: its start link, its session's token or the
    default decides (an app context shared with the caller, as in tests, keeps nothing)."""
    app.before_request(_forget_study)


def _forget_study() -> None:
    g.pop("falte_study", None)
    g.pop("falte_taxonomy", None)  # app.studies.taxonomies: decided again from the study


def use_study(study: Study) -> Study:
    """Work on `study` for the rest of this request or command."""
    g.falte_study = study
    g.pop("falte_taxonomy", None)
    return study


def current_study() -> Study:
    """The study of this request or command: the one set by `use_study`, else the study of
    the session the address names, else the default study."""
    study = g.get("falte_study")
    if study is None:
        study = use_study(_study_of_token() or default_study())
    return study


def current_study_id() -> int:
    """The id of current_study()."""
    return current_study().id


def _study_of_token() -> Study | None:
    """The study of the annotation or validation session whose token the request's
    address holds, or None."""
    if not has_request_context():
        return None
    token = (request.view_args or {}).get("token")
    if not isinstance(token, str) or not token:
        return None
    study_id = db.session.scalar(
        select(AnnotationSession.study_id).where(AnnotationSession.token == token)
    )
    if study_id is None:
        study_id = db.session.scalar(
            select(ValidationRound.study_id)
            .join(ValidationSession, ValidationSession.round_id == ValidationRound.id)
            .where(ValidationSession.token == token)
        )
    return None if study_id is None else db.session.get(Study, study_id)
