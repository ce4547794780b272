"""The table of exports: every download under /research/export/ and every
`flask export-annotations --what`, declared once (docs/architecture.md, "Add an export").

`EXPORTS` maps a name to an Export (rows, how many, CSV columns, formats:
app.exports.writers) or a Report (one document: the study report; or a zip of several
files: the brat folders, the Hugging Face dataset, the payment sheets). One route,
/research/export/<what>.<fmt>, serves every name in every format it comes in; the
console's Downloads menu lists them (`export_downloads`), and `flask export-annotations`
offers those whose command it is. A new export is one line here; its rows live with the
data they read.

Query parameters mirror the command's options: `document` (one document's rows: 404 when
there is no such document), `submitted_only=1`, `include_removed=1` (annotations) and
`include_flagged=1` (the study report: as the dashboard's switch). The exchange formats'
downloads (docs/interop.md) pseudonymise the ids of people, as their commands do by default.
"""

from __future__ import annotations

from collections.abc import Iterator

from flask import Response, abort, request, stream_with_context
from sqlalchemy import select

from app.adjudication.gold import GOLD_CSV_COLUMNS, flatten_gold, iter_gold_records
from app.core.console_urls import console_url
from app.core.extensions import db
from app.crowd.paragraph_times import (
    PARAGRAPH_COLUMNS,
    count_paragraph_rows,
    iter_paragraph_records,
)
from app.crowd.surveys.store import SURVEY_COLUMNS, count_survey_rows, iter_survey_records
from app.crowd.training.records import (
    TRAINING_COLUMNS,
    count_training_rows,
    iter_training_records,
)
from app.exports.annotations import (
    annotation_rows,
    count_annotations,
    stream_by_copy,
    write_by_copy,
)
from app.exports.record import ExportFilter, annotation_csv_columns
from app.exports.session_rows import SESSION_COLUMNS, count_sessions, iter_session_records
from app.exports.writers import Copy, Export, Report
from app.models import Document
from app.research import bp
from app.research.agreement_figures import resolve_gamma
from app.research.interop_files import (
    PaymentsRefused,
    brat_files,
    dataset_files,
    payment_files,
    w3c_lines,
    zip_bytes,
)
from app.research.study_report import iter_csv, iter_json, load_report_study, study_report
from app.studies import current_study_id
from app.suggestions.records import count_suggestions, iter_suggestion_records
from app.taxonomy import current_taxonomy


def _study_report_text(fmt: str, flt: ExportFilter) -> Iterator[str]:
    """The study report of the running app (gamma as cached: a page never waits for it),
    streamed in pieces as it is written."""
    study = load_report_study(include_flagged=flt.include_flagged)
    resolve_gamma(study)
    report = study_report(study)
    return iter_json(report) if fmt == "json" else iter_csv(report)


def _payments(platform: str):
    def text(fmt: str, flt: ExportFilter) -> bytes:
        try:
            files = payment_files(platform)
        except PaymentsRefused as exc:
            abort(409, description="The payment sheets cannot be written: " + str(exc))
        return zip_bytes(files, f"payments-{platform}")

    return text


def _gold_rows(flt: ExportFilter, fmt: str):
    records = iter_gold_records(flt.document)
    return records if fmt == "jsonl" else map(flatten_gold, records)


