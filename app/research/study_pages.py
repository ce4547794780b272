"""The console's studies (docs/studies.md, "The console's studies"): the list of the
studies the researcher has a role in and the form that creates one (`/research/studies/`),
and each study's overview (`/research/studies/<slug>/`): its status and the owner's
buttons to open, close or archive it, its workers' links and completion codes, its
researchers and the owner's sharing form, and the form that copies it.

The blueprint `studies_console` is mounted at /research/studies beside the per-study
registrations of the console's pages (app.core.console_urls): its own rules (`/`,
`/<slug>/`, `/<slug>/status`, `/<slug>/share`, `/<slug>/copy`) are none of theirs. Every
page needs a logged-in researcher (app.core.researcher_guard), and each checks the
researcher's role in its study (app.studies.access): reading needs viewer, copying
editor, sharing and the status owner.
"""

from __future__ import annotations

from flask import Blueprint, flash, g, redirect, render_template, request, url_for
from flask_login import current_user
from werkzeug.utils import secure_filename

from app.core.extensions import db
from app.core.researcher_guard import require_researcher
from app.models import Study
from app.research.routes import worker_links
from app.rules.studies import STUDY_KINDS, TRANSITIONS, StudyKind, StudyStatus
from app.studies import StudyError, list_studies, set_status, share, study_by_slug
from app.studies.access import (
    console_study,
    current_role,
    require_role,
    role_allows,
    study_for_request,
)
from app.studies.making import copy_study, new_study
from app.studies.service import TITLE_MAX_LENGTH, members, researcher_by_email, unshare
from app.taxonomy import TaxonomyError

bp = Blueprint("studies_console", __name__)
bp.before_request(require_researcher)
# The console's layout names the study a page shows (None on the list and the login).
bp.add_app_template_global(console_study, "console_study")

SHARED_ROLES = ("viewer", "editor")  # what an owner may give; "remove" takes a role away
TAXONOMY_MAX_BYTES = 2 * 1024 * 1024
# Where the owner's buttons lead from each status (app.rules.studies.TRANSITIONS).
STATUS_ACTIONS = {
    StudyStatus.OPEN.value: "Open",
    StudyStatus.CLOSED.value: "Close",
    StudyStatus.ARCHIVED.value: "Archive",
}


def _form_values() -> dict[str, str]:
    form = request.form
    return {
        "slug": (form.get("slug") or "").strip(),
        "title": (form.get("title") or "").strip(),
        "kind": form.get("kind") or StudyKind.ANNOTATION.value,
        "judges": form.get("judges") or "",
    }


def _index(values: dict[str, str], errors: dict[str, str], problems: list[str], status: int):
    listing = list_studies(current_user)
    return render_template(
        "studies/index.html",
        studies=listing,
        judgeable=[row for row in listing if row.kind == StudyKind.ANNOTATION],
        kinds=STUDY_KINDS,
        values=values,
        errors=errors,
        problems=problems,
    ), status


@bp.get("/")
def index():
    """The studies the researcher has a role in, and the form that creates one."""
    return _index({"slug": "", "title": "", "kind": "annotation", "judges": ""}, {}, [], 200)


@bp.post("/")
def create():
    """Create a draft study owned by the researcher (its taxonomy uploaded, or the default
    study's); the form again with the reason when the slug, kind or taxonomy is refused."""
    values = _form_values()
    errors: dict[str, str] = {}
    if values["kind"] not in STUDY_KINDS:
        errors["kind"] = "Choose annotation or validation."
    if len(values["title"]) > TITLE_MAX_LENGTH:
        errors["title"] = f"A title has at most {TITLE_MAX_LENGTH} characters."
    judges = None
    if values["kind"] == StudyKind.VALIDATION:
        judges = study_by_slug(values["judges"]) if values["judges"] else None
        if judges is None or not _may_read(judges):
            errors["judges"] = "Choose the annotation study this validation study judges."
    taxonomy = None
    upload = request.files.get("taxonomy")
    if upload is not None and upload.filename:
        raw = upload.read(TAXONOMY_MAX_BYTES + 1)
        if len(raw) > TAXONOMY_MAX_BYTES:
            errors["taxonomy"] = "A taxonomy file has at most 2 MB."
        taxonomy = (raw, secure_filename(upload.filename) or "taxonomy.yaml")
    if errors:
        return _index(values, errors, [], 400)
    try:
        study = new_study(
            values["slug"],
            values["title"] or None,
            values["kind"],
            current_user,
            judges=judges,
            taxonomy=taxonomy,
        )
    except TaxonomyError as error:
        problems = [str(problem) for problem in error.problems]
        return _index(
            values, {"taxonomy": "The taxonomy has problems: nothing was created."}, problems, 400
        )
    except StudyError as error:  # the kind and title were checked above: the slug's
        return _index(values, {"slug": _sentence(str(error))}, [], 400)
    flash(f"Created the draft study {study.slug}. You are its owner.", "info")
    return redirect(url_for("studies_console.overview", slug=study.slug), code=303)


