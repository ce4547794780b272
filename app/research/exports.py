"""Downloads of the annotation and session exports, streamed (app/exports/writers.py builds
the rows; on PostgreSQL the JSONL annotations come from COPY, as the CLI's:
app/exports/postgres_copy.py).

Query parameters mirror the CLI options: `document`, `submitted_only=1`,
`include_removed=1` (annotations only).

The console's Downloads menu (templates/research/layout.html) lists `export_downloads()`:
every download under /research/export/, whichever module serves it, each once.
"""

from __future__ import annotations

from flask import Response, abort, current_app, request, stream_with_context
from flask_login import login_required
from sqlalchemy import select

from app.core.extensions import db
from app.exports.writers import ExportFilter, export_chunks
from app.models import Document
from app.research import bp

CONTENT_TYPES = {
    "jsonl": "application/x-ndjson; charset=utf-8",
    "csv": "text/csv; charset=utf-8",
}
TRUE = ("1", "true", "yes", "on")
EXPORT_PREFIX = "/research/export/"
# The Downloads menu's order: the data, then the figures; a download not named here
# follows, by name.
DOWNLOAD_ORDER = (
    "annotations.jsonl",
    "annotations.csv",
    "sessions.csv",
    "paragraphs.csv",
    "surveys.csv",
    "training.csv",
    "suggestions.jsonl",
    "gold.jsonl",
    "study-report.json",
    "study-report.csv",
)


@bp.app_template_global()
def export_downloads() -> list[tuple[str, str]]:
    """(file name, URL) of every export download: each GET route under /research/export/
    that takes no parameter, once, in DOWNLOAD_ORDER and then by name."""
    found = {
        rule.rule.removeprefix(EXPORT_PREFIX): rule.rule
        for rule in current_app.url_map.iter_rules()
        if rule.rule.startswith(EXPORT_PREFIX) and not rule.arguments and "GET" in rule.methods
    }
    order = {name: index for index, name in enumerate(DOWNLOAD_ORDER)}
    return sorted(found.items(), key=lambda item: (order.get(item[0], len(order)), item[0]))


def _flag(name: str) -> bool:
    return request.args.get(name, "").strip().lower() in TRUE


def _filter() -> ExportFilter:
    document = request.args.get("document") or None
    if (
        document is not None
        and db.session.scalar(select(Document.id).where(Document.external_id == document)) is None
    ):
        abort(404, description=f"No document has the id {document!r}.")
    return ExportFilter(document, _flag("submitted_only"), _flag("include_removed"))


def _download(fmt: str, what: str, filename: str) -> Response:
    chunks = export_chunks(fmt, what, _filter())
    response = Response(stream_with_context(chunks), content_type=CONTENT_TYPES[fmt])
    response.headers["Content-Disposition"] = f'attachment; filename="{filename}"'
    response.headers["Cache-Control"] = "no-store"
    return response


@bp.get("/export/annotations.jsonl")
@login_required
def export_annotations_jsonl() -> Response:
    """All annotations as JSON lines (the `flask export-annotations` records)."""
    return _download("jsonl", "annotations", "annotations.jsonl")


@bp.get("/export/annotations.csv")
@login_required
def export_annotations_csv() -> Response:
    """All annotations as CSV (UTF-8 with BOM), FALTE's columns first."""
    return _download("csv", "annotations", "annotations.csv")


@bp.get("/export/sessions.csv")
@login_required
def export_sessions_csv() -> Response:
    """One row per annotation session, with its status, progress and counts."""
    return _download("csv", "sessions", "sessions.csv")


@bp.get("/export/suggestions.jsonl")
@login_required
def export_suggestions_jsonl() -> Response:
    """Every model suggestion with the workers' decisions on it (issue 18)."""
    return _download("jsonl", "suggestions", "suggestions.jsonl")


@bp.get("/export/paragraphs.csv")
@login_required
def export_paragraphs_csv() -> Response:
    """One row per session and paragraph reached: seconds visible, active, annotations, words."""
    return _download("csv", "paragraphs", "paragraphs.csv")


@bp.get("/export/training.csv")
@login_required
def export_training_csv() -> Response:
    """One row per training attempt: recall, precision, passed, the spans and feedback."""
    return _download("csv", "training", "training.csv")


@bp.get("/export/surveys.csv")
@login_required
def export_surveys_csv() -> Response:
    """One row per session and survey question answered (consent and surveys, issue 17)."""
    return _download("csv", "surveys", "surveys.csv")
