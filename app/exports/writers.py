"""Exports of annotations, sessions and paragraphs (JSONL/CSV), streamed: CLI and downloads.

The annotation record is declared in app.exports.record (one table of fields); on
PostgreSQL its JSONL is written by COPY (app.exports.postgres_copy), by the CLI and the download
alike. Rows come from one joined query read through a server-side cursor (`yield_per`),
so the memory an export needs does not grow with the number of annotations.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime, timedelta
from itertools import islice
from pathlib import Path
from typing import Any, TextIO

import click
from flask.cli import with_appcontext
from sqlalchemy import func, select

from app.core.extensions import db
from app.crowd.checks.flagged import left_out_workers
from app.crowd.paragraph_times import (
    PARAGRAPH_COLUMNS,
    count_paragraph_rows,
    iter_paragraph_records,
)
from app.crowd.settings import study_settings
from app.crowd.surveys.store import SURVEY_COLUMNS, count_survey_rows, iter_survey_records
from app.crowd.training.records import TRAINING_COLUMNS, count_training_rows, iter_training_records
from app.exports import postgres_copy as export_copy
from app.exports.record import (
    ANNOTATION_CSV_COLUMNS,
    BATCH,
    FALTE_COLUMNS,
    ExportFilter,
    annotation_csv_columns,
    annotation_record,
    annotation_select,
    category_lookup,
    filtered,
    flatten_annotation,
    iso_utc,
    iter_annotation_lines,
    iter_annotation_records,
)
from app.models import Annotation, AnnotationSession, Annotator, Document
from app.rules.csv_safety import safe_cell
from app.rules.jsonl import escape_line_breaks
from app.taxonomy import Taxonomy, current_taxonomy

# Imported from here by the CLI, the downloads, app.adjudication.gold and app.research.
__all__ = [
    "ANNOTATION_CSV_COLUMNS",
    "FALTE_COLUMNS",
    "SESSION_COLUMNS",
    "ExportFilter",
    "annotation_record",
    "category_lookup",
    "count_rows",
    "export_chunks",
    "flatten_annotation",
    "iter_annotation_records",
    "iter_csv",
    "iter_jsonl",
    "iter_session_records",
    "write_export",
]

BOM = "\ufeff"  # spreadsheets (Excel) need it to read the file as UTF-8
# Platform parameters stored per session -> column. Prolific's SESSION_ID is named
# platform_session_id so that `session_id` means the same thing in both exports.
PLATFORM_COLUMNS = (
    ("study_id", "study_id"),
    ("session_id", "platform_session_id"),
    ("assignment_id", "assignment_id"),
    ("hit_id", "hit_id"),
)
SESSION_COLUMNS = (
    "session_id",
    "document_id",
    "annotator_id",
    "platform",
    *(column for _, column in PLATFORM_COLUMNS),
    "status",
    "outcome",
    "started_at",
    "last_seen_at",
    "submitted_at",
    "completion_code",
    "furthest_paragraph",
    "annotations",
    "is_attention_check",
    "arm",
    "flagged",  # the worker is left out of the study's figures (app.crowd.checks.flagged)
    "verification",
)


def count_annotations(flt: ExportFilter) -> int:
    """How many records iter_annotation_records will yield (for a progress bar)."""
    return db.session.scalar(filtered(annotation_select(func.count(Annotation.id)), flt)) or 0


def iter_session_records(
    document: str | None = None, taxonomy: Taxonomy | None = None, now: datetime | None = None
) -> Iterator[dict[str, Any]]:
    """One row per annotation session, including those with no annotations at all."""
    taxonomy = taxonomy or current_taxonomy()
    idle_since = (now or datetime.now(UTC)) - timedelta(
        minutes=taxonomy.study.abandon_after_minutes
    )
    live = (
        select(Annotation.session_id, func.count(Annotation.id).label("n"))
        .where(Annotation.deleted_at.is_(None))
        .group_by(Annotation.session_id)
        .subquery()
    )
    query = (
        select(AnnotationSession, Document.external_id, Annotator, func.coalesce(live.c.n, 0))
        .join(Document, AnnotationSession.document_id == Document.id)
        .join(Annotator, AnnotationSession.annotator_id == Annotator.id)
        .outerjoin(live, live.c.session_id == AnnotationSession.id)
        .order_by(Document.external_id, AnnotationSession.id)
    )
    if document is not None:
        query = query.where(Document.external_id == document)
    flagged = set(left_out_workers(study_settings()))
    result = db.session.execute(query.execution_options(yield_per=BATCH, stream_results=True))
    for session, document_id, annotator, count in result:
        status = session.status
        last_seen = session.last_seen_at
        if last_seen is not None and last_seen.tzinfo is None:
            last_seen = last_seen.replace(tzinfo=UTC)
        if status == "active" and last_seen is not None and last_seen < idle_since:
            status = "abandoned"
        params = session.platform_params or {}
        yield {
            "session_id": str(session.id),
            "document_id": document_id,
            "annotator_id": annotator.label,
            "platform": session.platform,
            **{column: params.get(key) for key, column in PLATFORM_COLUMNS},
            "status": status,
            "outcome": session.outcome,
            "started_at": iso_utc(session.started_at),
            "last_seen_at": iso_utc(session.last_seen_at),
            "submitted_at": iso_utc(session.submitted_at),
            # A code is earned at Submit: one listed earlier could pay unfinished work.
            "completion_code": session.completion_code if session.status == "submitted" else None,
            "furthest_paragraph": session.furthest,
            "annotations": count,
            "is_attention_check": session.is_attention_check,
            "arm": session.arm,
            "flagged": annotator.id in flagged,
            # Prolific's API on the arrival: verified | unverified; empty when not asked.
            "verification": session.verification,
        }
        db.session.expunge(session)  # keep the identity map from growing with the export


def _csv_value(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    # Text from documents, workers and URL parameters never reaches a spreadsheet as a
    # formula (app.rules.csv_safety).
    return "" if value is None else safe_cell(value)


def iter_csv(
    rows: Iterable[dict[str, Any]], columns: tuple[str, ...], bom: bool = True
) -> Iterator[str]:
    """CSV text in chunks of about BATCH rows: header first (after a BOM), \\r\\n endings."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, quoting=csv.QUOTE_MINIMAL, lineterminator="\r\n")
    if bom:
        buffer.write(BOM)
    writer.writerow(columns)
    pending = 0
    for row in rows:
        writer.writerow([_csv_value(row.get(column)) for column in columns])
        pending += 1
        if pending == BATCH:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
            pending = 0
    yield buffer.getvalue()


