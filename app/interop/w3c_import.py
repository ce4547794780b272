"""W3C Web Annotation files read back into records (app.interop.records' shape).

Standard: W3C Web Annotation Data Model, W3C Recommendation 23 February 2017
(https://www.w3.org/TR/annotation-model/); app.interop.w3c writes the format and says
how our export uses it.

`read_w3c` reads our export back, and Annotations made by other tools: one Annotation, an
array of them, JSON Lines, an AnnotationPage or an AnnotationCollection with embedded
pages (5.1, 5.2). A span is placed at its TextPositionSelector when that quotes the
TextQuoteSelector's text; otherwise by the quote (its prefix and suffix choosing among
occurrences, a warning when they cannot). ``tagging`` bodies are labels too,
``describing`` ones and ``bodyValue`` comments; the document is the ``urn:falte:`` source,
or a source whose last path segment (with or without its extension) is a document id.
A linking Annotation whose body is another Annotation of the file gives that one its
paired span. Every refusal names the line or item and the field (app.interop.records).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import unquote, urlsplit

from app.interop.anchoring import DocumentText, locate_quote, normalise_quote
from app.interop.records import InteropError, Problem, read_record, span_dict
from app.interop.w3c import LINKING, SEVERITY_PREFIX, parse_source_iri

LABEL_PURPOSES = ("classifying", "tagging")
COMMENT_PURPOSES = ("commenting", "describing")


@dataclass
class W3CRead:
    """Records read from a W3C file, and warnings (spans placed by an ambiguous quote)."""

    records: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


@dataclass
class _Annotation:
    """One Annotation as read: where, its span placed, its bodies sorted out."""

    where: str
    id: str | None
    document_id: str
    span: dict[str, Any]
    labels: list[str]
    severity: str | None
    comment: str | None
    creator: str | None
    created: str | None
    links_to: str | None = None  # a linking Annotation: the id of the one it links
    paired: dict[str, Any] | None = None


@dataclass
class _Bodies:
    """What an Annotation's bodies say, sorted by purpose."""

    linking: bool
    labels: list[str] = field(default_factory=list)
    severities: list[str] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)


def _types(node: Mapping[str, Any]) -> set[str]:
    value = node.get("type", node.get("@type"))
    values = value if isinstance(value, list) else [value]
    return {v.removeprefix("oa:") for v in values if isinstance(v, str)}


def _many(value: Any) -> list[Any]:
    return [] if value is None else value if isinstance(value, list) else [value]


