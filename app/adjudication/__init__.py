"""Adjudication: merge several annotators' spans into one gold set (researchers only).

Mounted under /research, behind the research console's login requirement. Its JSON API
(/research/api/...) always answers in the error envelope, whatever the Accept header.
"""

from flask import Blueprint, request
from flask_login import current_user

from app.errors import ApiError, envelope
from app.extensions import db
from app.research.auth import require_researcher

bp = Blueprint("adjudication", __name__)
API_PREFIX = "/research/api/"


@bp.before_request
def _require_researcher():
    if request.path.startswith(API_PREFIX) and not current_user.is_authenticated:
        return envelope(401, "unauthorized", "Log in as a researcher first.")
    return require_researcher()


@bp.errorhandler(ApiError)
def _api_error(error: ApiError):
    db.session.rollback()
    return error.to_response()


from app.adjudication import routes  # noqa: E402,F401
