"""W3C Web Annotation, both ways: export records <-> Annotations (JSON Lines).

Standard: W3C Web Annotation Data Model, W3C Recommendation 23 February 2017
(https://www.w3.org/TR/annotation-model/), in the JSON-LD serialisation of its context
http://www.w3.org/ns/anno.jsonld. Section numbers below are that document's.

One error unit (the export rows of one span, one row per label) is one Annotation
(3.1: ``@context``, ``id``, ``type: "Annotation"``, ``target``), written on a line of
its own with its own ``@context`` (``export-annotations --format w3c``):

- ``target``: a SpecificResource (3.2.3, 4) whose ``source`` is the document,
  ``urn:falte:<study>:<document id>`` (each part percent-encoded where it holds more than
  letters, digits and ``-._~!$&'()*+,;=@``), with two selectors of the same span (4.2:
  several selectors are alternatives): a TextPositionSelector (4.2.5: start and end in
  Unicode code points of the document text, the paragraphs joined by ``"\\n\\n"``,
  end exclusive) and a TextQuoteSelector (4.2.4: ``exact``, and ``prefix`` and
  ``suffix`` of up to 32 characters, app.interop.anchoring).
- ``body``: TextualBodies (3.2.4) with a purpose (3.3.5): each label (category key) as
  ``classifying``, the severity as ``classifying`` with value ``severity:<key>``, the
  comment as ``commenting`` (``format: text/plain``). ``motivation: "classifying"``.
- ``creator`` (3.3.2): ``{"id": "urn:falte:<study>:annotator:<id>", "type": "Person",
  "nickname": <id>}``, the id pseudonymised (app.interop.pseudonyms) unless kept;
  ``created`` (3.3.1): the annotation's ``created_at``.
- A paired span (the earlier text a paired error relates to) is a second Annotation
  right after the first, ``<first id>:paired``, with ``motivation: "linking"``, its
  ``target`` the paired span (same selectors) and as its body a SpecificResource whose
  ``source`` is the first Annotation's id and whose ``purpose`` is ``linking`` (4.1):
  "this span is linked to that annotation", in the model's own terms, so that tools
  that know nothing of pairs still show both spans.

Only terms of the anno.jsonld context are used, so that JSON-LD processors keep every
value (the Recommendation's motivation ``assessing`` is missing from the published
context, hence ``classifying``).

The reverse, W3C files to records, is app.interop.w3c_import.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import quote, unquote

from app.interop.anchoring import DocumentText
from app.interop.records import InteropError, Problem, same_unit_key
from app.rules.jsonl import json_line

CONTEXT = "http://www.w3.org/ns/anno.jsonld"
URN_PREFIX = "urn:falte:"
SEVERITY_PREFIX = "severity:"
MOTIVATION = "classifying"
LINKING = "linking"
_IRI_SAFE = "-._~!$&'()*+,;=@"  # RFC 3986 unreserved and sub-delims, and "@"

Pseudonymise = Callable[[str | None], str | None]


# --- identifiers -------------------------------------------------------------------------


def _part(value: str) -> str:
    return quote(value, safe=_IRI_SAFE)


def source_iri(study: str, document_id: str) -> str:
    """The document's IRI: urn:falte:<study>:<document id>."""
    return f"{URN_PREFIX}{_part(study)}:{_part(document_id)}"


def annotation_iri(study: str, number: int) -> str:
    """The id of the `number`th Annotation of an export."""
    return f"{URN_PREFIX}{_part(study)}:annotation:{number}"


def creator_iri(study: str, annotator: str) -> str:
    """The IRI of an annotator (its id as exported: pseudonymised or kept)."""
    return f"{URN_PREFIX}{_part(study)}:annotator:{_part(annotator)}"


def parse_source_iri(iri: str) -> tuple[str, str] | None:
    """(study, document id) of a urn:falte: document IRI; None for any other IRI."""
    if not iri.startswith(URN_PREFIX):
        return None
    parts = iri.removeprefix(URN_PREFIX).split(":")
    if len(parts) != 2 or not all(parts):
        return None
    return unquote(parts[0]), unquote(parts[1])


# --- records -> Annotations --------------------------------------------------------------


def _unit_key(record: Mapping[str, Any]) -> tuple | None:
    """What rows of one error unit share (None: a row without unit_id, a unit alone)."""
    if record.get("unit_id") is None:
        return None
    return (record.get("session_id"), record["unit_id"], same_unit_key(dict(record)))


def _units(records: Iterable[Mapping[str, Any]]) -> Iterator[list[Mapping[str, Any]]]:
    """Consecutive rows of one error unit, as the export orders them."""
    group: list[Mapping[str, Any]] = []
    for record in records:
        key = _unit_key(record)
        if group and key is not None and key == _unit_key(group[0]):
            group.append(record)
            continue
        if group:
            yield group
        group = [record]
    if group:
        yield group


