"""Researcher console: login, dashboard, exports, study links."""

from flask import Blueprint

bp = Blueprint("research", __name__)

from app.research import auth, downloads, round_pages, routes  # noqa: E402,F401
