"""The annotation export record, declared once: the table FIELDS, one line per key.

Every form of the record is generated from that table: the Python dict
(iter_annotation_records, annotation_record), the JSON text written key by key
(iter_annotation_lines: about three times faster than json.dumps on a dict), the row
whose `row_to_json` PostgreSQL writes for COPY (copy_select, run by
app.exports.postgres_copy) and the flat CSV row (flatten_annotation). Keys and order are a contract
(docs/contracts.md#annotation-export-records); tests/integration/test_export.py checks that
the forms agree on both databases.

`session_id` is the session's database id, not its token: the token is a capability that
lets its holder work in the session, and exports get shared.

`flagged` says the worker is left out of the study's figures (app.crowd.checks.flagged: failed
checks, failed training, or flagged by their attention checks): the export keeps every
annotation and marks theirs. Which workers that is is computed once per export
(`flagged_params`) and bound into the query as a list of annotator ids. `decoy` likewise
marks the annotations made from a decoy suggestion (`import-suggestions --decoy`), which
no figure or round counts.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from json.encoder import encode_basestring as _quote  # C-accelerated
from operator import itemgetter
from typing import Any

from sqlalchemy import (
    Select,
    String,
    bindparam,
    case,
    cast,
    false,
    func,
    literal,
    null,
    select,
    true,
)
from sqlalchemy.dialects.postgresql import JSONB

from app.core.extensions import db
from app.crowd.checks.flagged import left_out_workers
from app.crowd.settings import study_settings
from app.models import UNIT_ID, Annotation, AnnotationSession, Annotator, Document, Suggestion
from app.rules.jsonl import escape_line_breaks
from app.rules.statuses import SessionStatus
from app.studies import current_study_id
from app.taxonomy import Taxonomy, current_taxonomy

BATCH = 1000
# Category key -> (name, type); category_lookup falls back to (key, "unknown").
Categories = Callable[[str | None], tuple[str | None, str | None]]
# The SQL text of timestamps: always in UTC with microseconds, as iso_text writes them.
ISO = 'YYYY-MM-DD"T"HH24:MI:SS.US"+00:00"'


@dataclass(frozen=True)
class Format:
    """How a field's column value becomes a Python value, JSON text and a SQL json value.

    `python` and `json` take the value read from the field's column (a tuple when the field
    reads several), and the category lookup as `categories=` when `categorised`; `sql`
    takes the column(s) and the taxonomy.
    """

    python: Callable[..., Any]
    json: Callable[..., str]
    sql: Callable[[Any, Taxonomy], Any] = lambda column, taxonomy: column
    categorised: bool = False

    def bind(self, categories: Categories) -> tuple[Callable[[Any], Any], Callable[[Any], str]]:
        """The Python and JSON converters of one value, given the category lookup."""
        if not self.categorised:
            return self.python, self.json
        return partial(self.python, categories=categories), partial(
            self.json, categories=categories
        )


def iso_text(value: datetime | None) -> str | None:
    """A moment as every export writes it: ISO-8601 with microseconds, in UTC (the columns'
    type, app.models.UTCDateTime, reads them so); None stays None."""
    return None if value is None else value.isoformat(timespec="microseconds")


def _text_json(value: str | None) -> str:
    return "null" if value is None else _quote(value)


def _span_python(value: tuple) -> dict[str, Any] | None:
    paragraph, start, end, text = value
    if paragraph is None:
        return None
    return {"paragraph_id": paragraph, "start": start, "end": end, "text": text}


def _span_json(value: tuple) -> str:
    paragraph, start, end, text = value
    if paragraph is None:
        return "null"
    return (
        f'{{"paragraph_id": {paragraph}, "start": {start}, "end": {end}, "text": {_quote(text)}}}'
    )


def _span_sql(columns: tuple, taxonomy: Taxonomy) -> Any:
    paragraph, start, end, text = columns
    span = func.json_build_object(
        "paragraph_id", paragraph, "start", start, "end", end, "text", text
    )
    return case((paragraph.is_(None), null()), else_=span)


def _category_sql(part: int, fallback: Callable[[Any], Any]) -> Callable[[Any, Taxonomy], Any]:
    # The taxonomy's categories travel as one jsonb constant: PostgreSQL looks each key up
    # in it (a retired key finds nothing and falls back), whatever the number of categories.
    def sql(column: Any, taxonomy: Taxonomy) -> Any:
        table = {c.key: (c.name, c.type)[part] for c in taxonomy.categories}
        found = cast(literal(json.dumps(table)), JSONB).op("->>", return_type=String)(column)
        return func.coalesce(found, fallback(column))

    return sql


def _same(value: Any) -> Any:
    return value


TEXT = Format(_same, _text_json)
INT = Format(_same, str)
BOOL = Format(
    bool,
    lambda value: "true" if value else "false",
)
TIMESTAMP = Format(
    iso_text,
    lambda value: _text_json(iso_text(value)),
    lambda column, taxonomy: func.to_char(func.timezone("UTC", column), ISO),
)
SPAN = Format(_span_python, _span_json, _span_sql)  # null when its paragraph is
# A row without a category (an imported error that had no label) has null name and type.
CATEGORY_NAME = Format(
    lambda key, categories: categories(key)[0],
    lambda key, categories: _text_json(categories(key)[0]),
    _category_sql(0, lambda column: column),
    categorised=True,
)
CATEGORY_TYPE = Format(
    lambda key, categories: categories(key)[1],
    lambda key, categories: _text_json(categories(key)[1]),
    _category_sql(1, lambda column: case((column.is_(None), null()), else_=literal("unknown"))),
    categorised=True,
)


@dataclass(frozen=True)
class Field:
    """One key of the record: the column(s) it reads, its format, its CSV column(s).

    `csv` maps CSV column -> the part of the value it holds (None: the value itself);
    by default one column named as the key.
    """

    key: str
    column: Any
    format: Format = TEXT
    csv: dict[str, str | None] = field(default_factory=dict)

    @property
    def columns(self) -> tuple:
        """The SQL columns the field reads, in the order its format takes them."""
        return self.column if isinstance(self.column, tuple) else (self.column,)

    @property
    def csv_columns(self) -> dict[str, str | None]:
        """CSV column -> part of the value (None: the value itself)."""
        return self.csv or {self.key: None}


ANNOTATOR_ID = Annotator.platform + ":" + Annotator.external_id  # Annotator.label, in SQL
# True for the annotations of workers left out of the figures; the ids: flagged_params().
FLAGGED = AnnotationSession.annotator_id.in_(bindparam("flagged_annotators", expanding=True))
# True for an annotation made (Accept or Edit) from a decoy suggestion; false otherwise.
DECOY = func.coalesce(Suggestion.decoy, false())

# The export record, in key order. To add a field, add one line here (where its key goes):
#     Field("severity", Annotation.severity),                      # text or null
#     Field("suggestion_id", Suggestion.external_id),              # another table: join it
#     Field("decided_at", Annotation.decided_at, TIMESTAMP),       # INT, BOOL, TIMESTAMP...
# key, the column it reads and its format (default TEXT; a new kind of value is a new
# Format with its Python, JSON and SQL forms). The column's table must be joined in
# annotation_select (annotations, annotation_sessions, documents, annotators and
# suggestions are; an optional one is an outer join). The dict, the JSON
# writer, COPY's row_to_json and the CSV (one column named as the key, after FALTE's)
# follow by themselves; records made outside the database (app.adjudication.gold) get
# null unless they pass a value.
# Then add it to the record's table in docs/contracts.md#annotation-export-records;
# test_the_forms_of_the_record_agree checks the rest.
FIELDS: tuple[Field, ...] = (
    Field("document_id", Document.external_id),
    Field("paragraph_id", Annotation.paragraph_id, INT),
    Field("category", Annotation.category, csv={"error_category": None}),
    Field("category_name", Annotation.category, CATEGORY_NAME),
    Field("category_type", Annotation.category, CATEGORY_TYPE),
    Field(
        "span",
        (Annotation.paragraph_id, Annotation.span_start, Annotation.span_end, Annotation.span_text),
        SPAN,
        csv={"span_text": "text", "span_start": "start", "span_end": "end"},
    ),
    Field(
        "paired_span",
        (
            Annotation.paired_paragraph_id,
            Annotation.paired_start,
            Annotation.paired_end,
            Annotation.paired_text,
        ),
        SPAN,
        csv={
            "paired_text": "text",
            "paired_paragraph_id": "paragraph_id",
            "paired_start": "start",
            "paired_end": "end",
        },
    ),
    Field("comment", Annotation.comment),
    Field("severity", Annotation.severity),  # null when the taxonomy has no severities
    Field("annotator_id", ANNOTATOR_ID),
    Field("platform", AnnotationSession.platform),
    Field("session_id", cast(AnnotationSession.id, String)),
    # Issue 28: the error unit (rows of one span with several labels share it; app.rules.metrics).
    Field("unit_id", UNIT_ID, INT),
    Field("submitted", AnnotationSession.status == SessionStatus.SUBMITTED, BOOL),
    Field("created_at", Annotation.created_at, TIMESTAMP),
    Field("taxonomy_version", AnnotationSession.taxonomy_version),
    # Issue 18: worker | suggestion-accepted | suggestion-edited, and the suggestion's id.
    Field("origin", Annotation.origin),
    Field("suggestion_id", Suggestion.external_id),
    # Issue 28: the worker is left out of the study's figures (app.crowd.checks.flagged).
    Field("flagged", FLAGGED, BOOL),
    # Issue 32: made from a decoy suggestion (left out of every figure and round).
    Field("decoy", DECOY, BOOL),
)
# Only with --include-removed / include_removed=1: when the worker removed the annotation.
REMOVED_AT = Field("removed_at", Annotation.deleted_at, TIMESTAMP)

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


@dataclass(frozen=True)
class ExportFilter:
    """Which rows an export covers: one document's, submitted sessions' only, removed
    annotations too, and (the study report) the workers its figures leave out too."""

    document: str | None = None
    submitted_only: bool = False
    include_removed: bool = False
    include_flagged: bool = False

    @property
    def fields(self) -> tuple[Field, ...]:
        """The record's fields under this filter."""
        return (*FIELDS, REMOVED_AT) if self.include_removed else FIELDS


