"""brat standoff files read back into records (app.interop.records' shape).

Standard: brat's standoff format (https://brat.nlplab.org/standoff.html); app.interop.brat
writes it and says how our export uses it. Read here: folders made by that export, by
brat, or by INCEpTION's brat export.

- Offsets count characters of the ``.txt`` as it was written (brat reads it as Python
  text: code points; a file whose spans only quote their text when counted in UTF-16
  code units, as Java tools count, is read that way and a warning says so). They are
  mapped to the stored text's code points through what the import of documents does to a
  text (app.imports.document_formats): a byte order mark dropped, CRLF and CR as LF, NFC (a
  decomposed ``é`` is one character once stored). When the ``.txt`` is not the stored
  text joined by blank lines (other line endings between paragraphs, a final newline,
  indentation), its paragraphs are matched to the stored ones and offsets moved with
  them; a ``.txt`` whose paragraphs differ from the document's is refused.
- ``T`` lines are spans; fragments (``;``) are one span when only a line break separates
  them (how brat stores a selection over a line break), otherwise the span is refused as
  discontinuous; a span that crosses from one paragraph into another is refused. The
  text after the offsets must be the ``.txt``'s text there (white space aside).
- ``R`` lines are paired errors, category = the relation's type: ``Arg1`` is the error
  and ``Arg2`` its paired span, unless ``Arg2`` stands in a later paragraph (a paired
  span is in the error's paragraph or an earlier one: such a relation was written the
  other way round, and the later span is taken as the error). A ``T`` that is an
  argument of no relation is a single error, category = its type.
- ``A<TAB>Severity T1 major`` is the severity; ``#<TAB>AnnotatorNotes T1<TAB>...`` the
  comment (on the error's ``T`` or on its ``R``). Events, normalisations, other
  attributes and notes on a paired span alone are refused, so that nothing is dropped.
- Spans with the same offsets, paired span, severity and comment but other labels are
  one error unit again. The type ``Unlabelled`` is an error without a label.

Every refusal names the file and line and the annotation id (``alice/ch-1.ann:7: T3:
...``); a folder is read whole or not at all.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path, PurePosixPath
from typing import Any

from app.interop.anchoring import DocumentText
from app.interop.brat import (
    FRAGMENT_SEPARATOR,
    NOTES,
    SEVERITY,
    UNLABELLED,
    name_of_file,
    unescape_note,
)
from app.interop.records import InteropError, Problem, read_record, same_unit_key, span_dict

_BLANK_LINE = re.compile(r"\n\s*\n")  # app.imports.document_formats cuts paragraphs here
_REFUSED_KINDS = {
    "E": "events are not read",
    "N": "normalizations are not read",
    "*": "equivalence sets are not read",
}


@dataclass
class BratRead:
    """Records read from brat files, and warnings (offsets read as UTF-16 units)."""

    records: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


@dataclass
class _Span:
    id: str
    kind: str
    fragments: list[tuple[int, int]]
    shown: str | None
    line: int
    placed: dict[str, Any] | None = None  # the span in the stored paragraph
    paragraph: int = 0  # the stored paragraph it lies in, to order a pair


@dataclass
class _Pair:
    id: str
    kind: str
    arg1: str
    arg2: str
    line: int


def _stored_form(text: str) -> str:
    """What the import of documents makes of a text (BOM, line ends, NFC)."""
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    return unicodedata.normalize("NFC", text)


def paragraph_pieces(text: str) -> list[tuple[int, int]]:
    """(start, end) of each paragraph in `text` as app.imports.document_formats.split_paragraphs
    cuts it: at blank lines, each piece stripped, empty ones dropped."""
    pieces, at = [], 0
    for separator in [*_blank_lines(text), (len(text), len(text))]:
        piece = text[at : separator[0]]
        left = at + len(piece) - len(piece.lstrip())
        right = separator[0] - (len(piece) - len(piece.rstrip()))
        if left < right:
            pieces.append((left, right))
        at = separator[1]
    return pieces


def _blank_lines(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in _BLANK_LINE.finditer(text)]


class _Offsets:
    """Offsets in a .txt as written -> offsets in the document's stored text."""

    def __init__(self, raw: str, document: DocumentText, unit: str = "code points") -> None:
        self.raw = raw
        self.document = document
        self.normal = _stored_form(raw)
        self.same = self.normal == raw
        self.utf16: list[int] | None = None
        if unit == "utf-16":
            self.utf16 = [0]
            for char in raw:
                self.utf16.append(self.utf16[-1] + (2 if ord(char) > 0xFFFF else 1))
        stored = document.text
        self.shift: list[tuple[int, int, int]] | None = None  # (start, end, stored start)
        if self.normal.rstrip() != stored:
            pieces = paragraph_pieces(self.normal)
            found = [self.normal[a:b] for a, b in pieces]
            if found != list(document.paragraphs):
                raise ValueError(_difference(found, list(document.paragraphs)))
            self.shift = [(a, b, s) for (a, b), s in zip(pieces, document.starts, strict=True)]

    def code_point(self, offset: int) -> int:
        """An offset as written, in code points of the .txt (UTF-16 units converted)."""
        total = len(self.raw) if self.utf16 is None else self.utf16[-1]
        if not 0 <= offset <= total:
            raise ValueError(f"offset {offset} is beyond the .txt ({total} characters)")
        if self.utf16 is None:
            return offset
        index = bisect_right(self.utf16, offset) - 1
        if self.utf16[index] != offset:
            raise ValueError(f"offset {offset} falls inside a character (UTF-16)")
        return index

    def stored(self, offset: int) -> int:
        """An offset as written -> the stored text's; ValueError says why it has none."""
        at = self.code_point(offset)
        if not self.same:
            head = _stored_form(self.raw[:at])
            if head + _stored_form(self.raw[at:]) != self.normal:
                raise ValueError(
                    f"offset {offset} falls inside what the stored text holds as one "
                    "character (a CR LF line end, or a letter and its combining mark)"
                )
            at = len(head)
        if self.shift is None:
            return at
        for start, end, stored in self.shift:
            if start <= at <= end:
                return stored + at - start
        raise ValueError(f"offset {offset} falls in the blank space between paragraphs")

    def written(self, start: int, end: int) -> str:
        """The .txt's text between two offsets as written."""
        return self.raw[self.code_point(start) : self.code_point(end)]


