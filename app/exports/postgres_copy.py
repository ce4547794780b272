"""The JSONL annotation export written by PostgreSQL itself (COPY): CLI and downloads.

The records are built in SQL (app.exports.record.copy_select, generated from the same
table of fields as the Python forms) and streamed by `COPY ... TO STDOUT`, so no Python
runs per row: a million annotations export at close to PostgreSQL's own dump speed, in
constant memory. COPY's CSV mode with a quote and a delimiter that JSON text never
contains (control characters are \\u-escaped in JSON) passes each line through unchanged
(text mode would double every backslash). Other databases take app.exports.record's
Python path.
It writes JSON lines only (raw text, as every JSONL export): CSV exports always take the
Python path, where app.rules.csv_safety keeps formula-like cells from running in spreadsheets.

psycopg2 hands COPY's output, a row at a time, to a file's write(): an io.BufferedWriter
gathers the rows in C and Python sees them in chunks (_Rows). It does so until the end,
so a download runs the
COPY in a thread of its own that passes chunks through a short queue to the response:
the queue's bound keeps memory flat when the client reads slower than PostgreSQL writes,
and a client that goes away cancels the statement.
"""

from __future__ import annotations

import codecs
import io
import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any, TextIO

from sqlalchemy import Select

from app.core.extensions import db
from app.exports.record import ExportFilter, copy_select
from app.rules.jsonl import escape_line_breaks_utf8
from app.taxonomy import Taxonomy

CHUNK_BYTES = 64 * 1024  # what a download sends at a time
QUEUE_CHUNKS = 8  # chunks waiting for the client at most: memory stays ~0.5 MB
_DONE = object()


def supported() -> bool:
    """Whether the app's database writes exports by COPY (PostgreSQL)."""
    return db.engine.dialect.name == "postgresql"


def _copy_command(cursor: Any, query: Select) -> str:
    # Every value is a bound parameter, quoted by the driver (mogrify): COPY takes none. A
    # list bound to IN (the record's `flagged`) is expanded to one parameter per value.
    state = query.compile(dialect=db.engine.dialect).construct_expanded_state()
    sql = cursor.mogrify(state.statement, state.parameters).decode("utf-8")
    return f"COPY ({sql}) TO STDOUT WITH (FORMAT csv, QUOTE E'\\x01', DELIMITER E'\\x02')"


def _export_command(taxonomy: Taxonomy, flt: ExportFilter) -> tuple[Any, str]:
    """The request's DB-API connection and the export's COPY command for it."""
    connection = db.session.connection().connection.dbapi_connection
    with connection.cursor() as cursor:
        return connection, _copy_command(cursor, copy_select(flt, taxonomy))


class _Rows(io.RawIOBase):
    """The file under the io.BufferedWriter that COPY writes to.

    COPY calls write() once a row; the BufferedWriter (C) gathers the rows and hands them
    here about CHUNK_BYTES at a time, so Python runs once a chunk, not once a row. A chunk
    is passed on up to its last whole row (the rest waits for the next chunk), with its
    U+2028, U+2029 and U+0085 escaped as every JSONL writer does (app.rules.jsonl: a scan
    of the bytes, cheaper than PostgreSQL's replace() over every row), to send(chunk)."""

    def __init__(self, send: Callable[[bytes], None]) -> None:
        super().__init__()
        self.send = send
        self.partial = b""

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        size = len(data)
        data = self.partial + bytes(data)
        end = data.rfind(b"\n") + 1
        self.partial = data[end:]
        if end:
            self.send(escape_line_breaks_utf8(data[:end]))
        return size


def _copy(connection: Any, command: str, send: Callable[[bytes], None]) -> None:
    """Run the COPY command on this DB-API connection, its output to send(chunk)."""
    with io.BufferedWriter(_Rows(send), CHUNK_BYTES) as rows, connection.cursor() as cursor:
        cursor.copy_expert(command, rows)


def copy_annotations_jsonl(
    out: TextIO,
    taxonomy: Taxonomy,
    flt: ExportFilter,
    progress: Callable[[int], None] | None = None,
) -> None:
    """Write the JSONL export to an open text file with COPY (PostgreSQL only): to its
    UTF-8 bytes underneath when it has them (a file, stdout), so nothing is decoded."""
    binary = getattr(out, "buffer", None)
    if binary is not None and codecs.lookup(out.encoding).name == "utf-8":
        out.flush()  # what the text layer holds goes first
        write = binary.write
    else:

        def write(chunk: bytes) -> None:
            out.write(chunk.decode("utf-8"))

    def send(chunk: bytes) -> None:
        write(chunk)
        if progress is not None:
            progress(chunk.count(b"\n"))  # a chunk is whole rows, one a line

    connection, command = _export_command(taxonomy, flt)
    _copy(connection, command, send)


class _Handover:
    """Chunks put on a bounded queue for the response; dropped once the client has left."""

    def __init__(self) -> None:
        self.chunks: queue.Queue = queue.Queue(maxsize=QUEUE_CHUNKS)
        self.cancelled = threading.Event()

    def put(self, item: object) -> None:
        """Queue `item`, waiting for room unless the client has left."""
        while not self.cancelled.is_set():
            try:
                self.chunks.put(item, timeout=0.1)
                return
            except queue.Full:
                continue


def stream_annotations_jsonl(taxonomy: Taxonomy, flt: ExportFilter) -> Iterator[bytes]:
    """The JSONL export as byte chunks from COPY (PostgreSQL only), for a streamed response."""
    connection, command = _export_command(taxonomy, flt)
    handover = _Handover()

    def run() -> None:
        try:
            _copy(connection, command, handover.put)
            handover.put(_DONE)
        except Exception as exc:  # handed to the response, which stops with it
            handover.put(exc)

    thread = threading.Thread(target=run, name="export-copy", daemon=True)
    thread.start()
    ended = False
    try:
        while (item := handover.chunks.get()) is not _DONE:
            if isinstance(item, Exception):
                ended = True
                raise item
            yield item
        ended = True
    finally:
        if not ended:  # the client went away before the end: stop PostgreSQL's work
            handover.cancelled.set()
            connection.cancel()
        thread.join()
