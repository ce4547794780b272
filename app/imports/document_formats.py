"""Input documents: detect the format, validate and normalise. Pure: no app, no database.

Formats (docs/contracts.md#input-documents), told apart by content, never by extension,
except that a ``.txt`` file is plain text and a folder is a set of files:

1. FALTE JSON, an object keyed by document id: ``{"doc-1": ["paragraph", ...]}`` or
   ``{"doc-1": {"paragraphs": [...], "title", "entities": [...], "meta": {...}, "gold"}}``.
2. A JSON list, or JSON lines, of records ``{"id": str, "paragraphs": [...]}`` with the
   same optional keys, or ``{"id": str, "text": str}`` (split on blank lines).
3. A ``.txt`` file: paragraphs separated by blank lines; the id is the file's stem.
4. A folder: every ``*.txt``, ``*.json`` and ``*.jsonl`` file directly in it (others, such
   as README.md, and hidden files are skipped), each read by its own rules, in name
   order. The folder is one unit: one bad file rejects all of it.

``"sentences"`` is a synonym of ``"paragraphs"``. ``language`` is the document's BCP 47
tag (``ar``, ``he``, ``zh-Hans``; app.rules.languages, docs/languages.md), stored as given; a
``.txt`` file has none. A listed paragraph holding FALTE's entity
marks (``<span class = "ne ne-4"> John</span>``, as in FALTE's own ``stories.json``) is
stored as the text FALTE's page shows, and the marked names are added to the document's
entities; other markup in such a paragraph is refused, and a paragraph without entity
marks is plain text, angle brackets and all (app.imports.falte_markup).
``gold`` (attention checks) is a list of ``{"paragraph_id", "start", "end", "category"}``
whose offsets must lie within that paragraph's normalised text, optionally with
``"paired_span": {"paragraph_id", "start", "end"}`` (the other span of a paired error)
and ``"explanation"`` (text). Any other key is refused
(extra data belongs under ``meta``), so that a misspelt key is reported instead of silently dropped.

Normalisation, applied once: NFC, CRLF and lone CR become LF, each paragraph is stripped;
a ``text`` is split on blank lines (a line holding only whitespace is blank) and empty
pieces are dropped. Offsets always refer to the text stored after this.

Every problem names its place as ``FILE:LOCATION: FIELD: MESSAGE``, where LOCATION is

- ``3`` -- line 3 of a JSON-lines file;  ``4:17`` -- line and column of a JSON syntax error;
- ``record 3`` -- the third record (1-based) of a JSON list;
- ``record 3 (doc-7)`` -- the third entry of a FALTE object, with its id;
- empty for a ``.txt`` file (``notes.txt: paragraphs: no paragraphs``);

and FIELD is a JSON path with 0-based indices (``paragraphs[2]``, ``gold[0].end``), as
paragraph ids are 0-based. Text that cannot be stored (a NUL character, a lone surrogate
such as ``"\\ud800"``: app.rules.safe_text) rejects the file, each place named by its line.
All problems of a file (at most MAX_PROBLEMS) are collected and raised together as one
DocumentFileError.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from app.core.errors import ProblemsError
from app.imports.falte_markup import MarkupError, parse_paragraph
from app.rules.languages import language_problem
from app.rules.safe_text import json_text_problems, text_problem

MAX_ID_LENGTH = 200
MAX_TITLE_LENGTH = 500
MAX_PROBLEMS = 50
FOLDER_SUFFIXES = (".txt", ".json", ".jsonl")
TEXT_KEYS = ("paragraphs", "sentences", "text")
RECORD_KEYS = ("id", *TEXT_KEYS, "title", "language", "entities", "meta", "gold")
GOLD_KEYS = ("paragraph_id", "start", "end", "category")
# Optional: the other span of a paired error, and what a training page tells the worker.
GOLD_OPTIONAL_KEYS = ("paired_span", "explanation")
SPAN_KEYS = ("paragraph_id", "start", "end")

_BLANK_LINE = re.compile(r"\n\s*\n")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True)
class DocumentInput:
    """One document, validated and normalised, ready to be stored."""

    external_id: str
    title: str | None
    paragraphs: tuple[str, ...]
    entities: tuple[str, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict)
    gold: list[dict[str, Any]] | None = None
    language: str | None = None  # BCP 47 (app.rules.languages); None: not given

    @cached_property
    def content_hash(self) -> str:
        """SHA-256 of the paragraphs only: title, entities and meta don't move offsets."""
        return content_hash(self.paragraphs)


