"""Adjudication: merge several annotators' spans into one gold set (researchers only).

Mounted under /research (the default study) and /research/studies/<slug> (any study:
app.core.console_urls), behind the research console's login requirement (anonymous
browsers are redirected to the login page, JSON clients get 401) and its role check
(app.studies.access). Errors of its JSON API
(/research/api/...) always answer in the error envelope.
"""

from app.core.console_urls import ConsoleBlueprint, take_slug
from app.core.errors import ApiError
from app.core.extensions import db
from app.core.researcher_guard import require_researcher
from app.studies.access import check_console_study

# Registered at /research (the default study) and at /research/studies/<slug> as
# `study_adjudication` (app.core.console_urls).
bp = ConsoleBlueprint("adjudication", __name__)
bp.url_value_preprocessor(take_slug)
bp.before_request(require_researcher)
bp.before_request(check_console_study)


@bp.errorhandler(ApiError)
def _api_error(error: ApiError):
    db.session.rollback()
    return error.to_response()


from app.adjudication import routes  # noqa: E402,F401
