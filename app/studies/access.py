"""Who may do what in a study's console (docs/studies.md, "Sharing").

A study's researchers hold one role each (study_researchers): `owner` (made it: may share
it, open, close or archive it), `editor` (may change it: taxonomy, documents, rounds,
adjudication) and `viewer` (may read it: dashboard, reports, downloads). A researcher with
no role in a study gets 404 for every page of it (its existence is not revealed); one with
too small a role gets 403.

The console's blueprints run `check_console_study` before each of their pages (after the
login requirement): a per-study page (`/research/studies/<slug>/...`) checks that study,
a default-study page (`/research/...`) the default study; reading (GET, HEAD) needs
viewer, anything else editor. The studies' own pages call `study_for_request(slug,
need)` (or `require_role` with a study they already hold) at their start; it also makes
the study the request's current one.
"""

from __future__ import annotations

from flask import abort, g, request
from flask_login import current_user

from app.core.console_urls import UNSCOPED, console_slug
from app.models import Study
from app.rules.studies import DEFAULT_SLUG
from app.studies.current import use_study
from app.studies.service import default_study, role_of, study_and_role, study_by_slug

ROLE_RANK = {"viewer": 1, "editor": 2, "owner": 3}


def role_allows(role: str | None, need: str) -> bool:
    """Whether `role` (None: no role) is at least `need` (viewer < editor < owner)."""
    return role is not None and ROLE_RANK[role] >= ROLE_RANK[need]


def current_role(study: Study) -> str | None:
    """The logged-in researcher's role in `study`, or None (also when nobody is logged in)."""
    if not current_user.is_authenticated:
        return None
    return role_of(study, current_user)


def require_role(study: Study, need: str) -> str:
    """The logged-in researcher's role in `study`; aborts 404 without one, 403 when it is
    below `need`."""
    role = current_role(study)
    if role is None:
        abort(404)
    if not role_allows(role, need):
        abort(403)
    return role


def study_for_request(slug: str, need: str = "viewer") -> Study:
    """The study `slug` names, checked against the researcher's role (404 / 403 as
    require_role) and made the request's current study."""
    study = study_by_slug(slug)
    if study is None:
        abort(404)
    require_role(study, need)
    return use_study(study)


def need_of_method(method: str) -> str:
    """The role a request needs by its method: viewer reads, editor changes."""
    return "viewer" if method in ("GET", "HEAD", "OPTIONS") else "editor"


def check_console_study() -> None:
    """A before_request of the console's blueprints: the page's study (its slug in the
    address, else the default study) checked against the researcher's role and made the
    request's study (`console_study()` then names it). The login and logout belong to no
    study; an anonymous browser was sent to the login page before this runs."""
    if request.endpoint in UNSCOPED or not current_user.is_authenticated:
        return
    need = need_of_method(request.method)
    slug = console_slug()
    study, role = study_and_role(slug or DEFAULT_SLUG, current_user)  # one query per page
    if study is None and slug is None:  # a fresh database: the default study is made
        study = default_study()
        role = role_of(study, current_user)
    if study is None or role is None:
        abort(404)
    if not role_allows(role, need):
        abort(403)
    g.console_study = use_study(study)


def console_study() -> Study | None:
    """The study the console page being served shows (None on pages of no study)."""
    return g.get("console_study")
