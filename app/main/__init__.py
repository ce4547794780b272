"""Public pages: home (document list) and the health check."""

from flask import Blueprint

bp = Blueprint("main", __name__)

from app.main import routes  # noqa: E402,F401