class DocumentFormatError(ValueError):
    """One problem in an input file, shown as ``FILE:LOCATION: FIELD: MESSAGE``."""

    def __init__(self, path: Path | str, location: str, field: str, message: str) -> None:
        self.path = Path(path)
        self.location = location
        self.field = field
        self.message = message
        super().__init__(str(self))

    def __str__(self) -> str:
        place = f"{self.path.name}:{self.location}" if self.location else self.path.name
        return ": ".join(part for part in (place, self.field, self.message) if part)


class DocumentFileError(ProblemsError, ValueError):
    """A file (or folder) was rejected; `problems` lists every DocumentFormatError found."""

    def __init__(
        self, path: Path | str, problems: list[DocumentFormatError], truncated: bool = False
    ) -> None:
        self.path = Path(path)
        self.truncated = truncated
        super().__init__(problems)

    def __str__(self) -> str:
        lines = [str(problem) for problem in self.problems]
        if self.truncated:
            lines.append(f"(stopped after {MAX_PROBLEMS} problems)")
        return "\n".join(lines)


def normalise_text(text: str) -> str:
    """NFC, and every line ending (CRLF, lone CR) as LF."""
    return unicodedata.normalize("NFC", text.replace("\r\n", "\n").replace("\r", "\n"))


def split_paragraphs(text: str) -> tuple[str, ...]:
    """Normalise a text and cut it at blank lines; pieces stripped, empty ones dropped."""
    pieces = (piece.strip() for piece in _BLANK_LINE.split(normalise_text(text)))
    return tuple(piece for piece in pieces if piece)


