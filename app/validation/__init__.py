"""Precision-validation rounds: creating them (rounds.py, reading items through
app.imports), validator pages and API, judgments, the report."""

from flask import Blueprint

bp = Blueprint("validation", __name__)

from app.validation import routes  # noqa: E402,F401
