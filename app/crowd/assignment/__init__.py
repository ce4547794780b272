"""Study assignment: GET /start hands a worker the document that most needs annotators."""

from flask import Blueprint

bp = Blueprint("assignment", __name__)

from app.crowd.assignment import routes  # noqa: E402,F401
