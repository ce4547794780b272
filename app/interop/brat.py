"""brat standoff: export records -> a folder per annotator of ``.txt`` + ``.ann`` files.

Standard: the brat rapid annotation tool's standoff format
(https://brat.nlplab.org/standoff.html) and configuration file
(https://brat.nlplab.org/configuration.html); where the pages are silent, brat's own
reader and writer (``server/src/annotation.py``, ``annotator.py``) decide. INCEpTION
reads and writes the same files.

``export-annotations --format brat --output DIR`` writes (`iter_folder`, a file at a time;
`export_folder` as a dict), for each
annotator (a folder named by the id, pseudonymised unless kept, percent-encoded to a
safe file name) and each document they annotated:

- ``<document>.txt``: the paragraphs joined by a blank line (app.interop.anchoring), no
  final newline; brat offsets count its characters (code points), end exclusive.
- ``<document>.ann``, one line per item, tab-separated as brat writes them:
  ``T1<TAB>category-key START END<TAB>text`` per span (the paired span of a pair too);
  ``R1<TAB>category-key Arg1:T1 Arg2:T2`` for a paired error, the later span (the error)
  as Arg1 and the earlier one it relates to as Arg2; ``A1<TAB>Severity T1 major``;
  ``#1<TAB>AnnotatorNotes T1<TAB>comment`` (a line break in a comment is written ``\\n``
  and a backslash ``\\\\``: a note is one line). A span without a label has the type
  ``Unlabelled``. Rows of one error unit (several labels on one span) are one ``T``
  each, with the same offsets, severity and note.
- A span that runs over a line break inside a paragraph is written as brat writes such a
  selection: fragments split at the line break (``10 15;16 24``, the text joined by a
  space); the reader joins fragments separated only by a line break back into one span.
- ``annotation.conf`` in each folder, from the taxonomy (`annotation_conf`): the category
  keys as entities, a relation per paired category, ``Severity`` as an attribute with
  the taxonomy's severity keys, and overlaps allowed (errors overlap).

The reverse, folders made by this export, by brat or by INCEpTION, is
app.interop.brat_import.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import quote, unquote

from app.interop.anchoring import PARAGRAPH_SEPARATOR, DocumentText
from app.interop.records import InteropError, Problem

UNLABELLED = "Unlabelled"  # capitalised: never a category key ([a-z0-9-])
SEVERITY = "Severity"
NOTES = "AnnotatorNotes"
FRAGMENT_SEPARATOR = " "  # brat's DISCONT_SEP: how the text of fragments is joined
CONF_NAME = "annotation.conf"

Pseudonymise = Callable[[str | None], str | None]


# --- file names --------------------------------------------------------------------------


def file_name(name: str) -> str:
    """A file or folder name for an id: percent-encoded but letters, digits and ``-._~``
    (no separator, no hidden or parent folder)."""
    encoded = quote(name, safe="")
    return "%2E" + encoded[1:] if encoded.startswith(".") else encoded


def name_of_file(stem: str) -> str:
    """The id a file_name stands for."""
    return unquote(stem)


# --- notes -------------------------------------------------------------------------------


def escape_note(text: str) -> str:
    """A comment on one line: backslash, CR and LF written as \\\\, \\r and \\n."""
    return text.replace("\\", "\\\\").replace("\r", "\\r").replace("\n", "\\n")


def unescape_note(text: str) -> str:
    """escape_note undone (a backslash before any other character stays as it is)."""
    out, index = [], 0
    while index < len(text):
        char = text[index]
        following = text[index + 1 : index + 2]
        if char == "\\" and following in ("\\", "n", "r"):
            out.append({"\\": "\\", "n": "\n", "r": "\r"}[following])
            index += 2
        else:
            out.append(char)
            index += 1
    return "".join(out)


# --- writing -----------------------------------------------------------------------------


def brat_text(paragraphs: Sequence[str]) -> str:
    """The .txt of a document: its paragraphs joined by a blank line."""
    return PARAGRAPH_SEPARATOR.join(paragraphs)


def fragments(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """[start, end) of `text` split at line breaks as brat splits a selection: pieces
    trimmed of the white space next to each break. A span that begins or ends at a break
    keeps a zero-width fragment there, so that the first start and the last end are the
    span's own."""
    pieces, at = [], start
    for piece in text[start:end].split("\n"):
        left, right = at, at + len(piece)
        at = right + 1
        if left != start:
            left += len(piece) - len(piece.lstrip())
        if right != end:
            right -= len(piece) - len(piece.rstrip())
        if left < right:
            pieces.append((left, right))
    if not pieces or pieces[0][0] != start:
        pieces.insert(0, (start, start))
    if pieces[-1][1] != end:
        pieces.append((end, end))
    return pieces


def _text_bound(
    identifier: str, kind: str, span: Mapping[str, Any], text: DocumentText, where: str
) -> str:
    try:
        start, end = text.span_offsets(span)
    except ValueError as exc:
        raise InteropError([Problem(where, "span.text", str(exc))]) from None
    pieces = fragments(text.text, start, end)
    offsets = ";".join(f"{a} {b}" for a, b in pieces)
    shown = FRAGMENT_SEPARATOR.join(text.text[a:b] for a, b in pieces)
    return f"{identifier}\t{kind} {offsets}\t{shown}"