class _Reader:
    """Collects the Annotations of a file, and every problem with its place."""

    def __init__(self, documents: Mapping[str, Sequence[str]], name: str) -> None:
        self.documents = documents
        self.name = name
        self.texts: dict[str, DocumentText] = {}
        self.problems: list[Problem] = []
        self.warnings: list[str] = []
        self.annotations: list[_Annotation] = []

    def refuse(self, where: str, key: str, message: str) -> None:
        self.problems.append(Problem(where, key, message))

    # -- containers

    def read_text(self, text: str) -> None:
        text = text.removeprefix("\ufeff")
        # JSON Lines are cut at LF only: U+2028 and friends may stand inside a JSON string.
        lines = [
            (n, line.rstrip("\r")) for n, line in enumerate(text.split("\n"), 1) if line.strip()
        ]
        if not lines:
            self.refuse(self.name, "", "the file is empty")
            return
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            if len(lines) == 1 or not _is_json_object(lines[0][1]):
                self.refuse(self.name, "", f"not JSON ({exc.msg}, line {exc.lineno})")
                return
            self.read_lines(lines)
            return
        self.read_data(data, self.name)

    def read_lines(self, lines: list[tuple[int, str]]) -> None:
        for number, line in lines:
            where = f"{self.name}:{number}"
            try:
                node = json.loads(line)
            except json.JSONDecodeError as exc:
                self.refuse(where, "", f"not valid JSON ({exc.msg})")
                continue
            if not isinstance(node, dict) or "Annotation" not in _types(node):
                self.refuse(where, "type", "each line must be one Annotation")
                continue
            self.annotation(node, where)

    def read_data(self, data: Any, where: str) -> None:
        if isinstance(data, list):
            for index, node in enumerate(data):
                self.item(node, f"{where}: [{index}]")
            return
        if not isinstance(data, dict):
            self.refuse(where, "", "expected an Annotation, an array, a page or a collection")
            return
        types = _types(data)
        if "AnnotationCollection" in types:
            self.page(data.get("first"), where, "first")
        elif "AnnotationPage" in types:
            self.page(data, where, "")
        elif "Annotation" in types:
            self.annotation(data, where)
        else:
            self.refuse(
                where,
                "type",
                "expected an Annotation, an array of Annotations, an AnnotationPage or "
                "an AnnotationCollection (or JSON Lines, one Annotation a line)",
            )

    def item(self, node: Any, where: str) -> None:
        if isinstance(node, dict) and "Annotation" in _types(node):
            self.annotation(node, where)
        else:
            self.refuse(where, "type", "not an Annotation")

    def page(self, page: Any, where: str, path: str) -> None:
        """The Annotations of a page and of the pages embedded after it (`path`: the
        page's place in the file, "" for the file itself)."""
        while page is not None:
            key = path or "type"
            if isinstance(page, str):
                self.refuse(
                    where,
                    key,
                    f"the page {page!r} is given by its address; this import reads pages "
                    "embedded in the file (save every page into it)",
                )
                return
            if not isinstance(page, dict) or "AnnotationPage" not in _types(page):
                self.refuse(where, key, "not an AnnotationPage")
                return
            items = page.get("items")
            prefix = f"{path}.items" if path else "items"
            if not isinstance(items, list):
                self.refuse(where, prefix, "must be an array of Annotations")
                return
            for index, node in enumerate(items):
                self.item(node, f"{where}: {prefix}[{index}]")
            page, path = page.get("next"), f"{path}.next" if path else "next"

    # -- one Annotation

    def annotation(self, node: dict[str, Any], where: str) -> None:
        before = len(self.problems)
        bodies = _Bodies(linking=LINKING in _many(node.get("motivation")))
        if isinstance(node.get("bodyValue"), str):
            bodies.comments.append(node["bodyValue"])
        listed = _many(node.get("body"))
        for index, body in enumerate(listed):
            self.body(body, f"body[{index}]" if len(listed) > 1 else "body", where, bodies)
        if len(bodies.severities) > 1:
            self.refuse(where, "body", f"{len(bodies.severities)} severities; an error has one")
        if bodies.links and (bodies.labels or bodies.severities or bodies.comments):
            self.refuse(where, "body", "a linking Annotation carries no labels or comments")
        if len(bodies.links) > 1:
            self.refuse(where, "body", "links to more than one Annotation")
        placed = self.target(node.get("target"), where)
        creator = self.creator(node.get("creator"), where)
        created = node.get("created")
        if created is not None and not _is_datetime(created):
            self.refuse(where, "created", f"{created!r} is not an xsd:dateTime")
        identifier = node.get("id", node.get("@id"))
        if len(self.problems) > before or placed is None:
            return
        document_id, span = placed
        self.annotations.append(
            _Annotation(
                where,
                identifier if isinstance(identifier, str) else None,
                document_id,
                span,
                bodies.labels,
                bodies.severities[0] if bodies.severities else None,
                "\n\n".join(bodies.comments) if bodies.comments else None,
                creator,
                created,
                links_to=bodies.links[0] if bodies.links else None,
            )
        )

    def body(self, body: Any, key: str, where: str, bodies: _Bodies) -> None:
        if isinstance(body, str) or (isinstance(body, dict) and "value" not in body):
            purposes = _many(body.get("purpose")) if isinstance(body, dict) else []
            target = body if isinstance(body, str) else body.get("source", body.get("id"))
            if (bodies.linking or LINKING in purposes) and isinstance(target, str):
                bodies.links.append(target)
            else:
                self.refuse(
                    where,
                    key,
                    "an external resource as body is read only as the link of a paired "
                    "span (motivation or purpose linking); give labels and comments as "
                    "TextualBody",
                )
            return
        if not isinstance(body, dict):
            self.refuse(where, key, "must be a TextualBody")
            return
        value = body.get("value")
        if not isinstance(value, str) or not value.strip():
            self.refuse(where, f"{key}.value", "must be non-empty text")
            return
        for purpose in _many(body.get("purpose")) or [None]:
            if purpose in LABEL_PURPOSES and value.startswith(SEVERITY_PREFIX):
                bodies.severities.append(value.removeprefix(SEVERITY_PREFIX))
            elif purpose in LABEL_PURPOSES:
                bodies.labels.append(value)
            elif purpose in (*COMMENT_PURPOSES, None):
                bodies.comments.append(value)
            else:
                self.refuse(
                    where,
                    f"{key}.purpose",
                    f"{purpose!r} is not read (classifying or tagging: a label; commenting "
                    "or describing: the comment)",
                )

    def target(self, target: Any, where: str) -> tuple[str, dict[str, Any]] | None:
        targets = _many(target)
        if len(targets) != 1:
            self.refuse(
                where,
                "target",
                f"{len(targets)} targets; an error has one span (a paired span is a second, "
                "linking Annotation)",
            )
            return None
        target = targets[0]
        if not isinstance(target, dict) or not isinstance(target.get("source"), str):
            self.refuse(where, "target", "selects no text: give a source and a selector")
            return None
        document_id = self.document_id(target["source"])
        if document_id is None:
            self.refuse(
                where,
                "target.source",
                f"{target['source']!r} names no imported document (urn:falte:<study>:<id>, "
                "or an address ending in the document id)",
            )
            return None
        position, quote_selector = self.selectors(target.get("selector"), where)
        if position is None and quote_selector is None:
            return None
        return document_id, self.place(document_id, position, quote_selector, where)

    def selectors(
        self, selectors: Any, where: str
    ) -> tuple[tuple[int, int] | None, tuple[str, str, str] | None]:
        position = quoted = None
        for index, selector in enumerate(_many(selectors)):
            key = f"target.selector[{index}]"
            kind = _types(selector) if isinstance(selector, dict) else set()
            if "TextPositionSelector" in kind:
                start, end = selector.get("start"), selector.get("end")
                if not all(_count(v) for v in (start, end)) or start >= end:
                    self.refuse(where, key, "start and end must be whole numbers, start < end")
                    continue
                position = (start, end)
            elif "TextQuoteSelector" in kind:
                exact = selector.get("exact")
                prefix, suffix = selector.get("prefix", ""), selector.get("suffix", "")
                if not isinstance(exact, str) or not exact:
                    self.refuse(where, f"{key}.exact", "must be non-empty text")
                    continue
                if not isinstance(prefix, str) or not isinstance(suffix, str):
                    self.refuse(where, key, "prefix and suffix must be text")
                    continue
                quoted = tuple(normalise_quote(s) for s in (exact, prefix, suffix))
        if position is None and quoted is None:
            self.refuse(
                where, "target.selector", "needs a TextQuoteSelector or a TextPositionSelector"
            )
        return position, quoted  # type: ignore[return-value]

    def place(
        self,
        document_id: str,
        position: tuple[int, int] | None,
        quoted: tuple[str, str, str] | None,
        where: str,
    ) -> dict[str, Any]:
        text = self.texts.setdefault(document_id, DocumentText.of(self.documents[document_id]))
        start = end = None
        quotes = position is not None and position[1] <= len(text.text)
        if quotes and (quoted is None or text.text[position[0] : position[1]] == quoted[0]):
            start, end = position
        if start is None and quoted is not None:
            found = locate_quote(text.text, *quoted, near=position[0] if position else None)
            if found is None:
                self.refuse(
                    where,
                    "target.selector",
                    f"the quote {quoted[0][:60]!r} is not in document {document_id}",
                )
                return {}
            start, end = found.start, found.end
            if found.ambiguous:
                self.warnings.append(
                    f"{where}: the quote {quoted[0][:60]!r} fits {found.ties} places in "
                    f"{document_id} equally; the first one is used ({start}-{end})"
                )
            elif position is not None:
                self.warnings.append(
                    f"{where}: positions {position[0]}-{position[1]} do not quote "
                    f"{quoted[0][:60]!r}; placed by the quote at {start}-{end}"
                )
        if start is None or end is None:
            self.refuse(
                where,
                "target.selector",
                f"positions {position[0]}-{position[1]} lie outside document {document_id}"
                if position
                else f"no span found in document {document_id}",
            )
            return {}
        try:
            pid, pstart, pend = text.to_paragraph(start, end)
        except ValueError as exc:
            self.refuse(where, "target.selector", str(exc))
            return {}
        return span_dict(pid, pstart, pend, text.paragraphs[pid][pstart:pend])

    def document_id(self, source: str) -> str | None:
        ours = parse_source_iri(source)
        if ours is not None:
            return ours[1] if ours[1] in self.documents else None
        if source in self.documents:
            return source
        tail = unquote(urlsplit(source).path.rstrip("/").rsplit("/", 1)[-1])
        for candidate in (tail, tail.rsplit(".", 1)[0]):
            if candidate and candidate in self.documents:
                return candidate
        return None

    def creator(self, creator: Any, where: str) -> str | None:
        creators = _many(creator)
        if len(creators) > 1:
            self.refuse(where, "creator", "more than one creator; an annotation has one")
            return None
        if not creators:
            return None
        creator = creators[0]
        if isinstance(creator, str):
            return creator
        if isinstance(creator, dict):
            for key in ("nickname", "name", "id"):
                if isinstance(creator.get(key), str) and creator[key]:
                    return creator[key]
        self.refuse(where, "creator", "must be an IRI or an agent with a nickname, name or id")
        return None

    # -- pairs and records

    def records(self) -> list[dict[str, Any]]:
        by_id: dict[str, _Annotation] = {}
        for annotation in self.annotations:
            if annotation.id is None:
                continue
            if annotation.id in by_id:
                self.refuse(annotation.where, "id", f"also the id of {by_id[annotation.id].where}")
            by_id[annotation.id] = annotation
        for link in (a for a in self.annotations if a.links_to is not None):
            linked = by_id.get(link.links_to)  # type: ignore[arg-type]
            if linked is None or linked.links_to is not None:
                self.refuse(
                    link.where, "body", f"links to {link.links_to!r}, no Annotation in this file"
                )
            elif linked.document_id != link.document_id:
                self.refuse(link.where, "target.source", "a paired span must be in its document")
            elif linked.paired is not None:
                self.refuse(link.where, "body", f"a second paired span for {link.links_to!r}")
            else:
                linked.paired = link.span
        records = []
        primaries = [a for a in self.annotations if a.links_to is None]
        for unit, annotation in enumerate(primaries, 1):
            for label in annotation.labels or [None]:
                records.append(
                    read_record(
                        document_id=annotation.document_id,
                        span=annotation.span,
                        category=label,
                        paired_span=annotation.paired,
                        comment=annotation.comment,
                        severity=annotation.severity,
                        annotator_id=annotation.creator,
                        unit_id=unit,
                        created_at=annotation.created,
                    )
                )
        return records


def _is_json_object(line: str) -> bool:
    try:
        return isinstance(json.loads(line), dict)
    except json.JSONDecodeError:
        return False


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _is_datetime(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


def read_w3c(text: str, documents: Mapping[str, Sequence[str]], *, name: str = "input") -> W3CRead:
    """Records from a W3C file's text (JSON Lines, an Annotation, an array, a page or a
    collection). `documents` maps document ids to paragraphs; `name` names the file in
    problems. Raises InteropError listing every problem; nothing is read then."""
    reader = _Reader(documents, name)
    reader.read_text(text)
    return _finish(reader)


def read_w3c_data(
    data: Any, documents: Mapping[str, Sequence[str]], *, name: str = "input"
) -> W3CRead:
    """read_w3c for JSON already parsed (an Annotation, an array, a page or a collection)."""
    reader = _Reader(documents, name)
    reader.read_data(data, name)
    return _finish(reader)


def _finish(reader: _Reader) -> W3CRead:
    records = reader.records()
    if reader.problems:
        raise InteropError(reader.problems)
    return W3CRead(records, reader.warnings)
