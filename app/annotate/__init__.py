"""Worker pages (routes.py) and the worker JSON API (api.py)."""

from flask import Blueprint

bp = Blueprint("annotate", __name__)
api_bp = Blueprint("annotate_api", __name__)

from app.annotate import api, routes  # noqa: E402,F401
