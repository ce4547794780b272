"""The study a request or a command works on.

A worker's start link names it (`/study/<slug>/start`; the unprefixed addresses the
default study), a session belongs to one, a command takes `--study SLUG`. Whoever knows
sets it with `use_study` at the start of the request or command; everything below asks
`current_study()` (the default study when nobody set one). Kept in `flask.g`, so it lives
as long as the request's or the command's app context, never across requests.
"""

from __future__ import annotations

from flask import g

from app.models import Study
from app.studies.service import default_study


def use_study(study: Study) -> Study:
    """Work on `study` for the rest of this request or command."""
    g.falte_study = study
    return study


def current_study() -> Study:
    """The study of this request or command: the one set by `use_study`, else the default."""
    study = g.get("falte_study")
    if study is None:
        study = use_study(default_study())
    return study


def current_study_id() -> int:
    """The id of current_study()."""
    return current_study().id