def _csv_columns(fields: tuple[Field, ...]) -> tuple[str, ...]:
    """FALTE's columns first, then every other field's, in table order."""
    rest = [c for f in fields for c in f.csv_columns if c not in FALTE_COLUMNS]
    return (*FALTE_COLUMNS, *rest)


ANNOTATION_CSV_COLUMNS = _csv_columns(FIELDS)


def annotation_csv_columns(flt: ExportFilter) -> tuple[str, ...]:
    """CSV header: FALTE's columns first, then the rest flattened."""
    return _csv_columns(flt.fields)


def flatten_annotation(record: dict[str, Any]) -> dict[str, Any]:
    """One export record as a flat CSV row."""
    row: dict[str, Any] = {}
    for f in (*FIELDS, REMOVED_AT):
        if f.key not in record:
            continue
        value = record[f.key]
        for column, part in f.csv_columns.items():
            row[column] = value if part is None else (value or {}).get(part)
    return row


def annotation_select(*columns: Any) -> Select:
    """SELECT columns FROM the current study's annotations (app.studies) with their
    session, document and annotator joined, and the suggestion it was made from (outer)."""
    return (
        select(*columns)
        .join_from(Annotation, AnnotationSession, Annotation.session_id == AnnotationSession.id)
        .join(Document, AnnotationSession.document_id == Document.id)
        .join(Annotator, AnnotationSession.annotator_id == Annotator.id)
        .outerjoin(Suggestion, Annotation.suggestion_id == Suggestion.id)
        .where(AnnotationSession.study_id == current_study_id())
    )


