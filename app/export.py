"""Exports of annotations and sessions (JSONL/CSV), streamed: shared by CLI and downloads.

Rows come from one joined query read through a server-side cursor (`yield_per`), so the
memory an export needs does not grow with the number of annotations. Record keys are a
contract (DESIGN.md "Formats"). `session_id` is the session's database id, not its token:
the token is a capability that lets its holder work in the session, and exports get shared.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import islice
from json.encoder import encode_basestring as _quote  # C-accelerated
from pathlib import Path
from typing import Any, TextIO

import click
from flask.cli import with_appcontext
from sqlalchemy import Select, func, select

from app.csv_safety import safe_cell
from app.extensions import db
from app.models import Annotation, AnnotationSession, Annotator, Document
from app.paragraph_times import PARAGRAPH_COLUMNS, count_paragraph_rows, iter_paragraph_records
from app.surveys.store import SURVEY_COLUMNS, count_survey_rows, iter_survey_records
from app.taxonomy import Taxonomy, current_taxonomy
from app.training.export import TRAINING_COLUMNS, count_training_rows, iter_training_records

BATCH = 1000
BOM = "\ufeff"  # spreadsheets (Excel) need it to read the file as UTF-8
FALTE_COLUMNS = (
    "document_id",
    "paragraph_id",
    "span_text",
    "span_start",
    "span_end",
    "error_category",
    "paired_text",
    "comment",
)
ANNOTATION_CSV_COLUMNS = (
    *FALTE_COLUMNS,
    "category_name",
    "category_type",
    "paired_paragraph_id",
    "paired_start",
    "paired_end",
    "annotator_id",
    "platform",
    "session_id",
    "submitted",
    "created_at",
    "taxonomy_version",
)
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
)


@dataclass(frozen=True)
class ExportFilter:
    """Which annotations an export covers."""

    document: str | None = None
    submitted_only: bool = False
    include_removed: bool = False


def _annotation_query(flt: ExportFilter) -> Select:
    query = (
        select(
            Document.external_id,
            Annotation.paragraph_id,
            Annotation.span_start,
            Annotation.span_end,
            Annotation.span_text,
            Annotation.category,
            Annotation.paired_paragraph_id,
            Annotation.paired_start,
            Annotation.paired_end,
            Annotation.paired_text,
            Annotation.comment,
            Annotator.platform,
            Annotator.external_id,
            AnnotationSession.platform,
            AnnotationSession.id,
            AnnotationSession.status,
            Annotation.created_at,
            AnnotationSession.taxonomy_version,
            Annotation.deleted_at,
        )
        .join(AnnotationSession, Annotation.session_id == AnnotationSession.id)
        .join(Document, AnnotationSession.document_id == Document.id)
        .join(Annotator, AnnotationSession.annotator_id == Annotator.id)
    )
    return _filtered(query, flt)


def _filtered(query: Select, flt: ExportFilter) -> Select:
    if flt.document is not None:
        query = query.where(Document.external_id == flt.document)
    if flt.submitted_only:
        query = query.where(AnnotationSession.status == "submitted")
    if not flt.include_removed:
        query = query.where(Annotation.deleted_at.is_(None))
    return query


def count_annotations(flt: ExportFilter) -> int:
    """How many records iter_annotation_records will yield (for a progress bar)."""
    query = (
        select(func.count(Annotation.id))
        .join(AnnotationSession, Annotation.session_id == AnnotationSession.id)
        .join(Document, AnnotationSession.document_id == Document.id)
    )
    return db.session.scalar(_filtered(query, flt)) or 0


def _iso(value: datetime | None) -> str | None:
    if value is None:
        return None
    if value.tzinfo is None:  # SQLite hands back naive datetimes; they were stored as UTC
        value = value.replace(tzinfo=UTC)
    # Always with microseconds and in UTC: the same text as the COPY path (app.export_copy).
    return value.astimezone(UTC).isoformat(timespec="microseconds")


class _Categories:
    """Category key -> (name, type), falling back to (key, "unknown") for retired keys."""

    def __init__(self, taxonomy: Taxonomy) -> None:
        self._taxonomy = taxonomy
        self._cache: dict[str, tuple[str, str]] = {}

    def __call__(self, key: str) -> tuple[str, str]:
        found = self._cache.get(key)
        if found is None:
            category = self._taxonomy.category(key)
            found = (category.name, category.type) if category else (key, "unknown")
            self._cache[key] = found
        return found


def _annotation_rows(flt: ExportFilter) -> Iterator[tuple]:
    """The export's rows in order, fetched BATCH at a time from a server-side cursor."""
    query = _annotation_query(flt).order_by(
        Document.external_id,
        AnnotationSession.id,
        Annotation.paragraph_id,
        Annotation.span_start,
        Annotation.id,
    )
    # A Core connection, not the ORM session: plain tuples, no ORM row bookkeeping.
    result = db.session.connection().execute(
        query.execution_options(yield_per=BATCH, stream_results=True)
    )
    try:
        yield from result
    finally:
        result.close()