def _difference(found: list[str], stored: list[str]) -> str:
    for index, (a, b) in enumerate(zip(found, stored, strict=False)):
        if a != b:
            return f"the .txt's paragraph {index} is not the stored one ({a[:40]!r} vs {b[:40]!r})"
    return f"the .txt has {len(found)} paragraphs, the stored document {len(stored)}"


def _loose(text: str) -> str:
    return " ".join(unicodedata.normalize("NFC", text).split())


class _AnnFile:
    """One .ann file parsed, checked against its .txt, and turned into records."""

    def __init__(self, name: str, problems: list[Problem]) -> None:
        self.name = name
        self.problems = problems
        self.spans: dict[str, _Span] = {}
        self.pairs: dict[str, _Pair] = {}
        self.severity: dict[str, tuple[str, int]] = {}
        self.notes: dict[str, list[tuple[str, int]]] = {}

    def refuse(self, line: int, key: str, message: str) -> None:
        self.problems.append(Problem(f"{self.name}:{line}", key, message))

    def parse(self, ann: str) -> None:
        seen: set[str] = set()
        for number, raw in enumerate(ann.removeprefix("\ufeff").split("\n"), 1):
            line = raw.rstrip("\r")
            if not line.strip():
                continue
            identifier, tab, rest = line.partition("\t")
            if not tab or not identifier:
                self.refuse(number, "", "not a brat annotation line (ID<TAB>...)")
                continue
            if identifier in seen and identifier != "*":
                self.refuse(number, identifier, "this id is used twice")
                continue
            seen.add(identifier)
            kind = identifier[0]
            if kind == "T":
                self.text_bound(identifier, rest, number)
            elif kind == "R":
                self.relation(identifier, rest, number)
            elif kind in ("A", "M"):
                self.attribute(identifier, rest, number)
            elif kind == "#":
                self.note(identifier, rest, number)
            else:
                reason = _REFUSED_KINDS.get(kind, "not a kind of annotation brat writes")
                self.refuse(number, identifier, f"{reason} (this import reads T, R, "
                            f"A {SEVERITY} and # {NOTES} lines)")  # fmt: skip

    def text_bound(self, identifier: str, rest: str, line: int) -> None:
        data, tab, shown = rest.partition("\t")
        kind, _, offsets = data.partition(" ")
        pieces = []
        try:
            for piece in offsets.split(";"):
                start, end = (int(v) for v in piece.split())
                pieces.append((start, end))
        except ValueError:
            self.refuse(line, identifier, f"offsets {offsets!r} are not START END[;START END]")
            return
        if not kind or any(start > end for start, end in pieces):
            self.refuse(line, identifier, "needs a type and offsets with START <= END")
            return
        self.spans[identifier] = _Span(identifier, kind, pieces, shown if tab else None, line)

    def relation(self, identifier: str, rest: str, line: int) -> None:
        kind, *arguments = rest.partition("\t")[0].split() or [""]
        roles = dict(arg.split(":", 1) for arg in arguments if ":" in arg)
        if len(arguments) != 2 or set(roles) != {"Arg1", "Arg2"}:
            self.refuse(line, identifier, "a relation needs exactly Arg1:T.. and Arg2:T..")
            return
        self.pairs[identifier] = _Pair(identifier, kind, roles["Arg1"], roles["Arg2"], line)

    def attribute(self, identifier: str, rest: str, line: int) -> None:
        parts = rest.partition("\t")[0].split()
        if not parts or parts[0] != SEVERITY:
            self.refuse(line, identifier, f"the attribute {parts[0] if parts else ''!r} is "
                        f"not read (only {SEVERITY})")  # fmt: skip
        elif len(parts) != 3:
            self.refuse(line, identifier, f"write it as {SEVERITY} T1 <severity key>")
        elif parts[1] in self.severity:
            self.refuse(line, identifier, f"a second severity for {parts[1]}")
        else:
            self.severity[parts[1]] = (parts[2], line)

    def note(self, identifier: str, rest: str, line: int) -> None:
        data, _, text = rest.partition("\t")
        parts = data.split()
        if len(parts) != 2 or parts[0] != NOTES:
            self.refuse(line, identifier, f"write notes as {NOTES} T1<TAB>text")
            return
        self.notes.setdefault(parts[1], []).append((unescape_note(text), line))

    # -- placing spans

    def place(self, offsets: _Offsets, document: DocumentText) -> None:
        for span in self.spans.values():
            where = (span.line, span.id)
            try:
                start, end = self.joined(span, offsets)
                stored_start, stored_end = offsets.stored(start), offsets.stored(end)
                pid, pstart, pend = document.to_paragraph(stored_start, stored_end)
            except ValueError as exc:
                self.refuse(*where, str(exc))
                continue
            span.placed = span_dict(pid, pstart, pend, document.paragraphs[pid][pstart:pend])
            span.paragraph = pid

    def joined(self, span: _Span, offsets: _Offsets) -> tuple[int, int]:
        """The span's (start, end) as written; fragments only a line break apart are one."""
        pieces = sorted(span.fragments)
        for (_, end), (start, _) in pairwise(pieces):
            gap = offsets.written(end, start)
            if end > start or gap.strip() or not ("\n" in gap or "\r" in gap):
                raise ValueError(
                    f"discontinuous span ({';'.join(f'{a} {b}' for a, b in span.fragments)}): "
                    "this import takes one continuous span (fragments may be split only by "
                    "a line break)"
                )
        if span.shown is not None:
            written = FRAGMENT_SEPARATOR.join(offsets.written(a, b) for a, b in pieces)
            if _loose(written) != _loose(span.shown):
                raise ValueError(f"the text {span.shown[:60]!r} is not the .txt's text at "
                                 f"these offsets ({written[:60]!r})")  # fmt: skip
        return pieces[0][0], pieces[-1][1]

    def matches_as(self, offsets: _Offsets) -> bool:
        """True when every span's text is what the .txt holds at its offsets."""
        try:
            return all(
                span.shown is None
                or _loose(FRAGMENT_SEPARATOR.join(offsets.written(a, b) for a, b in span.fragments))
                == _loose(span.shown)
                for span in self.spans.values()
            )
        except ValueError:
            return False

    # -- records

    def check(self) -> None:
        """Every relation, severity and note refers to an annotation it may refer to."""
        first_of, second_of = set(), set()
        for pair in self.pairs.values():
            for role, target in (("Arg1", pair.arg1), ("Arg2", pair.arg2)):
                if target not in self.spans:
                    self.refuse(pair.line, pair.id, f"{role}: no text-bound annotation {target}")
            first_of.add(pair.arg1)
            second_of.add(pair.arg2)
        alone = second_of - first_of  # paired spans that are no error's span
        for target, (_, line) in self.severity.items():
            self.attached(target, line, "severity", alone)
        for target, notes in self.notes.items():
            for _, line in notes:
                self.attached(target, line, "note", alone)

    def records(self, document_id: str, annotator_id: str | None) -> list[dict[str, Any]]:
        """The records of a checked, placed file, in the order of their first lines."""
        first_of = {pair.arg1 for pair in self.pairs.values()}
        second_of = {pair.arg2 for pair in self.pairs.values()}
        entries: list[tuple[tuple[int, int], dict[str, Any]]] = []
        for span in self.spans.values():
            if span.id not in first_of and span.id not in second_of:
                entries.append(((span.line, 0), self.error(span, None, span.kind, [span.id])))
        for pair in self.pairs.values():
            first, second = self.spans[pair.arg1], self.spans[pair.arg2]
            backwards = second.paragraph > first.paragraph
            error, paired = (second, first) if backwards else (first, second)
            record = self.error(error, paired, pair.kind, [pair.id, pair.arg1])
            entries.append(((first.line, pair.line), record))
        entries.sort(key=lambda entry: entry[0])
        return _with_units([record for _, record in entries], document_id, annotator_id)

    def attached(self, target: str, line: int, what: str, alone: set[str]) -> None:
        if target not in self.spans and target not in self.pairs:
            self.refuse(line, target, f"the {what} is on no annotation of this file")
        elif target in alone:
            self.refuse(line, target, f"a {what} on a paired span alone; put it on the error's "
                        "span (the relation's Arg1) or on the relation")  # fmt: skip

    def error(
        self, span: _Span, paired: _Span | None, kind: str, owners: list[str]
    ) -> dict[str, Any]:
        severities = sorted({self.severity[o][0] for o in owners if o in self.severity})
        if len(severities) > 1:
            self.refuse(span.line, span.id, f"two severities ({', '.join(severities)})")
        notes = [text for o in owners for text, _ in self.notes.get(o, [])]
        return {
            "category": None if kind == UNLABELLED else kind,
            "span": span.placed,
            "paired_span": paired.placed if paired else None,
            "severity": severities[0] if severities else None,
            "comment": "\n\n".join(notes) if notes else None,
        }