def _may_read(study: Study) -> bool:
    return role_allows(current_role(study), "viewer")


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


def _open(slug: str, need: str):
    """The study of the page, checked (404 / 403) and shown by the console's layout and
    links (app.core.console_urls: the overview's links lead into this study)."""
    study = study_for_request(slug, need)
    g.console_slug = study.slug
    g.console_study = study
    return study


@bp.get("/<slug>/")
def overview(slug: str):
    """A study's overview: status, links, codes, researchers, copy."""
    study = _open(slug, "viewer")
    role = require_role(study, "viewer")
    judges = db.session.get(Study, study.judges_study_id) if study.judges_study_id else None
    return render_template(
        "studies/overview.html",
        study=study,
        role=role,
        judges=judges,
        members=members(study) if role == "owner" else [],
        actions=[
            (status, label)
            for status, label in STATUS_ACTIONS.items()
            if status in TRANSITIONS.get(study.status, frozenset())
        ],
        shared_roles=SHARED_ROLES,
        **worker_links(),
    )


@bp.post("/<slug>/status")
def change_status(slug: str):
    """Open, close or archive the study (its owner only)."""
    study = _open(slug, "owner")
    try:
        set_status(study, request.form.get("status") or "")
    except StudyError as error:
        flash(_sentence(str(error)), "error")
    else:
        flash(f"Study {study.slug} is {study.status}.", "info")
    return redirect(url_for("studies_console.overview", slug=study.slug), code=303)


@bp.post("/<slug>/share")
def change_sharing(slug: str):
    """Share the study with a researcher by e-mail as viewer or editor, or take their role
    away (its owner only)."""
    study = _open(slug, "owner")
    email = (request.form.get("email") or "").strip()
    role = request.form.get("role") or ""
    researcher = researcher_by_email(email) if email else None
    if role not in (*SHARED_ROLES, "remove"):
        flash("Choose viewer, editor or remove.", "error")
    elif researcher is None:
        flash(
            f"No researcher has the e-mail {email!r}: `flask create-researcher` makes one.", "error"
        )
    elif researcher.id == current_user.id:
        flash("You own this study: your own role cannot change here.", "error")
    else:
        try:
            if role == "remove":
                unshare(study, researcher)
                flash(f"{researcher.email} no longer has a role in {study.slug}.", "info")
            else:
                share(study, researcher, role)
                flash(f"{researcher.email} is now {role} of {study.slug}.", "info")
        except StudyError as error:
            flash(_sentence(str(error)), "error")
    return redirect(
        url_for("studies_console.overview", slug=study.slug, _anchor="sharing-heading"), code=303
    )


@bp.post("/<slug>/copy")
def copy(slug: str):
    """Copy the study into a new draft owned by the researcher (editor or owner)."""
    source = _open(slug, "editor")
    new_slug = (request.form.get("new_slug") or "").strip()
    title = (request.form.get("new_title") or "").strip() or None
    try:
        study = copy_study(source, new_slug, current_user, title)
    except StudyError as error:
        flash(f"Not copied: {_sentence(str(error))}", "error")
        return redirect(
            url_for("studies_console.overview", slug=source.slug, _anchor="copy-heading"), code=303
        )
    flash(f"Copied {source.slug} into the draft study {study.slug}. You are its owner.", "info")
    return redirect(url_for("studies_console.overview", slug=study.slug), code=303)