# The table, in the Downloads menu's order: the data, then the figures.
EXPORTS: dict[str, Export | Report] = {
    # One record per annotation (docs/contracts.md#annotation-export-records).
    "annotations": Export(
        annotation_rows,
        count_annotations,
        annotation_csv_columns,
        copy=Copy(stream_by_copy, write_by_copy),
    ),
    # One row per session: status, progress, counts.
    "sessions": Export(
        lambda flt, fmt: iter_session_records(flt.document),
        count_sessions,
        lambda flt: SESSION_COLUMNS,
        formats=("csv", "jsonl"),
    ),
    # One row per session and paragraph reached: seconds visible and active, annotations.
    "paragraphs": Export(
        lambda flt, fmt: iter_paragraph_records(flt.document, flt.submitted_only),
        lambda flt: count_paragraph_rows(flt.document, flt.submitted_only),
        lambda flt: PARAGRAPH_COLUMNS,
        formats=("csv", "jsonl"),
    ),
    # One row per session and survey question answered (consent and surveys).
    "surveys": Export(
        lambda flt, fmt: iter_survey_records(current_taxonomy().survey, flt.document),
        lambda flt: count_survey_rows(flt.document),
        lambda flt: SURVEY_COLUMNS,
        formats=("csv", "jsonl"),
    ),
    # One row per training attempt: recall, precision, passed, the spans and feedback.
    "training": Export(
        lambda flt, fmt: iter_training_records(as_text=fmt == "csv"),
        lambda flt: count_training_rows(),
        lambda flt: TRAINING_COLUMNS,
        formats=("csv", "jsonl"),
    ),
    # Every model suggestion with the workers' decisions on it.
    "suggestions": Export(
        lambda flt, fmt: iter_suggestion_records(flt.document),
        lambda flt: count_suggestions(flt.document),
        lambda flt: (),
        formats=("jsonl",),
    ),
    # The adjudicated gold set: export records plus provenance.
    "gold": Export(
        _gold_rows,
        None,
        lambda flt: GOLD_CSV_COLUMNS,
        formats=("jsonl", "csv"),
        command="export-gold",
    ),
    # The study's figures for papers (docs/contracts.md#study-report-json).
    "study-report": Report(_study_report_text, ("json", "csv"), command="study-report"),
    # Exchange formats (docs/interop.md): W3C Web Annotation, brat folders (ids
    # pseudonymised), the Hugging Face dataset, the payment sheets.
    "annotations-w3c": Report(
        lambda fmt, flt: (line + "\n" for line in w3c_lines(flt)),
        ("jsonl",),
        command="export-annotations --format w3c",
    ),
    "annotations-brat": Report(
        lambda fmt, flt: zip_bytes(brat_files(flt), "annotations-brat"),
        ("zip",),
        command="export-annotations --format brat",
    ),
    "dataset": Report(
        lambda fmt, flt: zip_bytes(dataset_files(), "dataset"), ("zip",), command="export-dataset"
    ),
    "payments-prolific": Report(_payments("prolific"), ("zip",), command="payments"),
    "payments-mturk": Report(_payments("mturk"), ("zip",), command="payments"),
}
CONTENT_TYPES = {
    "jsonl": "application/x-ndjson; charset=utf-8",
    "csv": "text/csv; charset=utf-8",
    "json": "application/json; charset=utf-8",
    "zip": "application/zip",
}
TRUE = ("1", "true", "yes", "on")


def command_exports(command: str) -> dict[str, Export | Report]:
    """The exports a command writes, in table order."""
    return {name: export for name, export in EXPORTS.items() if export.command == command}


@bp.app_template_global()
def export_downloads() -> list[tuple[str, str]]:
    """(file name, URL) of every download: each export in each of its formats, in table
    order (the study of the page's: app.core.console_urls)."""
    return [
        (f"{what}.{fmt}", console_url("research.export", what=what, fmt=fmt))
        for what, export in EXPORTS.items()
        for fmt in export.formats
    ]


def _flag(name: str) -> bool:
    return request.args.get(name, "").strip().lower() in TRUE


def _filter() -> ExportFilter:
    document = request.args.get("document") or None
    if (
        document is not None
        and db.session.scalar(
            select(Document.id).where(
                Document.external_id == document, Document.study_id == current_study_id()
            )
        )
        is None
    ):
        abort(404, description=f"No document has the id {document!r}.")
    return ExportFilter(
        document, _flag("submitted_only"), _flag("include_removed"), _flag("include_flagged")
    )


@bp.get("/export/<what>.<fmt>")
def export(what: str, fmt: str) -> Response:
    """One export as a download (attachment `<what>.<fmt>`), streamed."""
    found = EXPORTS.get(what)
    if found is None or fmt not in found.formats:
        abort(404, description=f"No export {what}.{fmt}.")
    chunks = found.chunks(fmt, _filter())
    response = Response(stream_with_context(iter(chunks)), content_type=CONTENT_TYPES[fmt])
    response.headers["Content-Disposition"] = f'attachment; filename="{what}.{fmt}"'
    response.headers["Cache-Control"] = "no-store"
    return response