def _with_units(
    errors: list[dict[str, Any]], document_id: str, annotator_id: str | None
) -> list[dict[str, Any]]:
    """Records, one unit per span + paired span + severity + comment (labels grouped)."""
    units: dict[tuple, tuple[int, set]] = {}
    records = []
    for error in errors:
        record = read_record(document_id=document_id, annotator_id=annotator_id, unit_id=0,
                             **error)  # fmt: skip
        key = same_unit_key(record)
        unit, labels = units.get(key, (0, {error["category"]}))
        if unit == 0 or error["category"] in labels:
            unit, labels = len(units) + 1, set()
            units[key] = (unit, labels)
        labels.add(error["category"])
        record["unit_id"] = unit
        records.append(record)
    return records


def read_brat_document(
    ann: str,
    txt: str | None,
    paragraphs: Sequence[str],
    *,
    document_id: str,
    annotator_id: str | None,
    name: str = "document.ann",
) -> BratRead:
    """Records of one .ann (with its .txt as written: None when absent, then offsets are
    taken as the stored text's). Raises InteropError listing every problem."""
    problems: list[Problem] = []
    read = BratRead()
    read.records = _read(ann, txt, paragraphs, document_id, annotator_id, name, problems, read)
    if problems:
        raise InteropError(problems)
    return read