def filtered(query: Select, flt: ExportFilter) -> Select:
    """The query narrowed to the annotations an export covers."""
    if flt.document is not None:
        query = query.where(Document.external_id == flt.document)
    if flt.submitted_only:
        query = query.where(AnnotationSession.status == SessionStatus.SUBMITTED)
    if not flt.include_removed:
        query = query.where(Annotation.deleted_at.is_(None))
    return query


def _ordered(query: Select) -> Select:
    return query.order_by(
        Document.external_id,
        AnnotationSession.id,
        Annotation.paragraph_id,
        Annotation.span_start,
        Annotation.id,
    )


def flagged_params() -> dict[str, list[int]]:
    """The values the record's `flagged` field binds: the annotator ids of the workers
    left out (app.crowd.checks.flagged), computed once for a whole export."""
    return {"flagged_annotators": sorted(left_out_workers(study_settings()))}


def copy_select(flt: ExportFilter, taxonomy: Taxonomy) -> Select:
    """The export as one JSON text a row, built by PostgreSQL (for COPY).

    The fields are the columns of a LATERAL subquery named after their keys, and
    `row_to_json` writes that row: PostgreSQL pulls the subquery up, so each row's record
    is built in the parallel workers before the sort, and row_to_json takes its keys and
    their order from the row's type once, where json_build_object handled every key as
    an argument of every row (a quarter less time for the whole query at 200,000 rows:
    bench/README.md, export_bench). U+2028, U+2029 and U+0085 stay raw, as JSON allows:
    the COPY writer escapes them in its chunks (app.exports.postgres_copy)."""
    record = select(*(f.format.sql(f.column, taxonomy).label(f.key) for f in flt.fields))
    # Every column is the joined row's: the subquery has no FROM of its own.
    fields = record.correlate_except(None).lateral("record")
    line = cast(func.row_to_json(fields.table_valued()), String)
    query = annotation_select(line).join(fields, true())
    return _ordered(filtered(query, flt)).params(**flagged_params())


