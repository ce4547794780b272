"""Setting a study up in the console (issue 30, docs/studies.md): its taxonomy and its
documents, under /research/studies/<slug>/.

- `/taxonomy/upload`: check an uploaded taxonomy exactly as `flask check-taxonomy` does
  (every problem at its line), show what it changes, and on confirmation store it as the
  study's new version (app.studies.taxonomies.store_taxonomy: new sessions only; a key
  that annotations use may not go). A study managed by a file (TAXONOMY_PATH) refuses.
- `/documents`: the study's documents, 100 a page, with the latest uploads and their
  progress; retiring (no new sessions), un-retiring and deleting (only when nothing points
  to it): app.studies.documents, which the commands call too.
  The upload itself and its job are in app.research.document_uploads, which adds its
  routes to this blueprint: the import needs app.imports and app.jobs, which sit above
  this package (docs/architecture.md).

Every page needs a logged-in researcher (app.core.researcher_guard) with a role in the
study (app.studies.access): viewer to read, editor to change.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from typing import Any

from flask import (
    Blueprint,
    abort,
    current_app,
    flash,
    g,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_login import current_user
from sqlalchemy import func, select
from werkzeug.exceptions import RequestEntityTooLarge

from app.core.extensions import db
from app.core.researcher_guard import require_researcher
from app.models import AnnotationSession, Document, DocumentUpload, Study, TaxonomyVersion
from app.rules.studies import slug_problem
from app.studies.access import current_role, role_allows, study_for_request
from app.studies.documents import DocumentsRefused, delete_documents, set_retired
from app.studies.taxonomies import (
    TaxonomyRefused,
    compatibility_problems,
    store_taxonomy,
    taxonomy_of,
    versions,
)
from app.studies.taxonomy_diff import taxonomy_diff
from app.taxonomy import TaxonomyError, current_taxonomy, load_taxonomy_text

bp = Blueprint("study_setup", __name__)
bp.before_request(require_researcher)

PAGE_SIZE = 100
TAXONOMY_MAX_BYTES = 1024 * 1024  # a taxonomy is text: a megabyte is far more than any
RECENT_UPLOADS = 5


@bp.url_value_preprocessor
def _take_study(endpoint: str | None, values: dict[str, Any] | None) -> None:
    """The study of the address, checked against the researcher's role (viewer to read,
    editor to change); before anything reads the body, the body limits of the page."""
    slug = (values or {}).pop("slug", "")
    g.setup_slug = slug
    limit = body_limit(endpoint)
    if limit:
        request.max_content_length = limit
        request.max_form_memory_size = limit * 2  # the taxonomy's text comes back in base64
        if (request.content_length or 0) > limit:
            # Refused before the form is parsed: no temporary file left half-written.
            raise RequestEntityTooLarge()
    g.setup_study = None
    if not current_user.is_authenticated or slug_problem(slug):
        # require_researcher sends the browser to the login page; a slug no study can
        # have is left to the request guard (a NUL: 400) and then _require_study (404).
        return
    need = "viewer" if request.method in ("GET", "HEAD") else "editor"
    g.setup_study = study_for_request(slug, need)


@bp.before_request
def _require_study() -> None:
    """After the login requirement: an address whose slug names no study is not found."""
    if g.get("setup_study") is None:
        abort(404)


@bp.url_defaults
def _add_slug(endpoint: str, values: dict[str, Any]) -> None:
    if "slug" not in values and "setup_slug" in g:
        values["slug"] = g.setup_slug


def body_limit(endpoint: str | None) -> int | None:
    """The largest body a page of this blueprint takes (None: the app's MAX_CONTENT_LENGTH)."""
    if endpoint == "study_setup.taxonomy_upload":
        return TAXONOMY_MAX_BYTES
    if endpoint == "study_setup.upload_documents":
        config = current_app.config
        return config["DOCUMENT_UPLOAD_MAX_BYTES"] * config["DOCUMENT_UPLOAD_MAX_FILES"] + 65536
    return None


@bp.errorhandler(RequestEntityTooLarge)
def _too_large(error: RequestEntityTooLarge):
    if request.endpoint == "study_setup.upload_documents":
        config = current_app.config
        message = (
            f"The upload is too large: each file may have at most "
            f"{config['DOCUMENT_UPLOAD_MAX_BYTES'] // (1024 * 1024)} MB, and one upload at "
            f"most {config['DOCUMENT_UPLOAD_MAX_FILES']} files. Split it, or import it with "
            "`flask import-documents`."
        )
    else:
        message = (
            f"The file is too large: a taxonomy may have at most {TAXONOMY_MAX_BYTES // 1024} KB."
        )
    return render_template("errors/error.html", status=413, message=message), 413


def setup_study() -> Study:
    """The study of this request (set from the address)."""
    return g.setup_study


def may_edit(study: Study) -> bool:
    """Whether the logged-in researcher may change the study (editor or owner)."""
    return role_allows(current_role(study), "editor")


# --- the taxonomy ---------------------------------------------------------------------------


def text_hash(raw: bytes) -> str:
    """SHA-256 of an uploaded taxonomy's bytes: the confirmation must carry the same."""
    return hashlib.sha256(raw).hexdigest()


@bp.route("/taxonomy/upload", methods=["GET", "POST"])
def taxonomy_upload():
    """Upload a taxonomy: check it, show its difference, save it as a new version."""
    study = setup_study()
    page: dict[str, Any] = {}
    status = 200
    if request.method == "POST":
        page, status = _taxonomy_post(study)
        if status == 303:
            return redirect(url_for(".taxonomy_upload"), 303)
    return render_template(
        "studies/taxonomy_upload.html",
        study=study,
        versions=list(reversed(versions(study))),
        editable=may_edit(study),
        max_size="1 MB",
        **page,
    ), status


def _taxonomy_post(study: Study) -> tuple[dict[str, Any], int]:
    """Check (an uploaded file) or save (a checked text); the page's values and status."""
    if study.taxonomy_file:
        return {"refusal": _file_managed(study)}, 409
    if request.form.get("action") == "save":
        return _save(study)
    upload = request.files.get("taxonomy")
    if upload is None or not upload.filename:
        return {"refusal": "Choose a taxonomy file (YAML) to upload."}, 400
    raw = upload.read()
    name = upload.filename.replace("\\", "/").rsplit("/", 1)[-1][:200]
    return _preview(study, raw, name)


def _file_managed(study: Study) -> str:
    return (
        f"This study takes its taxonomy from the file {study.taxonomy_file} (TAXONOMY_PATH). "
        "Uploads are refused: change that file instead (it becomes a new version when the "
        "app starts)."
    )


def _preview(study: Study, raw: bytes, name: str) -> tuple[dict[str, Any], int]:
    """The checked upload: its problems (each at its line), or its difference."""
    try:
        taxonomy = load_taxonomy_text(raw, name)  # what `flask check-taxonomy` runs
    except TaxonomyError as error:
        return {"problems": [str(p) for p in error.problems], "name": name}, 422
    current_text = None
    if study.taxonomy_version:
        current_text = db.session.scalar(
            select(TaxonomyVersion.yaml_text).where(
                TaxonomyVersion.study_id == study.id,
                TaxonomyVersion.version == study.taxonomy_version,
            )
        )
    current = taxonomy_of(study.taxonomy_version) if study.taxonomy_version else None
    diff = taxonomy_diff(current, current_text, taxonomy, raw.decode("utf-8"))
    same = taxonomy.version == study.taxonomy_version
    return {
        "checked": taxonomy,
        "name": name,
        "diff": diff,
        "same": same,
        "incompatible": [] if same else compatibility_problems(study, taxonomy),
        "content": base64.b64encode(raw).decode("ascii"),
        "content_hash": text_hash(raw),
    }, 200


def _save(study: Study) -> tuple[dict[str, Any], int]:
    """Store the checked text as the study's new version, if it is the text checked."""
    try:
        raw = base64.b64decode(request.form.get("content", ""), validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    name = request.form.get("name", "upload.yaml")[:200]
    if not raw or text_hash(raw) != request.form.get("content_hash"):
        return {
            "refusal": "The text to save is not the text that was checked: upload the file again."
        }, 400
    try:
        stored = store_taxonomy(study, raw, name)
    except TaxonomyError as error:
        return {"problems": [str(p) for p in error.problems], "name": name}, 422
    except TaxonomyRefused as error:
        return {"refusal": "Not saved: " + "; ".join(error.problems)}, 409
    if stored.created:
        flash(
            f"Saved {name} as taxonomy version {stored.version[:12]}: new sessions get it; "
            "sessions already started keep theirs.",
            "info",
        )
    else:
        flash(f"{name} is version {stored.version[:12]}, already stored: it is current now.")
    return {}, 303


# --- the documents --------------------------------------------------------------------------


@bp.route("/documents")
def documents():
    """The study's documents (PAGE_SIZE a page), its recent uploads and the upload form."""
    study = setup_study()
    total = db.session.scalar(select(func.count(Document.id)).where(Document.study_id == study.id))
    pages = max(1, -(-total // PAGE_SIZE))
    page = min(max(request.args.get("page", 1, type=int) or 1, 1), pages)
    sessions = (
        select(AnnotationSession.document_id, func.count().label("n"))
        .where(AnnotationSession.study_id == study.id)
        .group_by(AnnotationSession.document_id)
        .subquery()
    )
    rows = db.session.execute(
        select(Document, func.coalesce(sessions.c.n, 0))
        .outerjoin(sessions, sessions.c.document_id == Document.id)
        .where(Document.study_id == study.id)
        .order_by(Document.id)
        .limit(PAGE_SIZE)
        .offset((page - 1) * PAGE_SIZE)
    ).all()
    practice = set(current_taxonomy().training.documents)
    uploads = db.session.scalars(
        select(DocumentUpload)
        .where(DocumentUpload.study_id == study.id)
        .order_by(DocumentUpload.id.desc())
        .limit(RECENT_UPLOADS)
    ).all()
    config = current_app.config
    return render_template(
        "studies/documents.html",
        study=study,
        rows=[(doc, count, kind_of(doc, practice)) for doc, count in rows],
        total=total,
        page=page,
        pages=pages,
        first=(page - 1) * PAGE_SIZE + 1,
        uploads=uploads,
        shown_upload=request.args.get("upload", type=int),
        editable=may_edit(study),
        max_mb=config["DOCUMENT_UPLOAD_MAX_BYTES"] // (1024 * 1024),
        max_files=config["DOCUMENT_UPLOAD_MAX_FILES"],
    )


def kind_of(document: Document, practice: set[str]) -> str:
    """normal, attention check (gold spans) or practice (the taxonomy's `training:`)."""
    if document.external_id in practice:
        return "practice"
    return "attention check" if document.gold else "normal"


def _document(document_id: int) -> Document:
    document = db.session.get(Document, document_id)
    if document is None or document.study_id != setup_study().id:
        abort(404)
    return document


def _back() -> Any:
    return redirect(url_for(".documents", page=request.form.get("page", 1, type=int)), 303)


@bp.route("/documents/<int:document_id>/retire", methods=["POST"])
def retire_document(document_id: int):
    """No new sessions for this document; its sessions go on, its data stays."""
    document = _document(document_id)
    set_retired([document], True)
    flash(f"Retired {document.external_id}: it gets no new sessions.", "info")
    return _back()


@bp.route("/documents/<int:document_id>/unretire", methods=["POST"])
def unretire_document(document_id: int):
    """Hand the document out again."""
    document = _document(document_id)
    set_retired([document], False)
    flash(f"{document.external_id} is active again.", "info")
    return _back()


@bp.route("/documents/<int:document_id>/delete", methods=["POST"])
def delete_document(document_id: int):
    """Delete a document nothing points to; refused, with the reason, otherwise."""
    document = _document(document_id)
    name = document.external_id
    try:
        delete_documents([document])
    except DocumentsRefused as refused:
        for refusal in refused.refusals:
            flash(f"{refusal.document_id} was not deleted: {refusal.reason}", "error")
        return _back()
    flash(f"Deleted {name}.", "info")
    return _back()