def _read(
    ann: str,
    txt: str | None,
    paragraphs: Sequence[str],
    document_id: str,
    annotator_id: str | None,
    name: str,
    problems: list[Problem],
    read: BratRead,
) -> list[dict[str, Any]]:
    document = DocumentText.of(paragraphs)
    parsed = _AnnFile(name, problems)
    parsed.parse(ann)
    try:
        offsets = _Offsets(document.text if txt is None else txt, document)
        if not parsed.matches_as(offsets):
            utf16 = _Offsets(offsets.raw, document, unit="utf-16")
            if parsed.matches_as(utf16) and any(ord(c) > 0xFFFF for c in offsets.raw):
                offsets = utf16
                read.warnings.append(
                    f"{name}: offsets count UTF-16 code units (as Java tools write them); "
                    "read as such"
                )
    except ValueError as exc:
        problems.append(Problem(name, "", f"{exc}; the .txt must hold document {document_id}"))
        return []
    parsed.place(offsets, document)
    parsed.check()
    if problems:
        return []
    return parsed.records(document_id, annotator_id)


def read_brat_folder(
    files: Mapping[str, str],
    documents: Mapping[str, Sequence[str]],
    *,
    default_annotator: str | None = None,
) -> BratRead:
    """Records of every .ann in a folder given as relative path -> text (`load_folder`).

    ``<annotator>/<document>.ann`` (this export's layout: folder and file names are
    percent-decoded ids) or ``<document>.ann`` at the top for `default_annotator`; each
    with its ``.txt`` beside it. Other files (annotation.conf, visual.conf) are ignored.
    Units are numbered across the folder."""
    problems: list[Problem] = []
    read = BratRead()
    for path in sorted(p for p in files if p.endswith(".ann")):
        posix = PurePosixPath(path)
        document_id = name_of_file(posix.stem)
        folder = posix.parent.name
        annotator = name_of_file(folder) if folder else default_annotator
        if annotator is None:
            problems.append(Problem(path, "", "an .ann outside an annotator's folder (name "
                                    "the folder after the annotator)"))  # fmt: skip
            continue
        if document_id not in documents:
            problems.append(Problem(path, "", f"document {document_id!r} is not imported"))
            continue
        txt = files.get(str(posix.with_suffix(".txt")))
        records = _read(files[path], txt, documents[document_id], document_id, annotator, path,
                        problems, read)  # fmt: skip
        base = max((r["unit_id"] for r in read.records), default=0)
        for record in records:
            record["unit_id"] += base
        read.records += records
    if problems:
        raise InteropError(problems)
    return read


def load_folder(root: Path) -> dict[str, str]:
    """Every .ann and .txt under `root`, relative POSIX path -> text exactly as written:
    decoded as UTF-8 with line ends and a byte order mark kept (Path.read_text would turn
    CRLF into LF and move every offset after it). The one function here that reads files."""
    files, problems = {}, []
    for path in sorted(root.rglob("*")):
        if path.suffix not in (".ann", ".txt") or not path.is_file():
            continue
        relative = path.relative_to(root).as_posix()
        try:
            files[relative] = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError as exc:
            problems.append(Problem(relative, "", f"not UTF-8 text (byte {exc.start})"))
    if problems:
        raise InteropError(problems)
    return files