_JSON = json.JSONEncoder(ensure_ascii=False, separators=(", ", ": "))


def iter_jsonl(records: Iterable[dict[str, Any] | str]) -> Iterator[str]:
    """JSON lines in chunks of BATCH records (records already encoded pass through), U+2028,
    U+2029 and U+0085 escaped (app.rules.jsonl)."""
    encode = _JSON.encode
    lines = (
        escape_line_breaks(record if isinstance(record, str) else encode(record))
        for record in records
    )
    yield from _chunked(lines)


def _chunked(lines: Iterable[str]) -> Iterator[str]:
    iterator = iter(lines)
    while chunk := "\n".join(islice(iterator, BATCH)):
        yield chunk + "\n"


def export_chunks(
    fmt: str, what: str, flt: ExportFilter, progress: Callable[[int], None] | None = None
) -> Iterator[str] | Iterator[bytes]:
    """The whole export as chunks: fmt jsonl|csv, what annotations|sessions|paragraphs|
    training|surveys (any format) or suggestions (JSONL only).

    Text, but for JSONL annotations on PostgreSQL without progress: bytes, from COPY.
    """
    if what == "suggestions":
        from app.suggestions.records import iter_suggestion_records

        records: Iterable[dict[str, Any]] = iter_suggestion_records(flt.document)
        return iter_jsonl(_counted(records, progress) if progress else records)
    if what == "paragraphs":
        rows: Iterable[dict[str, Any]] = iter_paragraph_records(flt.document, flt.submitted_only)
        columns = PARAGRAPH_COLUMNS
    elif what == "training":
        rows = iter_training_records(as_text=fmt == "csv")
        columns = TRAINING_COLUMNS
    elif what == "surveys":
        rows = iter_survey_records(current_taxonomy().survey, flt.document)
        columns = SURVEY_COLUMNS
    elif what == "sessions":
        rows = iter_session_records(flt.document)
        columns = SESSION_COLUMNS
    elif fmt == "jsonl" and progress is None and export_copy.supported():
        return export_copy.stream_annotations_jsonl(current_taxonomy(), flt)
    elif fmt == "jsonl":
        lines: Iterable[str] = iter_annotation_lines(flt)
        return _chunked(_counted(lines, progress) if progress else lines)
    else:
        rows = iter_annotation_records(flt)
        columns = annotation_csv_columns(flt)
    if progress is not None:
        rows = _counted(rows, progress)
    if fmt == "jsonl":
        return iter_jsonl(rows)
    if what == "annotations":
        rows = map(flatten_annotation, rows)
    return iter_csv(rows, columns)