def brat_ann(
    records: Iterable[Mapping[str, Any]], paragraphs: Sequence[str], where: str = "document"
) -> str:
    """The .ann of one annotator's records on one document (ids numbered from 1)."""
    text = DocumentText.of(paragraphs)
    lines: list[str] = []
    counts = {"T": 0, "R": 0, "A": 0, "#": 0}

    def next_id(kind: str) -> str:
        counts[kind] += 1
        return f"{kind}{counts[kind]}"

    for number, record in enumerate(records, 1):
        kind = record.get("category") or UNLABELLED
        at = f"{where}, record {number}"
        primary = next_id("T")
        lines.append(_text_bound(primary, kind, record["span"], text, at))
        if record.get("paired_span") is not None:
            paired = next_id("T")
            lines.append(_text_bound(paired, kind, record["paired_span"], text, at))
            lines.append(f"{next_id('R')}\t{kind} Arg1:{primary} Arg2:{paired}")
        if record.get("severity") is not None:
            lines.append(f"{next_id('A')}\t{SEVERITY} {primary} {record['severity']}")
        if record.get("comment") is not None:
            lines.append(f"{next_id('#')}\t{NOTES} {primary}\t{escape_note(record['comment'])}")
    return "".join(line + "\n" for line in lines)


def annotation_conf(taxonomy: Mapping[str, Any], *, unlabelled: bool = False) -> str:
    """brat's annotation.conf for a taxonomy given as plain data: ``{"categories":
    [{"key", "type": "singleton" | "paired", "name"?}], "severities": [{"key"}]}``
    (``dataclasses.asdict`` of app.taxonomy.Taxonomy has that shape)."""
    categories = list(taxonomy.get("categories") or ())
    severities = [s["key"] for s in taxonomy.get("severities") or ()]
    entities = [c["key"] for c in categories] + ([UNLABELLED] if unlabelled else [])
    paired = [c["key"] for c in categories if c.get("type") == "paired"]
    paired += [UNLABELLED] if unlabelled else []
    lines = [
        "# Generated from the study's taxonomy by falte-annotate (docs/interop.md).",
        "[entities]",
        *entities,
        "",
        "[relations]",
        *(f"{key} Arg1:{key}, Arg2:{key}" for key in paired),
        "# Errors overlap, and one span may carry several labels.",
        "<OVERLAP> Arg1:<ENTITY>, Arg2:<ENTITY>, <OVL-TYPE>:<ANY>",
        "",
        "[events]",
        "",
        "[attributes]",
    ]
    if severities:
        lines.append(f"{SEVERITY} Arg:<ENTITY>, Value:{'|'.join(severities)}")
    return "\n".join(lines) + "\n"


def export_folder(
    records: Iterable[Mapping[str, Any]],
    documents: Mapping[str, Sequence[str]],
    *,
    taxonomy: Mapping[str, Any],
    pseudonymise: Pseudonymise,
    sessions: Iterable[tuple[str, str]] = (),
) -> dict[str, str]:
    """The files of a brat export, relative path -> text: per annotator folder an
    annotation.conf and, per document, the .txt and .ann. `sessions` lists (annotator
    id, document id) readings to write even without annotations (an empty .ann says
    the annotator found no error there). iter_folder writes them (one code path)."""
    chosen: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for annotator, document_id in sessions:
        chosen.setdefault((annotator, document_id), [])
    records = list(records)
    for record in records:
        chosen.setdefault((record["annotator_id"], record["document_id"]), []).append(record)
    conf = annotation_conf(
        taxonomy, unlabelled=any(record.get("category") is None for record in records)
    )
    readings = ((annotator, document, rows) for (annotator, document), rows in chosen.items())
    return dict(iter_folder(readings, documents, conf=conf, pseudonymise=pseudonymise))


def iter_folder(
    readings: Iterable[tuple[str, str, Sequence[Mapping[str, Any]]]],
    documents: Mapping[str, Sequence[str]],
    *,
    conf: str,
    pseudonymise: Pseudonymise,
) -> Iterator[tuple[str, str]]:
    """The files of a brat export one by one, (relative path, text), as they are written:
    per reading (annotator id, document id, that annotator's records on it, possibly
    none) its .txt and .ann, and `conf` (annotation_conf) in each annotator folder when
    the folder first appears. Each (annotator, document) comes once; `documents` may read
    a document's paragraphs when asked (the download reads one at a time)."""
    folders: set[str] = set()
    for annotator, document_id, chosen in readings:
        if document_id not in documents:
            raise InteropError([Problem(f"document {document_id}", "", "no such document given")])
        folder = file_name(pseudonymise(annotator) or "")
        stem = f"{folder}/{file_name(document_id)}"
        paragraphs = documents[document_id]
        yield f"{stem}.txt", brat_text(paragraphs)
        yield f"{stem}.ann", brat_ann(chosen, paragraphs, f"{stem}.ann")
        if folder not in folders:
            folders.add(folder)
            yield f"{folder}/{CONF_NAME}", conf
