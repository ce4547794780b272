"""Precision-validation rounds: importers, validator pages and API, report."""

from flask import Blueprint

bp = Blueprint("validation", __name__)

from app.validation import routes  # noqa: E402,F401