def content_hash(paragraphs: tuple[str, ...] | list[str]) -> str:
    """Hex SHA-256 of the paragraphs, encoded unambiguously as a JSON list."""
    encoded = json.dumps(list(paragraphs), ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(encoded.encode("utf-8")).hexdigest()


def document_from_record(external_id: Any, record: dict[str, Any]) -> DocumentInput:
    """One record checked by the same rules as a file's; ValueError lists `field: message`."""
    check = _Check()
    document = check.document(check.external_id(external_id), record)
    if document is None:
        raise ValueError("; ".join(f"{field}: {message}" for field, message in check.errors))
    return document


def parse_documents(path: Path) -> list[DocumentInput]:
    """Read a file or folder of documents; raise DocumentFileError listing every problem."""
    path = Path(path)
    reader = _Reader()
    if path.is_dir():
        files = sorted(
            p
            for p in path.iterdir()
            if p.is_file() and not p.name.startswith(".") and p.suffix.lower() in FOLDER_SUFFIXES
        )
        if not files:
            reader.add(path, "", "", "no .txt, .json or .jsonl files in this folder")
    else:
        files = [path]
    documents = [document for file in files for document in reader.read_file(file)]
    if reader.problems:
        raise DocumentFileError(path, reader.problems, reader.truncated)
    return documents


class _JsonObject(dict):
    """A decoded JSON object that keeps its pairs when a key occurs twice.

    json.loads would silently keep the last value only; in a FALTE file, keyed by
    document id, a repeated key is a duplicate document that must be reported.
    """

    pairs: list[tuple[str, Any]] | None = None


def _json_object(pairs: list[tuple[str, Any]]) -> _JsonObject:
    obj = _JsonObject(pairs)
    if len(obj) != len(pairs):
        obj.pairs = pairs
    return obj


class _Reader:
    """Reads files into documents, collecting problems (up to MAX_PROBLEMS)."""

    def __init__(self) -> None:
        self.problems: list[DocumentFormatError] = []
        self.truncated = False
        self.first_seen: dict[str, tuple[Path, str]] = {}  # id -> where it first occurred

    def add(self, path: Path, location: str, field: str, message: str) -> None:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(DocumentFormatError(path, location, field, message))
        else:
            self.truncated = True

    def read_file(self, path: Path) -> list[DocumentInput]:
        try:
            text = path.read_bytes().decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            self.add(path, "", "", f"not UTF-8 text (byte {exc.start}: {exc.reason})")
            return []
        except OSError as exc:
            self.add(path, "", "", f"cannot read the file: {exc.strerror or exc}")
            return []
        if self.unstorable_text(path, text):
            return []
        if path.suffix.lower() == ".txt":
            return self.read_txt(path, text)
        if not text.strip():
            self.add(path, "", "", "the file is empty")
            return []
        try:
            data = json.loads(text, object_pairs_hook=_json_object)
        except json.JSONDecodeError as exc:
            if exc.msg == "Extra data" or _first_line_is_object(text):
                return self.read_jsonl(path, text)
            self.add(path, f"{exc.lineno}:{exc.colno}", "", f"invalid JSON: {exc.msg}")
            return []
        if isinstance(data, dict) and "id" in data and not isinstance(data["id"], list | dict):
            # One record: on one line it is JSON lines (located by line), else a list of one.
            if "\n" not in text.strip():
                return self.read_jsonl(path, text)
            data = [data]
        if isinstance(data, list):
            if not data:
                self.add(path, "", "", "no documents in the file (an empty list)")
            records = ((f"record {n}", record) for n, record in enumerate(data, start=1))
            return self.read_records(path, records)
        if isinstance(data, dict):
            return self.read_falte(path, data)
        self.add(path, "", "", "expected a JSON object, a JSON list or JSON lines")
        return []

    def unstorable_text(self, path: Path, text: str) -> bool:
        """Report NUL characters and lone surrogates (app.rules.safe_text) by line and field."""
        if path.suffix.lower() == ".txt":
            lines = enumerate(text.split("\n"), start=1)
            found = [(n, "paragraphs", p) for n, line in lines if (p := text_problem(line))]
        else:
            found = json_text_problems(text)
        for line, field_name, problem in found:
            self.add(path, str(line), field_name, problem)
        return bool(found)

    def read_txt(self, path: Path, text: str) -> list[DocumentInput]:
        check = _Check()
        external_id = check.external_id(path.stem)
        self.claim(external_id, path, "", check)
        paragraphs = split_paragraphs(text)
        if not paragraphs:
            check.bad("paragraphs", "no paragraphs (the file holds no text)")
        self.report(path, "", check)
        if check.errors or external_id is None:
            return []
        return [DocumentInput(external_id, None, paragraphs)]

    def read_jsonl(self, path: Path, text: str) -> list[DocumentInput]:
        def records():
            for number, line in enumerate(text.split("\n"), start=1):
                if not line.strip():
                    continue
                try:
                    yield str(number), json.loads(line, object_pairs_hook=_json_object)
                except json.JSONDecodeError as exc:
                    self.add(path, str(number), "", f"invalid JSON: {exc.msg} (column {exc.colno})")

        return self.read_records(path, records())

    def read_records(self, path: Path, records: Iterable[tuple[str, Any]]) -> list[DocumentInput]:
        found: list[DocumentInput] = []
        for location, record in records:
            if not isinstance(record, dict):
                self.add(path, location, "", 'expected an object with "id" and "paragraphs"')
                continue
            check = _Check()
            if "id" not in record:
                check.bad("id", "missing")
            external_id = check.external_id(record["id"]) if "id" in record else None
            self.claim(external_id, path, location, check)
            document = check.document(external_id, record)
            self.report(path, location, check)
            if document is not None:
                found.append(document)
        return found

    def read_falte(self, path: Path, data: _JsonObject) -> list[DocumentInput]:
        entries = data.pairs or list(data.items())
        if not entries:
            self.add(path, "", "", "no documents in the file (an empty object)")
        found: list[DocumentInput] = []
        for number, (key, value) in enumerate(entries, start=1):
            check = _Check()
            external_id = check.external_id(key)
            location = f"record {number} ({external_id})" if external_id else f"record {number}"
            self.claim(external_id, path, location, check)
            document = None
            if isinstance(value, list):
                document = check.document(external_id, {"paragraphs": value})
            elif not isinstance(value, dict):
                check.bad("", "expected a list of paragraphs or an object with paragraphs")
            elif "id" in value and value["id"] != key:
                check.bad("id", f"differs from the key {key!r}")
            else:
                document = check.document(external_id, value)
            self.report(path, location, check)
            if document is not None:
                found.append(document)
        return found

    def claim(self, external_id: str | None, path: Path, location: str, check: _Check) -> None:
        """Remember where an id occurs; a second occurrence (in any file) is a problem."""
        if external_id is None:
            return
        first_path, first_location = self.first_seen.setdefault(external_id, (path, location))
        if (first_path, first_location) != (path, location):
            where = f"{first_path.name}:{first_location}".rstrip(":")
            check.bad("id", f"duplicate id {external_id!r} (first at {where})")

    def report(self, path: Path, location: str, check: _Check) -> None:
        for field_name, message in check.errors:
            self.add(path, location, field_name, message)


def _first_line_is_object(text: str) -> bool:
    first = next((line for line in text.split("\n") if line.strip()), "")
    try:
        return isinstance(json.loads(first), dict)
    except json.JSONDecodeError:
        return False


class _Check:
    """Validates and normalises the fields of one record, collecting (field, message)."""

    def __init__(self) -> None:
        self.errors: list[tuple[str, str]] = []
        self.marked_entities: list[str] = []  # names inside FALTE's ne-N marks

    def bad(self, field_name: str, message: str) -> None:
        self.errors.append((field_name, message))

    def document(self, external_id: str | None, record: dict[str, Any]) -> DocumentInput | None:
        """The record as a DocumentInput, or None when anything in it is wrong."""
        for key in record:
            if key not in RECORD_KEYS:
                self.bad(key, "unknown key (extra data belongs in meta)")
        paragraphs = self.paragraphs(record)
        title = self.title(record.get("title"))
        language = self.language(record.get("language"))
        entities = self.entities(record.get("entities"))
        entities = tuple(dict.fromkeys((*entities, *self.marked_entities)))
        meta = {} if record.get("meta") is None else record["meta"]
        if not isinstance(meta, dict):
            self.bad("meta", f"must be an object, not {_json_type(meta)}")
        gold = self.gold(record.get("gold"), paragraphs) if paragraphs else None
        if self.errors or external_id is None:
            return None
        return DocumentInput(external_id, title, paragraphs, entities, dict(meta), gold, language)

    def external_id(self, value: Any) -> str | None:
        if not isinstance(value, str):
            self.bad("id", f"must be a string, not {_json_type(value)}")
            return None
        value = unicodedata.normalize("NFC", value)
        if not value.strip():
            self.bad("id", "empty id")
        elif value != value.strip():
            self.bad("id", f"{value!r} has leading or trailing whitespace")
        elif len(value) > MAX_ID_LENGTH:
            self.bad("id", f"too long ({len(value)} characters, at most {MAX_ID_LENGTH})")
        elif _CONTROL.search(value) or "/" in value:
            # The id is part of the worker's address, /annotate/<id>.
            self.bad("id", f"{value!r} must not contain '/' or control characters")
        else:
            return value
        return None

    def paragraphs(self, record: dict[str, Any]) -> tuple[str, ...]:
        given = [key for key in TEXT_KEYS if key in record]
        if len(given) != 1:
            if given:
                self.bad(given[1], f"give only one of {', '.join(given)}")
            else:
                self.bad("paragraphs", "missing (give paragraphs, sentences or text)")
            return ()
        key, value = given[0], record[given[0]]
        if key == "text":
            if not isinstance(value, str):
                self.bad("text", f"must be a string, not {_json_type(value)}")
                return ()
            paragraphs = split_paragraphs(value)
            if not paragraphs:
                self.bad("text", "no paragraphs (the text is empty)")
            return paragraphs
        if not isinstance(value, list) or not value:
            kind = "an empty list" if value == [] else _json_type(value)
            self.bad(key, f"must be a non-empty list of strings, not {kind}")
            return ()
        paragraphs = []
        for index, paragraph in enumerate(value):
            if not isinstance(paragraph, str):
                self.bad(f"{key}[{index}]", f"must be a string, not {_json_type(paragraph)}")
            elif (paragraph := self.unmarked(f"{key}[{index}]", paragraph)) is None:
                continue  # refused markup, already reported
            elif not paragraph:
                self.bad(f"{key}[{index}]", "empty paragraph")
            else:
                paragraphs.append(paragraph)
        return tuple(paragraphs) if len(paragraphs) == len(value) else ()

    def unmarked(self, field_name: str, paragraph: str) -> str | None:
        """The paragraph normalised, as plain text when it holds FALTE's entity marks."""
        paragraph = normalise_text(paragraph).strip()
        try:
            marked = parse_paragraph(paragraph)
        except MarkupError as exc:
            self.bad(field_name, str(exc))
            return None
        self.marked_entities += marked.entities
        return marked.text

    def title(self, value: Any) -> str | None:
        if value is None:
            return None
        if not isinstance(value, str):
            self.bad("title", f"must be a string, not {_json_type(value)}")
            return None
        title = " ".join(normalise_text(value).split())
        if len(title) > MAX_TITLE_LENGTH:
            self.bad("title", f"too long ({len(title)} characters, at most {MAX_TITLE_LENGTH})")
        return title or None

    def language(self, value: Any) -> str | None:
        if value is None:
            return None
        if isinstance(value, str):
            value = value.strip()
        problem = language_problem(value)
        if problem:
            self.bad("language", problem)
            return None
        return value

    def entities(self, value: Any) -> tuple[str, ...]:
        if value is None:
            return ()
        if not isinstance(value, list):
            self.bad("entities", f"must be a list of names, not {_json_type(value)}")
            return ()
        names: dict[str, None] = {}  # ordered set: the first mention's order is kept
        for index, name in enumerate(value):
            if isinstance(name, str) and name.strip():
                names[normalise_text(name).strip()] = None
            else:
                self.bad(f"entities[{index}]", "must be a non-empty string")
        return tuple(names)

    def gold(self, value: Any, paragraphs: tuple[str, ...]) -> list[dict[str, Any]] | None:
        if value is None:
            return None
        if not isinstance(value, list):
            self.bad("gold", f"must be a list of spans, not {_json_type(value)}")
            return None
        spans = []
        for index, item in enumerate(value):
            where = f"gold[{index}]"
            if not isinstance(item, dict):
                self.bad(where, f"must be an object with {', '.join(GOLD_KEYS)}")
                continue
            before = len(self.errors)
            for key in item.keys() - set(GOLD_KEYS) - set(GOLD_OPTIONAL_KEYS):
                self.bad(f"{where}.{key}", "unknown key")
            for key in GOLD_KEYS:
                if key not in item:
                    self.bad(f"{where}.{key}", "missing")
                elif key != "category" and not _is_int(item[key]):
                    self.bad(f"{where}.{key}", f"must be an integer, not {_json_type(item[key])}")
            category = item.get("category")
            if "category" in item and (not isinstance(category, str) or not category.strip()):
                self.bad(f"{where}.category", "must be a non-empty string")
            extra = self.gold_extra(where, item, paragraphs)
            if len(self.errors) == before and self.gold_span(where, item, paragraphs):
                spans.append(
                    {key: item[key] for key in GOLD_KEYS} | {"category": category.strip()} | extra
                )
        return spans or None

    def gold_extra(
        self, where: str, item: dict[str, Any], paragraphs: tuple[str, ...]
    ) -> dict[str, Any]:
        """The optional paired_span and explanation of a gold entry, checked."""
        extra: dict[str, Any] = {}
        explanation = item.get("explanation")
        if explanation is not None:
            if isinstance(explanation, str) and explanation.strip():
                extra["explanation"] = normalise_text(explanation).strip()
            else:
                self.bad(f"{where}.explanation", "must be a non-empty string")
        paired = item.get("paired_span")
        if paired is None:
            return extra
        at = f"{where}.paired_span"
        if not isinstance(paired, dict) or set(paired) != set(SPAN_KEYS):
            self.bad(at, f"must be an object with {', '.join(SPAN_KEYS)}")
        elif not all(_is_int(paired[key]) for key in SPAN_KEYS):
            self.bad(at, "paragraph_id, start and end must be integers")
        elif self.gold_span(at, paired, paragraphs):
            extra["paired_span"] = {key: paired[key] for key in SPAN_KEYS}
        return extra

    def gold_span(self, where: str, item: dict[str, Any], paragraphs: tuple[str, ...]) -> bool:
        paragraph_id, start, end = item["paragraph_id"], item["start"], item["end"]
        if not 0 <= paragraph_id < len(paragraphs):
            self.bad(
                f"{where}.paragraph_id", f"no paragraph {paragraph_id} ({len(paragraphs)} in all)"
            )
        elif start < 0:
            self.bad(f"{where}.start", f"must be at least 0, not {start}")
        elif end <= start:
            self.bad(f"{where}.end", f"must be greater than start ({start}), not {end}")
        elif end > len(paragraphs[paragraph_id]):
            length = len(paragraphs[paragraph_id])
            self.bad(
                f"{where}.end", f"{end} is beyond paragraph {paragraph_id} ({length} characters)"
            )
        else:
            return True
        return False


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    names = {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "a list"}
    return names.get(type(value), "an object")
