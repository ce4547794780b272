"""W3C Web Annotation files and brat folders read into the import's plain records.

`import-annotations --format w3c FILE` and `--format brat DIR` (docs/interop.md): the
readers of app.interop (w3c_import, brat_import) give records in the export record's
shape; this module turns them into the ImportedSession / ImportedAnnotation of
app.imports.annotation_formats, so that app.imports.annotation_store stores them as it
stores our own JSONL export: all or nothing, every span checked against the stored text.

Both formats point into documents already imported (a W3C target's source, a brat
``.txt``'s name), so the readers are given the stored documents (`documents`: a mapping
of document id -> paragraphs, read lazily from the database by the store). The
annotator is the record's ``annotator_id``: ``platform:id`` when it starts with a
platform the app knows (our export with ``--keep-ids``), otherwise the whole id under
the platform ``import`` (a pseudonym ``anon-...``, a brat folder ``kim``, a creator IRI);
an Annotation without a creator is the file's (``import:<file name>``), as BooookScore's
files are. Pure: no app, no database.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from app.imports.annotation_formats import ImportedAnnotation, ParsedFile
from app.imports.item_formats import SpanInput
from app.interop.brat_import import load_folder, read_brat_folder
from app.interop.records import InteropError
from app.interop.w3c_import import read_w3c

INTEROP_FORMATS = ("w3c", "brat")
IMPORT_PLATFORM = "import"
ANNOTATOR_MAX_LENGTH = 200  # annotators.external_id
# Platforms an annotator id of our exports starts with (docs/contracts.md, "Annotator ids").
KNOWN_PLATFORMS = ("prolific", "mturk", "direct", "anonymous", "import", "falte", "adjudication")


def annotator_key(annotator_id: str | None, fallback: str) -> tuple[str, str]:
    """(platform, external id) of a record's annotator id (`fallback` names one without)."""
    if not annotator_id:
        return IMPORT_PLATFORM, fallback
    platform, _, rest = annotator_id.partition(":")
    if platform in KNOWN_PLATFORMS and rest:
        return platform, rest
    return IMPORT_PLATFORM, annotator_id


def _span(span: Mapping[str, Any] | None) -> SpanInput | None:
    if span is None:
        return None
    return SpanInput(span["text"], span["paragraph_id"], span["start"], span["end"])


def add_records(
    parsed: ParsedFile, records: Sequence[Mapping[str, Any]], name: str, prefix: str = ""
) -> None:
    """Records of app.interop's readers as sessions of `parsed` (one per annotator and
    document); `prefix` goes before each document id, as --id-prefix does."""
    for record in records:
        annotator = annotator_key(record.get("annotator_id"), name)
        document_id = prefix + record["document_id"]
        where = f"{name}: annotation {record['unit_id']} (document {record['document_id']})"
        if len(annotator[1]) > ANNOTATOR_MAX_LENGTH:
            parsed.problems.append(
                f"{where}: annotator: {annotator[1][:40]!r}... is longer than "
                f"{ANNOTATOR_MAX_LENGTH} characters"
            )
            continue
        session = parsed.session(where, document_id, annotator, annotator[0])
        session.annotations.append(
            ImportedAnnotation(
                where,
                record.get("category"),
                _span(record["span"]),  # type: ignore[arg-type]
                _span(record.get("paired_span")),
                record.get("comment"),
                severity=record.get("severity"),
                unit=("interop", record["unit_id"]),
                created_at=record.get("created_at"),
            )
        )


def read_interop(
    path: Path, fmt: str, documents: Mapping[str, Sequence[str]], prefix: str = ""
) -> ParsedFile:
    """A W3C file or a brat folder as a ParsedFile; every problem is collected in it."""
    parsed = ParsedFile()
    try:
        if fmt == "w3c":
            if path.is_dir():
                parsed.problems.append(f"{path.name}: a W3C import reads a file, not a folder")
                return parsed
            text = path.read_bytes().decode("utf-8-sig")
            read = read_w3c(text, documents, name=path.name)
        else:
            if not path.is_dir():
                parsed.problems.append(
                    f"{path.name}: a brat import reads a folder (<annotator>/<document>.ann "
                    "with its .txt), not a file"
                )
                return parsed
            files = load_folder(path)
            if not any(name.endswith(".ann") for name in files):
                parsed.problems.append(f"{path.name}: no .ann file in the folder")
                return parsed
            read = read_brat_folder(files, documents, default_annotator=path.name)
    except InteropError as exc:
        parsed.problems += [str(problem) for problem in exc.problems]
        return parsed
    except (OSError, UnicodeDecodeError) as exc:
        parsed.problems.append(f"{path.name}: cannot read it ({exc})")
        return parsed
    parsed.warnings += read.warnings
    add_records(parsed, read.records, path.name, prefix)
    return parsed
