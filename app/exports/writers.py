"""How an export is written: CSV and JSON Lines in chunks, and the two kinds of export the
table of exports holds (app/research/downloads.py: `EXPORTS`).

An `Export` is rows (records for JSONL, flat rows for CSV), how many there are, its CSV
columns and the formats it comes in; a `Report` is one document (the study report) in
each of its formats. Both stream as text chunks to a download and write to a file for a
command.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any, TextIO

from app.exports import postgres_copy
from app.exports.record import BATCH, ExportFilter
from app.rules.csv_safety import safe_cell
from app.rules.jsonl import escape_line_breaks

BOM = "\ufeff"  # spreadsheets (Excel) need it to read the file as UTF-8
Progress = Callable[[int], None]


def _csv_value(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    # Text from documents, workers and URL parameters never reaches a spreadsheet as a
    # formula (app.rules.csv_safety).
    return "" if value is None else safe_cell(value)


def iter_csv(
    rows: Iterable[dict[str, Any]], columns: Sequence[str], bom: bool = True
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
    """JSON lines in chunks of BATCH records, U+2028, U+2029 and U+0085 escaped
    (app.rules.jsonl); records already encoded (JSON text, escaped) pass through."""
    encode = _JSON.encode
    lines = (
        record if isinstance(record, str) else escape_line_breaks(encode(record))
        for record in records
    )
    yield from chunked(lines)


def chunked(lines: Iterable[str]) -> Iterator[str]:
    """Lines joined BATCH at a time, each ended by a newline."""
    iterator = iter(lines)
    while chunk := "\n".join(islice(iterator, BATCH)):
        yield chunk + "\n"


def counted(rows: Iterable[Any], progress: Progress) -> Iterator[Any]:
    """The rows as they are, calling progress(n) every BATCH rows and at the end."""
    pending = 0
    for row in rows:
        yield row
        pending += 1
        if pending == BATCH:
            progress(pending)
            pending = 0
    progress(pending)


@dataclass(frozen=True)
class Copy:
    """An export PostgreSQL writes itself (COPY, app.exports.postgres_copy), as JSONL."""

    stream: Callable[[ExportFilter], Iterator[bytes]]
    to_file: Callable[[TextIO, ExportFilter, Progress | None], None]


@dataclass(frozen=True)
class Export:
    """Rows: `rows(flt, fmt)` gives records (JSONL: dicts, or JSON text already escaped)
    or flat rows (CSV) in export order; `count(flt)` how many (None: not counted ahead);
    `columns(flt)` the CSV header; `formats` what it comes in; `command` the command that
    writes it to a file (`flask export-annotations --what NAME` unless it has its own)."""

    rows: Callable[[ExportFilter, str], Iterable[Any]]
    count: Callable[[ExportFilter], int] | None
    columns: Callable[[ExportFilter], Sequence[str]]
    formats: tuple[str, ...] = ("jsonl", "csv")
    command: str = "export-annotations"
    copy: Copy | None = None

    def chunks(
        self, fmt: str, flt: ExportFilter, progress: Progress | None = None
    ) -> Iterable[str] | Iterable[bytes]:
        """The whole export as text chunks; bytes where PostgreSQL writes it (COPY)."""
        if self._copied(fmt) and progress is None:
            return self.copy.stream(flt)  # type: ignore[union-attr]
        rows = self.rows(flt, fmt)
        if progress is not None:
            rows = counted(rows, progress)
        if fmt == "jsonl":
            return iter_jsonl(rows)
        return iter_csv(rows, self.columns(flt))

    def write(
        self, out: TextIO, fmt: str, flt: ExportFilter, progress: Progress | None = None
    ) -> None:
        """Write the export to an open text file, calling progress(rows) as it goes."""
        if self._copied(fmt):
            self.copy.to_file(out, flt, progress)  # type: ignore[union-attr]
            return
        for chunk in self.chunks(fmt, flt, progress):
            out.write(chunk)

    def _copied(self, fmt: str) -> bool:
        return self.copy is not None and fmt == "jsonl" and postgres_copy.supported()


@dataclass(frozen=True)
class Report:
    """One document rather than rows (the study report): `text(fmt, flt)` in each of its
    `formats`; `command` prints it."""

    # an iterable: the document in pieces (text, or a zip's bytes), as written
    text: Callable[[str, ExportFilter], str | bytes | Iterable[str] | Iterable[bytes]]
    formats: tuple[str, ...]
    command: str
    count: None = None

    def chunks(
        self, fmt: str, flt: ExportFilter, progress: Progress | None = None
    ) -> Iterable[str] | Iterable[bytes]:
        """The document: whole, or in the pieces its `text` yields as it writes them."""
        text = self.text(fmt, flt)
        return [text] if isinstance(text, str | bytes) else text  # type: ignore[return-value]
