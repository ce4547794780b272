"""Studies as rows (issue 30): several studies on one server, each with its own documents,
sessions, rounds, settings, taxonomy versions, links and codes.

`service` holds the domain (find by slug, the default study, create, status, sharing,
listing), `current` the study a request or a command works on. The pure rules (slugs,
kinds, statuses and their transitions) are in app.rules.studies. Callers import from the
package: the names below.
"""

from app.rules.studies import DEFAULT_SLUG, DEMO_SLUG, StudyKind, StudyStatus
from app.studies.current import current_study, current_study_id, use_study
from app.studies.service import (
    StudyError,
    StudyListing,
    create_study,
    default_study,
    list_studies,
    require_study,
    role_of,
    set_status,
    share,
    study_by_slug,
)

__all__ = [
    "DEFAULT_SLUG",
    "DEMO_SLUG",
    "StudyError",
    "StudyKind",
    "StudyListing",
    "StudyStatus",
    "create_study",
    "current_study",
    "current_study_id",
    "default_study",
    "list_studies",
    "require_study",
    "role_of",
    "set_status",
    "share",
    "study_by_slug",
    "use_study",
]
