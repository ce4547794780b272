"""Studies as rows (issue 30): several studies on one server, each with its own documents,
sessions, rounds, settings, taxonomy versions, links and codes.

`service` holds the domain (find by slug, the default study, create, status, sharing,
listing), `current` the study a request or a command works on, `taxonomies` a study's
taxonomy versions and the taxonomy a request works with. The pure rules (slugs,
kinds, statuses and their transitions) are in app.rules.studies. Callers import from the
package: the names below.
"""

from flask import Flask

from app.rules.studies import DEFAULT_SLUG, DEMO_SLUG, StudyKind, StudyStatus
from app.studies import current, taxonomies
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
    study_from_row,
    study_of_link,
    worker_prefix,
)
from app.studies.taxonomies import (
    StoredTaxonomy,
    TaxonomyRefused,
    compatibility_problems,
    remember_session_version,
    store_taxonomy,
    versions,
)


def init_app(app: Flask) -> None:
    """Every request starts without a study; the taxonomy comes from the database, and the
    default study takes TAXONOMY_PATH as a version at start."""
    current.init_app(app)
    taxonomies.init_app(app)


__all__ = [
    "DEFAULT_SLUG",
    "DEMO_SLUG",
    "StoredTaxonomy",
    "StudyError",
    "StudyKind",
    "StudyListing",
    "StudyStatus",
    "TaxonomyRefused",
    "compatibility_problems",
    "create_study",
    "current_study",
    "current_study_id",
    "default_study",
    "init_app",
    "list_studies",
    "remember_session_version",
    "require_study",
    "role_of",
    "set_status",
    "share",
    "store_taxonomy",
    "study_by_slug",
    "study_from_row",
    "study_of_link",
    "use_study",
    "versions",
    "worker_prefix",
]
