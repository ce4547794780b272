"""Reading annotation files into plain records. Pure: no app, no database.

Formats (`--format`, or `auto`, told apart by content):

- ``jsonl``: our own export (`flask export-annotations --format jsonl`), one record a
  line; the annotator (``annotator_id`` = ``platform:id``), session platform and taxonomy
  version are kept, so that the import exports back to the same records. Documents must
  be imported already (the export holds no text). Records of one session with the same
  ``unit_id`` are one unit again; ``category`` null is an annotation without a label.
- ``booookscore-human``: BooookScore's human annotation files (``summary-gpt4-4096-inc.json``
  ...): ``{book: {"summary", "singles", "relations"}}``. The summary becomes the document
  (paragraphs split on blank lines); a single becomes one annotation per label (its
  question as the comment); a relation one annotation per shared label with a paired
  span. The rows of one single or relation are one error unit (they share a unit:
  BooookScore's score counts the unit once). A single or relation without a label is
  one annotation with no category (it counts in the score, in no Table 1 category) and
  a warning. The file names no annotator: its books are one annotator's, named after the
  file (platform ``import``). Null books are skipped with a warning.
- ``falte``: a CSV or JSON dump of FALTE's ``annotation_v2`` table (storyid, segmentid,
  error, span1, span1_start, span1_end, span2, span2_start, span2_end, survey_code,
  feedback, annotator): one session per survey code (annotator: the ``annotator`` column,
  else the survey code; platform ``falte``); ``no-error`` rows make sessions without
  annotations; spans are located by their text in paragraph ``segmentid``, FALTE's
  offsets only a hint. Documents must be imported already.

Every record names its place as ``FILE:LINE`` (JSONL, CSV), ``FILE:record N`` (JSON list)
or ``FILE:BOOK singles[N]`` (BooookScore), for ``FILE:LINE: field: message`` errors.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.imports.document_formats import normalise_text, split_paragraphs
from app.imports.item_formats import SpanInput, detect_format
from app.rules.jsonl import json_object_lines

FORMATS = ("auto", "jsonl", "booookscore-human", "falte")
FALTE_COLUMNS = ("storyid", "segmentid", "error", "span1", "survey_code")
NO_ERROR = "no-error"


@dataclass
class ImportedAnnotation:
    """One annotation as read, before its spans are located."""

    where: str
    label: str | None  # None: the error came without a label (category null)
    span: SpanInput
    paired: SpanInput | None = None
    comment: str | None = None
    removed_at: str | None = None
    order_pair: bool = False  # BooookScore relation: the later span becomes the primary
    severity: str | None = None  # our export's `severity` (taxonomies with severities)
    unit: object = None  # the error unit within its session (None: a unit of its own)
    created_at: str | None = None  # W3C `created`: kept (None: the moment of the import)


@dataclass
class ImportedSession:
    """One (document, annotator) reading with its annotations."""

    where: str
    document_id: str
    annotator: tuple[str, str]  # (platform, external id)
    platform: str
    taxonomy_version: str | None = None
    annotations: list[ImportedAnnotation] = field(default_factory=list)


@dataclass
class ParsedFile:
    """What a file holds: texts of documents it carries, sessions, problems and warnings."""

    texts: dict[str, tuple[str, ...]] = field(default_factory=dict)
    sessions: dict[tuple[str, tuple[str, str]], ImportedSession] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def session(
        self, where: str, document_id: str, annotator: tuple[str, str], platform: str
    ) -> ImportedSession:
        """The session of this (document, annotator), made on first mention."""
        key = (document_id, annotator)
        if key not in self.sessions:
            self.sessions[key] = ImportedSession(where, document_id, annotator, platform)
        return self.sessions[key]


def read_annotations(path: Path, fmt: str = "auto", id_prefix: str = "") -> ParsedFile:
    """Parse the file; every problem is collected in the result (nothing raises)."""
    parsed = ParsedFile()
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        parsed.problems.append(f"{path.name}: cannot read the file ({exc})")
        return parsed
    data: Any = None
    if path.suffix.lower() != ".csv":
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            data = None
    if fmt == "auto":
        fmt = _detect(path, data)
    other = detect_format(data) if fmt == "jsonl" else "jsonl"
    if other != "jsonl":  # a BooookScore model or validation file holds no human sessions
        parsed.problems.append(
            f"{path.name}: this is BooookScore's {other.removeprefix('booookscore-')} file: "
            "use it with `flask validation create-round` (import-annotations takes the "
            "human annotation files)"
        )
        return parsed
    reader = {"jsonl": _read_jsonl, "booookscore-human": _read_human, "falte": _read_falte}[fmt]
    reader(path, text, data, id_prefix, parsed)
    return parsed


def _detect(path: Path, data: Any) -> str:
    if path.suffix.lower() == ".csv":
        return "falte"
    if detect_format(data) == "booookscore-human":
        return "booookscore-human"
    if isinstance(data, list) and data and isinstance(data[0], dict) and "storyid" in data[0]:
        return "falte"
    return "jsonl"


def _text(value: Any) -> str | None:
    if isinstance(value, list):  # BooookScore gives some questions as lists of strings
        value = " ".join(v for v in value if isinstance(v, str))
    if not isinstance(value, str):
        return None
    return normalise_text(value).strip() or None


def _read_jsonl(path: Path, text: str, data: Any, prefix: str, parsed: ParsedFile) -> None:
    not_object = "must be a JSON object (a record of our export)"
    for where, record in json_object_lines(text, f"{path.name}:", not_object):
        if isinstance(record, str):
            parsed.problems.append(f"{where}: {record}")
        else:
            _export_record(where, record, prefix, parsed)


def _export_record(where: str, record: dict, prefix: str, parsed: ParsedFile) -> None:
    problems = parsed.problems
    before = len(problems)
    document_id = record.get("document_id")
    annotator = record.get("annotator_id")
    if not isinstance(document_id, str) or not document_id:
        problems.append(f"{where}: document_id: missing")
    if not isinstance(annotator, str) or ":" not in annotator:
        problems.append(f"{where}: annotator_id: must be 'platform:id' as our export writes it")
    label = record.get("category")
    if label is not None and (not isinstance(label, str) or not label.strip()):
        problems.append(f"{where}: category: must be a category key or null")
    unit = record.get("unit_id")
    if unit is not None and (not isinstance(unit, int | str) or isinstance(unit, bool)):
        problems.append(f"{where}: unit_id: must be a number, a string or null")
    span = _export_span(where, "span", record.get("span"), problems)
    paired = record.get("paired_span")
    paired_span = None if paired is None else _export_span(where, "paired_span", paired, problems)
    comment = record.get("comment")
    if comment is not None and not isinstance(comment, str):
        problems.append(f"{where}: comment: must be a string or null")
    severity = record.get("severity")
    if severity is not None and not isinstance(severity, str):
        problems.append(f"{where}: severity: must be a string or null")
    if len(problems) > before or span is None:
        return
    annotator_platform, external_id = annotator.split(":", 1)
    platform = record.get("platform")
    platform = platform if isinstance(platform, str) and platform else annotator_platform
    session = parsed.session(
        where, prefix + document_id, (annotator_platform, external_id), platform
    )
    version = record.get("taxonomy_version")
    session.taxonomy_version = version if isinstance(version, str) else session.taxonomy_version
    removed = record.get("removed_at")
    session.annotations.append(
        ImportedAnnotation(
            where,
            label.strip() if label is not None else None,
            span,
            paired_span,
            comment,
            removed if isinstance(removed, str) else None,
            severity=severity,
            unit=("export", unit) if unit is not None else None,
        )
    )


def _export_span(where: str, name: str, value: Any, problems: list[str]) -> SpanInput | None:
    if not isinstance(value, dict) or not isinstance(value.get("text"), str):
        problems.append(f"{where}: {name}: must be an object with text")
        return None
    numbers = [value.get(key) for key in ("paragraph_id", "start", "end")]
    if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in numbers):
        problems.append(f"{where}: {name}: paragraph_id, start and end must be whole numbers")
        return None
    return SpanInput(normalise_text(value["text"]), *numbers)


def _read_human(path: Path, text: str, data: Any, prefix: str, parsed: ParsedFile) -> None:
    name = path.name
    if not isinstance(data, dict):
        parsed.problems.append(f"{name}: must be a JSON object keyed by book id")
        return
    annotator = ("import", path.stem)
    for book, entry in data.items():
        if entry is None:
            parsed.warnings.append(f"{name}:{book}: null: skipped (the file has no entry)")
            continue
        where = f"{name}:{book}"
        if not isinstance(entry, dict):
            parsed.problems.append(f"{where}: must be an object")
            continue
        summary = entry.get("summary")
        paragraphs = split_paragraphs(summary) if isinstance(summary, str) else ()
        if not paragraphs:
            parsed.problems.append(f"{where}: summary: missing or empty")
            continue
        document_id = prefix + book
        parsed.texts[document_id] = paragraphs
        session = parsed.session(where, document_id, annotator, "import")
        for kind in ("singles", "relations"):
            for number, anno in enumerate(entry.get(kind) or []):
                _book_annotation(f"{where} {kind}[{number}]", anno, session, parsed)


def _book_annotation(where: str, anno: Any, session: ImportedSession, parsed: ParsedFile) -> None:
    problems = parsed.problems
    if not isinstance(anno, dict):
        problems.append(f"{where}: must be an object")
        return
    relation = "span" not in anno
    first = anno.get("span_a") if relation else anno.get("span")
    second = anno.get("span_b") if relation else None
    labels = anno.get("shared_labels") if relation else anno.get("labels")
    question = _text(anno.get("shared_questions") if relation else anno.get("questions"))
    if not isinstance(first, str) or not first.strip():
        problems.append(f"{where}: {'span_a' if relation else 'span'}: missing or empty")
        return
    if relation and (not isinstance(second, str) or not second.strip()):
        problems.append(f"{where}: span_b: missing or empty")
        return
    field_name = "shared_labels" if relation else "labels"
    if labels is None:
        labels = []
    if not isinstance(labels, list) or not all(isinstance(x, str) for x in labels):
        problems.append(f"{where}: {field_name}: must be a list of strings")
        return
    kept: list[str | None] = [x for x in dict.fromkeys(x.strip() for x in labels) if x]
    if not kept:
        # The release's score counts it (Scorer.get_score counts every single and
        # relation): one unit without a category, in no Table 1 category.
        parsed.warnings.append(
            f"{where}: {field_name}: empty: imported without a category (it counts in the "
            "BooookScore score, in no category of errors per sentence)"
        )
        kept = [None]
    unit = ("book", where)  # the rows of one single or relation are one error unit
    for label in kept:
        session.annotations.append(
            ImportedAnnotation(
                where,
                label,
                SpanInput(normalise_text(first).strip()),
                SpanInput(normalise_text(second).strip()) if relation else None,
                question,
                order_pair=relation,
                unit=unit,
            )
        )


def _read_falte(path: Path, text: str, data: Any, prefix: str, parsed: ParsedFile) -> None:
    name = path.name
    if isinstance(data, list):
        rows = [(f"{name}:record {n}", row) for n, row in enumerate(data, 1)]
    else:
        reader = csv.DictReader(io.StringIO(text))
        missing = [c for c in FALTE_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            parsed.problems.append(f"{name}:1: header: missing column(s) {', '.join(missing)}")
            return
        rows = [(f"{name}:{reader.line_num}", row) for row in reader]
    for where, row in rows:
        if not isinstance(row, dict):
            parsed.problems.append(f"{where}: must be an object with FALTE's columns")
            continue
        _falte_row(where, row, prefix, parsed)


def _int(value: Any) -> int | None:
    try:
        number = int(str(value).strip())
    except (TypeError, ValueError):
        return None
    return number if number >= 0 else None


def _falte_row(where: str, row: dict, prefix: str, parsed: ParsedFile) -> None:
    story, code = _text(str(row.get("storyid") or "")), _text(str(row.get("survey_code") or ""))
    if story is None or code is None:
        parsed.problems.append(f"{where}: storyid, survey_code: missing")
        return
    worker = _text(str(row.get("annotator") or "")) or code
    session = parsed.session(where, prefix + story, ("falte", worker), "falte")
    label = _text(str(row.get("error") or ""))
    if label is None:
        parsed.problems.append(f"{where}: error: missing")
        return
    if label.casefold() == NO_ERROR:
        return  # the worker found nothing in this segment: the session stays
    segment = _int(row.get("segmentid"))
    if segment is None:
        parsed.problems.append(f"{where}: segmentid: must be a whole number")
        return
    text = _text(row.get("span1"))
    if text is None:
        parsed.problems.append(f"{where}: span1: missing")
        return
    start, end = _int(row.get("span1_start")), _int(row.get("span1_end"))
    hint = (start, end) if start is not None and end is not None and start < end else (None, None)
    span = SpanInput(text, segment, *hint)
    # span2 (a paired error's other span) may lie in any earlier segment: found by its text.
    second = _text(row.get("span2"))
    paired = SpanInput(second) if second else None
    comment = _text(row.get("feedback"))
    session.annotations.append(
        ImportedAnnotation(where, label, span, paired, comment, order_pair=paired is not None)
    )