def _rows(flt: ExportFilter) -> Iterator[tuple]:
    """The fields' column values in export order, BATCH rows at a time (server-side cursor)."""
    query = _ordered(filtered(annotation_select(*(c for f in flt.fields for c in f.columns)), flt))
    query = query.params(**flagged_params())
    # A Core connection, not the ORM session: plain tuples, no ORM row bookkeeping.
    result = db.session.connection().execute(
        query.execution_options(yield_per=BATCH, stream_results=True)
    )
    try:
        yield from result
    finally:
        result.close()


def _readers(fields: tuple[Field, ...]) -> list[tuple[Field, Callable[[tuple], Any]]]:
    """Each field with what takes its value out of a row of _rows (a tuple for several)."""
    readers, at = [], 0
    for f in fields:
        width = len(f.columns)
        readers.append((f, itemgetter(*range(at, at + width)) if width > 1 else itemgetter(at)))
        at += width
    return readers


def iter_annotation_records(
    flt: ExportFilter | None = None, taxonomy: Taxonomy | None = None
) -> Iterator[dict[str, Any]]:
    """Yield one export record (a dict) per annotation, streamed from a server-side cursor."""
    flt = flt or ExportFilter()
    categories = category_lookup(taxonomy)
    plan = [(f.key, read, f.format.bind(categories)[0]) for f, read in _readers(flt.fields)]
    for row in _rows(flt):
        yield {key: python(read(row)) for key, read, python in plan}


def iter_annotation_lines(
    flt: ExportFilter | None = None, taxonomy: Taxonomy | None = None
) -> Iterator[str]:
    """The same records as iter_annotation_records, as JSON text (one line each, no newline)."""
    flt = flt or ExportFilter()
    categories = category_lookup(taxonomy)
    plan = [
        (f"{_quote(f.key)}: ", read, f.format.bind(categories)[1])
        for f, read in _readers(flt.fields)
    ]
    for row in _rows(flt):
        line = "{" + ", ".join([key + encode(read(row)) for key, read, encode in plan]) + "}"
        yield escape_line_breaks(line)


def annotation_record(categories: Categories, **values: Any) -> dict[str, Any]:
    """An export record from column values by key (a span as (paragraph_id, start, end, text)).

    For records made outside the database (app.adjudication's gold). A field not given
    takes its column's value from a field given that reads it too (paragraph_id from span,
    category_name and category_type from category); any other field not given is null.
    """
    unknown = set(values) - {f.key for f in FIELDS}
    if unknown:
        raise TypeError(f"not export fields: {', '.join(sorted(unknown))}")
    record = {}
    for f in FIELDS:
        value = values[f.key] if f.key in values else _shared(f, values)
        if value is None and len(f.columns) > 1:
            value = (None,) * len(f.columns)
        record[f.key] = f.format.bind(categories)[0](value)
    return record


def _shared(wanted: Field, values: dict[str, Any]) -> Any:
    """The value of `wanted`'s column in a given field that reads it too, else None."""
    for f in FIELDS:
        value = values.get(f.key)
        if value is None or isinstance(wanted.column, tuple):
            continue
        parts = value if len(f.columns) > 1 else (value,)
        for column, part in zip(f.columns, parts, strict=True):
            if column is wanted.column:
                return part
    return None


def category_lookup(taxonomy: Taxonomy | None = None) -> Categories:
    """Category key -> (name, type) in `taxonomy` (default: the app's), cached per key;
    (key, "unknown") for a key the taxonomy no longer has; (None, None) for no category."""
    taxonomy = taxonomy or current_taxonomy()
    cache: dict[str | None, tuple[str | None, str | None]] = {None: (None, None)}

    def lookup(key: str | None) -> tuple[str | None, str | None]:
        found = cache.get(key)
        if found is None:
            category = taxonomy.category(key)
            found = cache[key] = (category.name, category.type) if category else (key, "unknown")
        return found

    return lookup
