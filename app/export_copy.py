"""The JSONL annotation export written by PostgreSQL itself (COPY), for large CLI exports.

Same records, keys and order as app.export.iter_annotation_lines, built in SQL with
json_build_object and streamed by `COPY ... TO STDOUT`, so no Python runs per row: a
million annotations export at close to PostgreSQL's own dump speed, in constant memory.
COPY's CSV mode with a quote and a delimiter that JSON text never contains (control
characters are \\u-escaped in JSON) passes each line through unchanged (text mode would
double every backslash). Used by `flask export-annotations --format jsonl` on PostgreSQL;
other databases, and the streamed HTTP download, use app.export's row-by-row path.
It writes JSON lines only (raw text, as every JSONL export): CSV exports always take the
Python path, where app.csv_safety keeps formula-like cells from running in spreadsheets.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TextIO

from app.extensions import db
from app.taxonomy import Taxonomy

ISO = """'YYYY-MM-DD"T"HH24:MI:SS.US"+00:00"'"""


def _timestamp(column: str) -> str:
    return f"to_char({column} AT TIME ZONE 'UTC', {ISO})"


def _span(paragraph: str, start: str, end: str, text: str) -> str:
    return (
        f"json_build_object('paragraph_id', {paragraph}, 'start', {start}, "
        f"'end', {end}, 'text', {text})"
    )


def copy_sql(
    taxonomy: Taxonomy,
    document: str | None,
    submitted_only: bool,
    include_removed: bool,
) -> tuple[str, list]:
    """The SELECT (with %s parameters) whose rows are the export's JSON lines."""
    removed = (
        f", 'removed_at', CASE WHEN a.deleted_at IS NULL THEN NULL "
        f"ELSE {_timestamp('a.deleted_at')} END"
        if include_removed
        else ""
    )
    categories = ", ".join("(%s, %s, %s)" for _ in taxonomy.categories)
    params: list = [value for c in taxonomy.categories for value in (c.key, c.name, c.type)]
    where = []
    if document is not None:
        where.append("d.external_id = %s")
        params.append(document)
    if submitted_only:
        where.append("s.status = 'submitted'")
    if not include_removed:
        where.append("a.deleted_at IS NULL")
    # Only fixed SQL fragments are formatted in; every value is a %s parameter (mogrify).
    sql = f"""
        SELECT json_build_object(
            'document_id', d.external_id,
            'paragraph_id', a.paragraph_id,
            'category', a.category,
            'category_name', COALESCE(t.name, a.category),
            'category_type', COALESCE(t.type, 'unknown'),
            'span', {_span("a.paragraph_id", "a.span_start", "a.span_end", "a.span_text")},
            'paired_span', CASE WHEN a.paired_paragraph_id IS NULL THEN NULL ELSE
                {_span("a.paired_paragraph_id", "a.paired_start", "a.paired_end", "a.paired_text")}
                END,
            'comment', a.comment,
            'annotator_id', an.platform || ':' || an.external_id,
            'platform', s.platform,
            'session_id', s.id::text,
            'submitted', s.status = 'submitted',
            'created_at', {_timestamp("a.created_at")},
            'taxonomy_version', s.taxonomy_version,
            'origin', a.origin,
            'suggestion_id', sg.external_id{removed})
        FROM annotations a
        JOIN annotation_sessions s ON a.session_id = s.id
        JOIN documents d ON s.document_id = d.id
        JOIN annotators an ON s.annotator_id = an.id
        LEFT JOIN suggestions sg ON sg.id = a.suggestion_id
        LEFT JOIN (VALUES {categories}) AS t(key, name, type) ON t.key = a.category
        {"WHERE " + " AND ".join(where) if where else ""}
        ORDER BY d.external_id, s.id, a.paragraph_id, a.span_start, a.id"""  # noqa: S608
    return sql, params


class _CountingWriter:
    """Passes COPY's chunks to the output and reports the lines written."""

    def __init__(self, out: TextIO, progress: Callable[[int], None] | None) -> None:
        self.out = out
        self.progress = progress

    def write(self, data: str | bytes) -> int:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        self.out.write(text)
        if self.progress is not None:
            self.progress(text.count("\n"))
        return len(data)


def copy_annotations_jsonl(
    out: TextIO,
    taxonomy: Taxonomy,
    *,
    document: str | None = None,
    submitted_only: bool = False,
    include_removed: bool = False,
    progress: Callable[[int], None] | None = None,
) -> bool:
    """Write the JSONL export with COPY; False (nothing written) when not on PostgreSQL."""
    if db.engine.dialect.name != "postgresql":
        return False
    sql, params = copy_sql(taxonomy, document, submitted_only, include_removed)
    connection = db.session.connection().connection.dbapi_connection
    with connection.cursor() as cursor:
        query = cursor.mogrify(sql, params).decode("utf-8")
        cursor.copy_expert(
            f"COPY ({query}) TO STDOUT WITH (FORMAT csv, QUOTE E'\\x01', DELIMITER E'\\x02')",
            _CountingWriter(out, progress),
        )
    return True
