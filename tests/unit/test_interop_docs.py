"""docs/interop.md's examples are what the code writes (app.interop), so the page cannot
drift from the formats it documents."""

from __future__ import annotations

import json
import re
from pathlib import Path

from app.interop.brat import annotation_conf, brat_ann
from app.interop.pseudonyms import Pseudonyms
from app.interop.w3c import export_annotations

DOC = (Path(__file__).resolve().parents[2] / "docs" / "interop.md").read_text("utf-8")
DOCUMENTS = {
    "ch-1": [
        "Zoë met Łukasz at the harbour. The ship left at dawn.",
        "Later, Zoë said the ship had never left.",
    ]
}
TAXONOMY = {
    "categories": [
        {"key": "new-person", "type": "singleton"},
        {"key": "inconsistency", "type": "paired"},
    ],
    "severities": [{"key": "minor"}, {"key": "major"}],
}


def span(paragraph_id: int, text: str) -> dict:
    start = DOCUMENTS["ch-1"][paragraph_id].index(text)
    return {"paragraph_id": paragraph_id, "start": start, "end": start + len(text), "text": text}


RECORD = {
    "document_id": "ch-1",
    "paragraph_id": 1,
    "category": "inconsistency",
    "span": span(1, "the ship had never left"),
    "paired_span": span(0, "The ship left at dawn"),
    "comment": "Contradicts paragraph 1.",
    "severity": "major",
    "annotator_id": "prolific:5f3c0a1b2c3d4e5f60718293",
    "session_id": "7",
    "unit_id": 12,
    "created_at": "2025-03-01T10:00:00.000000+00:00",
}


def blocks(section: str, language: str = "") -> list[str]:
    """The fenced blocks of one section of the page."""
    found = re.search(rf"^## {re.escape(section)}.*?\n(.*?)(?=^## |\Z)", DOC, re.M | re.S)
    assert found, section
    return re.findall(rf"^ *```{language}\n(.*?)^ *```", found.group(1), re.M | re.S)


def test_the_w3c_example_is_the_export_of_its_record():
    text = blocks("W3C Web Annotation", "json")[0]
    decoder, at, shown = json.JSONDecoder(), 0, []
    while at < len(text.strip()):
        value, at = decoder.raw_decode(text, at)
        shown.append(value)
        at += len(text[at:]) - len(text[at:].lstrip())
    exported = export_annotations(
        [RECORD], DOCUMENTS, study="demo", pseudonymise=Pseudonyms("example secret")
    )
    assert shown == list(exported)


def test_the_brat_examples_are_the_export_of_the_same_record():
    ann, conf = blocks("brat standoff")[1:3]
    assert ann == brat_ann([RECORD], DOCUMENTS["ch-1"])
    assert conf == annotation_conf(TAXONOMY)