def _counted(rows: Iterable[Any], progress: Callable[[int], None]) -> Iterator[Any]:
    pending = 0
    for row in rows:
        yield row
        pending += 1
        if pending == BATCH:
            progress(pending)
            pending = 0
    progress(pending)


def count_rows(what: str, flt: ExportFilter) -> int:
    """How many rows an export will hold."""
    if what == "annotations":
        return count_annotations(flt)
    if what == "paragraphs":
        return count_paragraph_rows(flt.document, flt.submitted_only)
    if what == "training":
        return count_training_rows()
    if what == "surveys":
        return count_survey_rows(flt.document)
    if what == "suggestions":
        from app.suggestions.records import count_suggestions

        return count_suggestions(flt.document)
    query = select(func.count(AnnotationSession.id)).join(
        Document, AnnotationSession.document_id == Document.id
    )
    if flt.document is not None:
        query = query.where(Document.external_id == flt.document)
    return db.session.scalar(query) or 0


def write_export(
    out: TextIO,
    fmt: str,
    what: str,
    flt: ExportFilter,
    progress: Callable[[int], None] | None = None,
) -> None:
    """Write an export to an open text file, calling progress(rows) as it goes."""
    if fmt == "jsonl" and what == "annotations" and export_copy.supported():
        export_copy.copy_annotations_jsonl(out, current_taxonomy(), flt, progress)
        return
    for chunk in export_chunks(fmt, what, flt, progress):
        out.write(chunk)


@click.command("export-annotations")
@click.option(
    "--format", "fmt", type=click.Choice(["jsonl", "csv"]), default="jsonl", show_default=True
)
@click.option(
    "--output",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    help="File to write (default: standard output). A progress bar shows on stderr.",
)
@click.option("--document", help="Only this document (its external id).")
@click.option("--submitted-only", is_flag=True, help="Only sessions the worker submitted.")
@click.option(
    "--include-removed",
    is_flag=True,
    help="Also annotations the worker removed, with their removed_at time.",
)
@click.option(
    "--what",
    type=click.Choice(
        ["annotations", "sessions", "paragraphs", "training", "surveys", "suggestions"]
    ),
    default="annotations",
    show_default=True,
    help="One row per annotation, per session (status and counts), per session and "
    "paragraph reached (seconds visible, active seconds, annotations, words), per "
    "training attempt (docs/training.md), per session and survey question answered "
    "(surveys), or per model suggestion with the workers' decisions on it (suggestions, "
    "JSONL only).",
)
@with_appcontext
def export_annotations_command(
    fmt: str,
    output: Path | None,
    document: str | None,
    submitted_only: bool,
    include_removed: bool,
    what: str,
) -> None:
    """Export annotations (or sessions) as JSON lines or CSV (UTF-8 with BOM).

    Ordered by document, session, paragraph and start. CSV starts with FALTE's columns
    (document_id, paragraph_id, span_text, span_start, span_end, error_category,
    paired_text, comment), then the rest.
    """
    flt = ExportFilter(document, submitted_only, include_removed)
    if what == "suggestions" and fmt != "jsonl":
        raise click.BadParameter("suggestions export as JSON lines only", param_hint="--format")
    if (
        document is not None
        and db.session.scalar(select(Document.id).where(Document.external_id == document)) is None
    ):
        raise click.BadParameter(f"no document with id {document!r}", param_hint="--document")
    if output is None:
        write_export(sys.stdout, fmt, what, flt)
        return
    total = count_rows(what, flt)
    with (
        output.open("w", encoding="utf-8", newline="") as out,
        click.progressbar(length=total, label=f"Exporting {what}", file=sys.stderr) as bar,
    ):
        write_export(out, fmt, what, flt, bar.update)
    click.echo(f"Wrote {total} {what} to {output}", err=True)