def _checked_span(
    span: Mapping[str, Any], text: DocumentText, where: str, key: str
) -> tuple[int, int]:
    """A record's span as document offsets, after checking it quotes the document."""
    try:
        return text.span_offsets(span)
    except ValueError as exc:
        raise InteropError([Problem(where, f"{key}.text", str(exc))]) from None


def _target(source: str, text: DocumentText, start: int, end: int) -> dict[str, Any]:
    prefix, suffix = text.context(start, end)
    return {
        "source": source,
        "selector": [
            {"type": "TextPositionSelector", "start": start, "end": end},
            {
                "type": "TextQuoteSelector",
                "exact": text.text[start:end],
                "prefix": prefix,
                "suffix": suffix,
            },
        ],
    }


def _creator(study: str, annotator: str | None) -> dict[str, Any] | None:
    if annotator is None:
        return None
    return {"id": creator_iri(study, annotator), "type": "Person", "nickname": annotator}


def _bodies(unit: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    first = unit[0]
    bodies = [
        {"type": "TextualBody", "purpose": "classifying", "value": record["category"]}
        for record in unit
        if record.get("category") is not None
    ]
    if first.get("severity") is not None:
        value = SEVERITY_PREFIX + first["severity"]
        bodies.append({"type": "TextualBody", "purpose": "classifying", "value": value})
    if first.get("comment") is not None:
        bodies.append(
            {
                "type": "TextualBody",
                "purpose": "commenting",
                "value": first["comment"],
                "format": "text/plain",
            }
        )
    return bodies


def _without_none(annotation: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in annotation.items() if value not in (None, [])}


def unit_annotations(
    unit: Sequence[Mapping[str, Any]],
    text: DocumentText,
    *,
    study: str,
    number: int,
    pseudonymise: Pseudonymise,
    where: str = "record",
) -> list[dict[str, Any]]:
    """The Annotation of one error unit (its rows), and its paired span's linking one."""
    first = unit[0]
    source = source_iri(study, first["document_id"])
    creator = _creator(study, pseudonymise(first.get("annotator_id")))
    identifier = annotation_iri(study, number)
    start, end = _checked_span(first["span"], text, where, "span")
    annotation = {
        "@context": CONTEXT,
        "id": identifier,
        "type": "Annotation",
        "motivation": MOTIVATION,
        "created": first.get("created_at"),
        "creator": creator,
        "body": _bodies(unit),
        "target": _target(source, text, start, end),
    }
    annotations = [_without_none(annotation)]
    if first.get("paired_span") is not None:
        start, end = _checked_span(first["paired_span"], text, where, "paired_span")
        link = {
            "@context": CONTEXT,
            "id": f"{identifier}:paired",
            "type": "Annotation",
            "motivation": LINKING,
            "created": first.get("created_at"),
            "creator": creator,
            "body": {"type": "SpecificResource", "source": identifier, "purpose": LINKING},
            "target": _target(source, text, start, end),
        }
        annotations.append(_without_none(link))
    return annotations


def export_annotations(
    records: Iterable[Mapping[str, Any]],
    documents: Mapping[str, Sequence[str]],
    *,
    study: str,
    pseudonymise: Pseudonymise,
) -> Iterator[dict[str, Any]]:
    """W3C Annotations of export records (in the export's order), units numbered from 1.

    `documents` maps each document id to its paragraphs (it may read them when asked:
    the records are read one by one, and only the current document's text is kept, so
    records grouped by document, as the export orders them, read each document once);
    `pseudonymise` maps an annotator id to what the export shows
    (app.interop.pseudonyms.Pseudonyms)."""
    current: tuple[str, DocumentText] | None = None
    for number, unit in enumerate(_units(records), 1):
        document_id = unit[0]["document_id"]
        where = f"annotation {number} (document {document_id})"
        if current is None or current[0] != document_id:
            if document_id not in documents:
                raise InteropError([Problem(where, "document_id", "no such document given")])
            current = (document_id, DocumentText.of(documents[document_id]))
        yield from unit_annotations(
            unit,
            current[1],
            study=study,
            number=number,
            pseudonymise=pseudonymise,
            where=where,
        )


def export_lines(
    records: Iterable[Mapping[str, Any]],
    documents: Mapping[str, Sequence[str]],
    *,
    study: str,
    pseudonymise: Pseudonymise,
) -> Iterator[str]:
    """export_annotations as JSON Lines (one Annotation a line, no newline)."""
    for annotation in export_annotations(
        records, documents, study=study, pseudonymise=pseudonymise
    ):
        yield json_line(annotation)
