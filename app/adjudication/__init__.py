"""Adjudication: merge several annotators' spans into one gold set (researchers only).

Mounted under /research, behind the research console's login requirement (anonymous
browsers are redirected to the login page, JSON clients get 401). Errors of its JSON API
(/research/api/...) always answer in the error envelope.
"""

from flask import Blueprint

from app.core.errors import ApiError
from app.core.extensions import db
from app.core.researcher_guard import require_researcher

bp = Blueprint("adjudication", __name__)
bp.before_request(require_researcher)


@bp.errorhandler(ApiError)
def _api_error(error: ApiError):
    db.session.rollback()
    return error.to_response()


from app.adjudication import routes  # noqa: E402,F401
