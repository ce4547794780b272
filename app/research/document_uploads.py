"""Documents uploaded in the console, imported by a job on the queue (issue 30 point 3,
docs/studies.md, "Documents from the browser").

The request only stores the files' bytes (`document_upload_files`: any server's worker
reads them) and asks the queue for the job, so it never takes the import's time. The
job (`DOCUMENT_IMPORT`, app.jobs) reads the files exactly as `flask import-documents`
does (app.imports.document_formats.parse_documents: one file, or several as one folder,
every problem at its file and line) and stores them with the same all-or-nothing
transaction (app.imports.document_store.import_documents); `--dry-run` is the form's
"check only". Its progress (documents stored of all) is written to the upload's row on a
connection of its own on PostgreSQL; SQLite holds its one writer's lock for the whole
import, so there the process that runs it keeps the count in memory, and other processes
show the phase only.

The routes join app.studies.setup_pages' blueprint (its address, guard and roles); they
live here because app.imports and app.jobs sit above app.studies (docs/architecture.md).
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

from flask import current_app, flash, jsonify, redirect, render_template, request, url_for
from flask_login import current_user
from sqlalchemy import delete, select, update
from sqlalchemy.exc import IntegrityError

from app.core.extensions import db
from app.imports.document_formats import FOLDER_SUFFIXES, DocumentFileError, parse_documents
from app.imports.document_store import (
    DocumentImportRefused,
    import_documents,
    preview_import,
)
from app.jobs.kinds import register
from app.jobs.limits import Limits
from app.jobs.queue import submit
from app.models import DocumentUpload, DocumentUploadFile, Study, utcnow
from app.studies import use_study
from app.studies.setup_pages import bp, setup_study

log = logging.getLogger(__name__)
PROGRESS_EVERY = 0.5  # seconds between two progress writes
FINISHED = ("done", "failed")
NAME_MAX = 255

# upload id -> (done, total), for the imports this process runs (see the docstring).
_progress: dict[int, tuple[int, int]] = {}
_progress_lock = threading.Lock()


# --- the request ----------------------------------------------------------------------------


@bp.route("/documents/upload", methods=["POST"])
def upload_documents():
    """Store the uploaded files and queue their import; back to the documents page."""
    study = setup_study()
    config = current_app.config
    files = [f for f in request.files.getlist("documents") if f and f.filename]
    max_bytes, max_files = config["DOCUMENT_UPLOAD_MAX_BYTES"], config["DOCUMENT_UPLOAD_MAX_FILES"]
    names = [file_name(f.filename or "") for f in files]
    problem = upload_problem(names, max_files)
    if problem:
        flash(problem, "error")
        return redirect(url_for(".documents"), 303)
    contents = []
    for name, upload in zip(names, files, strict=True):
        data = upload.read(max_bytes + 1)
        if len(data) > max_bytes:
            message = (
                f"{name} is larger than {max_bytes // (1024 * 1024)} MB, the most one file "
                "may have: split it, or import it with `flask import-documents`."
            )
            return render_template("errors/error.html", status=413, message=message), 413
        contents.append(data)
    upload = DocumentUpload(
        study_id=study.id,
        researcher_id=current_user.id,
        status="queued",
        names=names,
        dry_run=bool(request.form.get("dry_run")),
        done=0,
        total=0,
        problems=[],
    )
    db.session.add(upload)
    db.session.flush()
    for position, (name, data) in enumerate(zip(names, contents, strict=True)):
        db.session.add(
            DocumentUploadFile(upload_id=upload.id, position=position, name=name, content=data)
        )
    db.session.commit()
    payload = {"upload": upload.id}
    submit(DOCUMENT_IMPORT, {DOCUMENT_IMPORT.key(payload): payload})
    return redirect(url_for(".documents", upload=upload.id) + "#upload-status", 303)


def file_name(name: str) -> str:
    """The uploaded file's own name (no folders): a .txt file's name is its document id."""
    return name.replace("\\", "/").rsplit("/", 1)[-1].strip()


def upload_problem(names: list[str], max_files: int) -> str | None:
    """Why these files cannot be imported together, or None."""
    if not names:
        return "Choose one or more files to upload."
    if len(names) > max_files:
        return f"At most {max_files} files in one upload: upload the others next."
    for name in names:
        if name.startswith(".") or len(name) > NAME_MAX or "\x00" in name:
            return f"{name[:80]!r}: a file name of 1 to {NAME_MAX} characters, not hidden."
    if len(set(names)) != len(names):
        return "Two files have the same name: rename one."
    if len(names) > 1:
        odd = [n for n in names if Path(n).suffix.lower() not in FOLDER_SUFFIXES]
        if odd:
            return (
                f"{odd[0]}: several files are read as a folder, whose files end in "
                f"{', '.join(FOLDER_SUFFIXES)}; upload this one on its own."
            )
    return None


@bp.route("/documents/uploads/<int:upload_id>.json")
def upload_status(upload_id: int):
    """An upload's state for the page's progress: status, done of total, result."""
    upload = db.session.get(DocumentUpload, upload_id)
    if upload is None or upload.study_id != setup_study().id:
        return jsonify(error="not_found", message="No such upload in this study."), 404
    return jsonify(status_of(upload))


def status_of(upload: DocumentUpload) -> dict[str, Any]:
    """The upload as the page shows it (with this process's count while it imports)."""
    done, total = upload.done, upload.total
    with _progress_lock:
        live = _progress.get(upload.id)
    if live is not None and upload.status not in FINISHED:
        done, total = max(done, live[0]), max(total, live[1])
    return {
        "id": upload.id,
        "status": upload.status,
        "finished": upload.status in FINISHED,
        "done": done,
        "total": total,
        "names": upload.names,
        "dry_run": upload.dry_run,
        "summary": upload.summary,
        "problems": upload.problems,
    }


# --- the job --------------------------------------------------------------------------------


def run_upload(payload: dict[str, Any], _limits: Limits) -> dict[str, Any]:
    """The job: check the upload's files, import them all or nothing, record the outcome."""
    upload_id = int(payload["upload"])
    upload = db.session.get(DocumentUpload, upload_id)
    if upload is None or upload.status in FINISHED:
        return {"status": upload.status if upload else "gone"}
    try:
        outcome = _import(upload)
    except Exception as exc:  # recorded on the page, then in the job's result
        db.session.rollback()
        log.exception("document upload %s failed", upload_id)
        outcome = _finish(upload_id, "failed", problems=[f"internal error: {type(exc).__name__}"])
    finally:
        with _progress_lock:
            _progress.pop(upload_id, None)
    return outcome


def _import(upload: DocumentUpload) -> dict[str, Any]:
    upload_id = upload.id
    use_study(db.session.get(Study, upload.study_id))
    _set(upload_id, status="checking")
    files = db.session.execute(
        select(DocumentUploadFile.name, DocumentUploadFile.content)
        .where(DocumentUploadFile.upload_id == upload_id)
        .order_by(DocumentUploadFile.position)
    ).all()
    dry_run = upload.dry_run
    with TemporaryDirectory(prefix="falte-upload-") as folder:
        for name, content in files:
            (Path(folder) / name).write_bytes(content)
        path = Path(folder) / files[0].name if len(files) == 1 else Path(folder)
        try:
            inputs = parse_documents(path)
        except DocumentFileError as exc:
            return _finish(upload_id, "failed", problems=str(exc).splitlines())
    _set(upload_id, status="storing", total=len(inputs), done=0)
    progress = Progress(upload_id, len(inputs))
    try:
        store = preview_import if dry_run else import_documents
        report = store(inputs) if dry_run else store(inputs, progress=progress)
    except DocumentImportRefused as exc:
        return _finish(upload_id, "failed", problems=["import refused:", *str(exc).splitlines()])
    except IntegrityError as exc:  # another import wrote the same ids meanwhile
        return _finish(upload_id, "failed", problems=[f"the database refused: {exc.orig}"])
    summary = report.summary()
    summary = f"Dry run: would import {summary}; nothing written" if dry_run else summary
    return _finish(upload_id, "done", summary=summary, done=len(inputs))


class Progress:
    """import_documents' progress callback: counts, and writes the count now and then."""

    def __init__(self, upload_id: int, total: int) -> None:
        self.upload_id, self.total, self.done = upload_id, total, 0
        self.written = time.monotonic()
        self.own_connection = db.engine.dialect.name == "postgresql"

    def __call__(self, count: int) -> None:
        self.done += count
        with _progress_lock:
            _progress[self.upload_id] = (self.done, self.total)
        now = time.monotonic()
        if self.own_connection and now - self.written >= PROGRESS_EVERY:
            self.written = now
            # Its own transaction: the import's is open until it commits everything.
            with db.engine.begin() as connection:
                connection.execute(
                    update(DocumentUpload)
                    .where(DocumentUpload.id == self.upload_id)
                    .values(done=self.done)
                )


def _set(upload_id: int, **values: Any) -> None:
    db.session.execute(
        update(DocumentUpload).where(DocumentUpload.id == upload_id).values(**values),
        execution_options={"synchronize_session": False},
    )
    db.session.commit()


def _finish(upload_id: int, status: str, **values: Any) -> dict[str, Any]:
    """Record the outcome and drop the files' bytes (nothing needs them any more)."""
    db.session.execute(
        delete(DocumentUploadFile).where(DocumentUploadFile.upload_id == upload_id),
        execution_options={"synchronize_session": False},
    )
    _set(upload_id, status=status, finished_at=utcnow(), **values)
    return {"status": status, **values}


DOCUMENT_IMPORT = register("document_import", "v1", run_upload, limited=True)
