"""The annotations export: the record of app.exports.record, one a line (JSONL) or flat
(CSV), and on PostgreSQL its JSONL written by COPY (app.exports.postgres_copy), by the
command and the downloads alike. Rows come from one joined query read through a
server-side cursor, so the memory an export needs does not grow with the annotations."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, TextIO

from sqlalchemy import func

from app.core.extensions import db
from app.exports import postgres_copy
from app.exports.record import (
    ExportFilter,
    annotation_select,
    filtered,
    flatten_annotation,
    iter_annotation_lines,
    iter_annotation_records,
)
from app.models import Annotation
from app.taxonomy import current_taxonomy


def count_annotations(flt: ExportFilter) -> int:
    """How many records iter_annotation_records will yield (for a progress bar)."""
    return db.session.scalar(filtered(annotation_select(func.count(Annotation.id)), flt)) or 0


def annotation_rows(flt: ExportFilter, fmt: str) -> Iterable[dict[str, Any] | str]:
    """The records as JSON text (JSONL: written key by key, faster than encoding a dict)
    or as flat CSV rows."""
    if fmt == "jsonl":
        return iter_annotation_lines(flt)
    return map(flatten_annotation, iter_annotation_records(flt))


def stream_by_copy(flt: ExportFilter) -> Iterator[bytes]:
    """The JSONL annotations as byte chunks PostgreSQL writes (COPY)."""
    return postgres_copy.stream_annotations_jsonl(current_taxonomy(), flt)


def write_by_copy(out: TextIO, flt: ExportFilter, progress: Callable[[int], None] | None) -> None:
    """The JSONL annotations written to an open file by PostgreSQL (COPY)."""
    postgres_copy.copy_annotations_jsonl(out, current_taxonomy(), flt, progress)