def annotation_record(
    categories: Callable[[str], tuple[str, str]],
    *,
    document_id: str,
    category: str,
    span: dict[str, Any],
    paired_span: dict[str, Any] | None,
    comment: str | None,
    annotator_id: str,
    platform: str,
    session_id: str,
    submitted: bool,
    created_at: datetime | None,
    taxonomy_version: str,
) -> dict[str, Any]:
    """One DESIGN.md export record (also the base of app.adjudication's gold records)."""
    name, kind = categories(category)
    return {
        "document_id": document_id,
        "paragraph_id": span["paragraph_id"],
        "category": category,
        "category_name": name,
        "category_type": kind,
        "span": span,
        "paired_span": paired_span,
        "comment": comment,
        "annotator_id": annotator_id,
        "platform": platform,
        "session_id": session_id,
        "submitted": submitted,
        "created_at": _iso(created_at),
        "taxonomy_version": taxonomy_version,
    }


def iter_annotation_records(
    flt: ExportFilter | None = None, taxonomy: Taxonomy | None = None
) -> Iterator[dict[str, Any]]:
    """Yield one DESIGN.md export record per annotation, streamed from a server-side cursor."""
    flt = flt or ExportFilter()
    categories = _Categories(taxonomy or current_taxonomy())
    for row in _annotation_rows(flt):
        (doc, par, start, end, text, cat, p_par, p_start, p_end, p_text, comment) = row[:11]
        (a_platform, a_id, platform, session_id, status, created, version, deleted) = row[11:]
        record = annotation_record(
            categories,
            document_id=doc,
            category=cat,
            span={"paragraph_id": par, "start": start, "end": end, "text": text},
            paired_span=None
            if p_par is None
            else {"paragraph_id": p_par, "start": p_start, "end": p_end, "text": p_text},
            comment=comment,
            annotator_id=f"{a_platform}:{a_id}",
            platform=platform,
            session_id=str(session_id),
            submitted=status == "submitted",
            created_at=created,
            taxonomy_version=version,
        )
        if flt.include_removed:
            record["removed_at"] = _iso(deleted)
        yield record


def _q(value: str | None) -> str:
    return "null" if value is None else _quote(value)


def iter_annotation_lines(
    flt: ExportFilter | None = None, taxonomy: Taxonomy | None = None
) -> Iterator[str]:
    """The same records as iter_annotation_records, as JSON text (one line each, no newline).

    Written out key by key: the keys and types are fixed, and this is about three times
    faster than json.dumps on a dict, which matters for million-row exports.
    """
    flt = flt or ExportFilter()
    categories = _Categories(taxonomy or current_taxonomy())
    names: dict[str, str] = {}
    for row in _annotation_rows(flt):
        (doc, par, start, end, text, cat, p_par, p_start, p_end, p_text, comment) = row[:11]
        (a_platform, a_id, platform, session_id, status, created, version, deleted) = row[11:]
        category = names.get(cat)
        if category is None:
            name, kind = categories(cat)
            category = names[cat] = (
                f'"category": {_quote(cat)}, "category_name": {_quote(name)}, '
                f'"category_type": {_quote(kind)}'
            )
        paired = (
            "null"
            if p_par is None
            else f'{{"paragraph_id": {p_par}, "start": {p_start}, "end": {p_end}, '
            f'"text": {_quote(p_text)}}}'
        )
        line = (
            f'{{"document_id": {_quote(doc)}, "paragraph_id": {par}, {category}, '
            f'"span": {{"paragraph_id": {par}, "start": {start}, "end": {end}, '
            f'"text": {_quote(text)}}}, "paired_span": {paired}, "comment": {_q(comment)}, '
            f'"annotator_id": {_quote(f"{a_platform}:{a_id}")}, "platform": {_quote(platform)}, '
            f'"session_id": "{session_id}", '
            f'"submitted": {"true" if status == "submitted" else "false"}, '
            f'"created_at": {_q(_iso(created))}, "taxonomy_version": {_quote(version)}'
        )
        if flt.include_removed:
            line += f', "removed_at": {_q(_iso(deleted))}'
        yield line + "}"


