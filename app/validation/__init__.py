"""Precision-validation rounds: creating them (rounds.py, reading items through
app.imports), validator pages and API, judgments, the report; a validation study's start
link (study_start.py)."""

from flask import Blueprint

bp = Blueprint("validation", __name__)

from app.validation import routes, study_start  # noqa: E402,F401

# A validation study's /study/<slug>/start leads to its rounds (app.crowd.study_entry).
bp.record_once(lambda state: study_start.init_app(state.app))
