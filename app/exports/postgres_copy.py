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

psycopg2 hands COPY's output to a file's write() until the end, so a download runs the
COPY in a thread of its own that passes chunks through a short queue to the response:
the queue's bound keeps memory flat when the client reads slower than PostgreSQL writes,
and a client that goes away cancels the statement.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any, TextIO

from sqlalchemy import Select

from app.core.extensions import db
from app.exports.record import ExportFilter, copy_select
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


def _dbapi_connection() -> Any:
    return db.session.connection().connection.dbapi_connection


class _Chunks:
    """The file COPY writes to: it calls write() once a row, so rows are gathered here and
    passed on (flush) about CHUNK_BYTES at a time, keeping Python's work per row small."""

    def __init__(self) -> None:
        self.pending: list[bytes] = []
        self.size = 0

    def write(self, data: bytes) -> int:
        self.pending.append(data)
        self.size += len(data)
        if self.size >= CHUNK_BYTES:
            self.flush()
        return len(data)

    def flush(self) -> None:
        if self.pending:
            self.send(b"".join(self.pending), len(self.pending))
            self.pending, self.size = [], 0

    def send(self, chunk: bytes, rows: int) -> None:
        raise NotImplementedError


class _FileChunks(_Chunks):
    """Chunks written to a text file, with progress(rows) after each."""

    def __init__(self, out: TextIO, progress: Callable[[int], None] | None) -> None:
        super().__init__()
        self.out = out
        self.progress = progress

    def send(self, chunk: bytes, rows: int) -> None:
        self.out.write(chunk.decode("utf-8"))
        if self.progress is not None:
            self.progress(rows)


def copy_annotations_jsonl(
    out: TextIO,
    taxonomy: Taxonomy,
    flt: ExportFilter,
    progress: Callable[[int], None] | None = None,
) -> None:
    """Write the JSONL export to an open text file with COPY (PostgreSQL only)."""
    writer = _FileChunks(out, progress)
    with _dbapi_connection().cursor() as cursor:
        cursor.copy_expert(_copy_command(cursor, copy_select(flt, taxonomy)), writer)
    writer.flush()


class _QueueChunks(_Chunks):
    """Chunks put on a bounded queue for the response; dropped once the client has left."""

    def __init__(self, chunks: queue.Queue) -> None:
        super().__init__()
        self.chunks = chunks
        self.cancelled = threading.Event()

    def write(self, data: bytes) -> int:
        if self.cancelled.is_set():  # the client left: drop the rest until the cancel lands
            return len(data)
        return super().write(data)

    def send(self, chunk: bytes, rows: int) -> None:
        self.put(chunk)

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
    connection = _dbapi_connection()
    with connection.cursor() as cursor:
        command = _copy_command(cursor, copy_select(flt, taxonomy))
    chunks: queue.Queue = queue.Queue(maxsize=QUEUE_CHUNKS)
    writer = _QueueChunks(chunks)

    def run() -> None:
        try:
            with connection.cursor() as cursor:
                cursor.copy_expert(command, writer)
            writer.flush()
            writer.put(_DONE)
        except Exception as exc:  # handed to the response, which stops with it
            writer.put(exc)

    thread = threading.Thread(target=run, name="export-copy", daemon=True)
    thread.start()
    ended = False
    try:
        while (item := chunks.get()) is not _DONE:
            if isinstance(item, Exception):
                ended = True
                raise item
            yield item
        ended = True
    finally:
        if not ended:  # the client went away before the end: stop PostgreSQL's work
            writer.cancelled.set()
            connection.cancel()
        thread.join()