def annotation_csv_columns(flt: ExportFilter) -> tuple[str, ...]:
    """CSV header: FALTE's columns first, then the rest flattened."""
    return (
        (*ANNOTATION_CSV_COLUMNS, "removed_at") if flt.include_removed else ANNOTATION_CSV_COLUMNS
    )


def flatten_annotation(record: dict[str, Any]) -> dict[str, Any]:
    """One export record as a flat CSV row."""
    span, paired = record["span"], record["paired_span"] or {}
    row = {
        "document_id": record["document_id"],
        "paragraph_id": record["paragraph_id"],
        "span_text": span["text"],
        "span_start": span["start"],
        "span_end": span["end"],
        "error_category": record["category"],
        "paired_text": paired.get("text"),
        "comment": record["comment"],
        "category_name": record["category_name"],
        "category_type": record["category_type"],
        "paired_paragraph_id": paired.get("paragraph_id"),
        "paired_start": paired.get("start"),
        "paired_end": paired.get("end"),
        "annotator_id": record["annotator_id"],
        "platform": record["platform"],
        "session_id": record["session_id"],
        "submitted": "true" if record["submitted"] else "false",
        "created_at": record["created_at"],
        "taxonomy_version": record["taxonomy_version"],
    }
    if "removed_at" in record:
        row["removed_at"] = record["removed_at"]
    return row


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
            "started_at": _iso(session.started_at),
            "last_seen_at": _iso(session.last_seen_at),
            "submitted_at": _iso(session.submitted_at),
            # A code is earned at Submit: one listed earlier could pay unfinished work.
            "completion_code": session.completion_code if session.status == "submitted" else None,
            "furthest_paragraph": session.furthest,
            "annotations": count,
            "is_attention_check": session.is_attention_check,
        }
        db.session.expunge(session)  # keep the identity map from growing with the export


def _csv_value(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    # Text from documents, workers and URL parameters never reaches a spreadsheet as a
    # formula (app.csv_safety).
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
    """JSON lines in chunks of BATCH records (records already encoded pass through)."""
    encode = _JSON.encode
    lines = (record if isinstance(record, str) else encode(record) for record in records)
    yield from _chunked(lines)


def _chunked(lines: Iterable[str]) -> Iterator[str]:
    iterator = iter(lines)
    while chunk := "\n".join(islice(iterator, BATCH)):
        yield chunk + "\n"


def export_chunks(
    fmt: str, what: str, flt: ExportFilter, progress: Callable[[int], None] | None = None
) -> Iterator[str]:
    """The whole export as text chunks: fmt jsonl|csv, what annotations|sessions|paragraphs|
    training|surveys."""
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
    if fmt == "jsonl" and what == "annotations":
        from app.export_copy import copy_annotations_jsonl

        done = copy_annotations_jsonl(
            out,
            current_taxonomy(),
            document=flt.document,
            submitted_only=flt.submitted_only,
            include_removed=flt.include_removed,
            progress=progress,
        )
        if done:  # PostgreSQL wrote the lines itself
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
    type=click.Choice(["annotations", "sessions", "paragraphs", "training", "surveys"]),
    default="annotations",
    show_default=True,
    help="One row per annotation, per session (status and counts), per session and "
    "paragraph reached (seconds visible, active seconds, annotations, words), per "
    "training attempt (docs/training.md), or per session and survey question answered "
    "(surveys).",
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
