"""W3C Web Annotation both ways (app.interop.w3c, app.interop.w3c_import), offline."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.interop.anchoring import DocumentText
from app.interop.pseudonyms import Pseudonyms
from app.interop.records import READ_KEYS, InteropError
from app.interop.w3c import (
    CONTEXT,
    export_annotations,
    export_lines,
    parse_source_iri,
    source_iri,
)
from app.interop.w3c_import import read_w3c, read_w3c_data
from tests.support import interop as fx
from tests.support.w3c_model import model_problems

KEEP = Pseudonyms(None, keep_ids=True)
SECRET = "test-secret-for-pseudonyms"


def lines(records=None, pseudonymise=KEEP) -> list[str]:
    records = fx.study_records() if records is None else records
    return list(export_lines(records, fx.DOCUMENTS, study=fx.STUDY, pseudonymise=pseudonymise))


def annotation(source: str, selectors: list, bodies: list | None = None, **extra) -> dict:
    """An Annotation as another tool might write it."""
    node = {
        "@context": CONTEXT,
        "id": extra.pop("id", "http://example.org/anno/1"),
        "type": "Annotation",
        "target": {"source": source, "selector": selectors},
        **extra,
    }
    if bodies is not None:
        node["body"] = bodies
    return node


def quoting(exact: str, pseudonymise=KEEP) -> list[dict]:
    """The exported Annotations whose target quotes `exact`, in export order."""
    exported = [json.loads(line) for line in lines(pseudonymise=pseudonymise)]
    return [a for a in exported if a["target"]["selector"][1]["exact"] == exact]


def quote(exact: str, prefix: str = "", suffix: str = "") -> dict:
    return {"type": "TextQuoteSelector", "exact": exact, "prefix": prefix, "suffix": suffix}


def position(start: int, end: int) -> dict:
    return {"type": "TextPositionSelector", "start": start, "end": end}


# --- export ------------------------------------------------------------------------------


def test_round_trip_gives_back_the_records_but_their_ids():
    records = fx.study_records()
    read = read_w3c("\n".join(lines(records)), fx.DOCUMENTS, name="export.jsonl")
    assert fx.projection(read.records) == fx.projection(records)
    assert fx.units(read.records) == fx.units(records)  # the two-label unit stays one unit
    assert read.warnings == []
    assert all(list(r) == list(READ_KEYS) for r in read.records)


def test_a_line_separator_inside_a_comment_stays_inside_its_line():
    comment = "first\u2028second\u2029third\x85fourth"
    records = [dict(fx.study_records()[0], comment=comment)]
    (line,) = lines(records)
    assert len(line.splitlines()) == 1
    assert read_w3c(line, fx.DOCUMENTS).records[0]["comment"] == comment


def test_every_line_is_one_annotation_with_its_context_and_keeps_the_model():
    exported = lines()
    # 10 rows: one unit of two rows, three pairs (each a second, linking Annotation).
    assert len(exported) == 9 + 3
    for line in exported:
        node = json.loads(line)
        assert node["@context"] == CONTEXT
        assert model_problems(node) == [], line


def test_the_model_check_fails_on_what_breaks_the_recommendation():
    good = json.loads(lines()[0])
    broken = dict(good, motivation="assessing", id="not an iri", extra="x")
    del broken["target"]
    problems = model_problems(broken)
    assert "target: MUST have 1 or more" in problems
    assert "id: an Annotation MUST have exactly 1 IRI" in problems
    assert ".motivation: 'assessing' is not a term of the anno.jsonld context" in problems
    assert ".extra: not a term of the anno.jsonld context" in problems


def test_selectors_count_code_points_over_paragraphs_joined_by_a_blank_line():
    text = fx.DOCUMENTS["ch-1"]
    joined = "\n\n".join(text)
    first, *_ = (json.loads(line) for line in lines())
    # "Zoë met Łukasz": Zoë is three code points (NFC), the emoji after it one.
    by_type = {s["type"]: s for s in first["target"]["selector"]}
    assert by_type["TextPositionSelector"] == {"type": "TextPositionSelector", "start": 8,
                                               "end": 14}  # fmt: skip
    assert by_type["TextQuoteSelector"] == {
        "type": "TextQuoteSelector",
        "exact": "Łukasz",
        "prefix": "Zoë met ",
        "suffix": joined[14:46],
    }
    assert len(by_type["TextQuoteSelector"]["suffix"]) == 32
    # The third paragraph's span starts after both earlier paragraphs and two separators.
    (third,) = quoting("the ship had never left")
    start = third["target"]["selector"][0]["start"]
    assert start == len(text[0]) + 2 + len(text[1]) + 2 + text[2].index("the ship had")


def test_bodies_say_category_severity_and_comment_with_their_purposes():
    (node,) = quoting("🚢 at the harbour")  # the unit with two labels: one Annotation
    assert node["motivation"] == "classifying"
    assert node["body"] == [
        {"type": "TextualBody", "purpose": "classifying", "value": "missing-info"},
        {"type": "TextualBody", "purpose": "classifying", "value": "new-person"},
        {"type": "TextualBody", "purpose": "classifying", "value": "severity:major"},
        {
            "type": "TextualBody",
            "purpose": "commenting",
            "value": "Which harbour?\nAnd which ship?",
            "format": "text/plain",
        },
    ]
    (unlabelled,) = quoting("👋🏽 Nobody answered.")
    assert "body" not in unlabelled  # no label, no severity, no comment: no body


def test_a_paired_span_is_a_linking_annotation_whose_body_is_the_first():
    exported = [json.loads(line) for line in lines()]
    (first,) = quoting("waved again")
    link = exported[exported.index(first) + 1]
    assert first["body"][0]["value"] == "repetition"
    assert link["id"] == first["id"] + ":paired"
    assert link["motivation"] == "linking"
    assert link["body"] == {
        "type": "SpecificResource",
        "source": first["id"],
        "purpose": "linking",
    }
    assert link["target"]["selector"][1]["exact"] == "waved at the ship"
    assert link["creator"] == first["creator"] and link["created"] == first["created"]


def test_creators_are_pseudonymised_unless_ids_are_kept():
    pseudonyms = Pseudonyms(SECRET)
    exported = "\n".join(lines(pseudonymise=pseudonyms))
    assert "5f3c0a1b2c3d4e5f60718293" not in exported and "A1B2C3D4E5F6G7" not in exported
    first = json.loads(exported.splitlines()[0])
    assert first["creator"]["nickname"] == pseudonyms(fx.ALICE)
    assert first["creator"]["type"] == "Person"
    read = read_w3c(exported, fx.DOCUMENTS)
    assert {r["annotator_id"] for r in read.records} == {pseudonyms(fx.ALICE), pseudonyms(fx.BOB)}
    kept = json.loads(lines()[0])
    assert kept["creator"]["nickname"] == fx.ALICE
    assert kept["creator"]["id"] == "urn:falte:demo:annotator:prolific%3A5f3c0a1b2c3d4e5f60718293"


def test_document_sources_are_urns_that_parse_back():
    assert source_iri("demo", "ch-1") == "urn:falte:demo:ch-1"
    odd = source_iri("demo", "book 2/ch:3#x")
    assert odd == "urn:falte:demo:book%202%2Fch%3A3%23x"
    assert parse_source_iri(odd) == ("demo", "book 2/ch:3#x")
    assert parse_source_iri("https://example.org/ch-1") is None


def test_export_refuses_a_record_that_does_not_quote_its_document():
    bad = fx.record("ch-1", {"paragraph_id": 0, "start": 0, "end": 3, "text": "Zoe"}, "new-person",
                 unit_id=1)  # fmt: skip
    with pytest.raises(InteropError) as caught:
        list(export_annotations([bad], fx.DOCUMENTS, study=fx.STUDY, pseudonymise=KEEP))
    assert str(caught.value) == "annotation 1 (document ch-1): span.text: does not quote the " \
        "document at its offsets"  # fmt: skip
    with pytest.raises(InteropError, match="document_id: no such document given"):
        list(export_annotations([dict(bad, document_id="nope")], fx.DOCUMENTS, study=fx.STUDY,
                                pseudonymise=KEEP))  # fmt: skip


# --- import of other tools' files --------------------------------------------------------


def test_a_single_annotation_an_array_a_page_and_a_collection_are_read():
    text = DocumentText.of(fx.DOCUMENTS["ch-2"]).text
    one = annotation(
        "https://example.org/texts/ch-2.txt",
        [quote("café", "Nobody came to the ", ".")],
        [{"type": "TextualBody", "purpose": "tagging", "value": "missing-info"}],
    )
    expected = fx.span("ch-2", 1, "café")
    assert text.count("café") == 4
    for data in (
        one,
        [one],
        {"type": "AnnotationPage", "items": [one]},
        {"@context": CONTEXT, "type": "AnnotationCollection", "first": {
            "type": "AnnotationPage", "items": [], "next": {"type": "AnnotationPage",
                                                            "items": [one]}}},
    ):  # fmt: skip
        read = read_w3c_data(data, fx.DOCUMENTS, name="tool.json")
        assert [r["span"] for r in read.records] == [expected], data
        assert read.records[0]["category"] == "missing-info"
        assert read.warnings == []
    assert read_w3c(json.dumps([one], indent=2), fx.DOCUMENTS).records[0]["span"] == expected


def test_positions_that_disagree_are_replaced_by_the_quote_and_said():
    # A tool that counted UTF-16 code units (the emoji is two) is one off.
    node = annotation(
        "urn:falte:other-study:ch-1",
        [position(9, 15), quote("Łukasz", "Zoë met ", " 🚢")],
        [{"type": "TextualBody", "value": "Who is this?"}],  # no purpose: a comment
        creator="https://example.org/users/kim",
        created="2024-12-01T08:00:00Z",
    )
    read = read_w3c(json.dumps(node), fx.DOCUMENTS, name="tool.json")
    assert read.records == [
        {
            "document_id": "ch-1",
            "paragraph_id": 0,
            "category": None,
            "span": fx.span("ch-1", 0, "Łukasz"),
            "paired_span": None,
            "comment": "Who is this?",
            "severity": None,
            "annotator_id": "https://example.org/users/kim",
            "unit_id": 1,
            "created_at": "2024-12-01T08:00:00Z",
        }
    ]
    assert read.warnings == [
        "tool.json: positions 9-15 do not quote 'Łukasz'; placed by the quote at 8-14"
    ]


def test_prefix_and_suffix_choose_between_occurrences():
    second = annotation("ch-2", [quote("the café", "closed at noon; ", " is gone")])
    read = read_w3c(json.dumps(second), fx.DOCUMENTS)
    assert read.records[0]["span"] == fx.span("ch-2", 0, "the café", occurrence=1)
    assert read.warnings == []
    # Without context, the first of equals is taken and the reader says so.
    bare = annotation("ch-2", [quote("café")], id="http://example.org/anno/2")
    read = read_w3c(json.dumps(bare), fx.DOCUMENTS, name="t.json")
    assert read.records[0]["span"] == fx.span("ch-2", 0, "café")
    assert read.warnings == ["t.json: the quote 'café' fits 4 places in ch-2 equally; the "
                             "first one is used (4-8)"]  # fmt: skip


def test_a_decomposed_quote_finds_the_composed_stored_text():
    node = annotation("ch-1", [quote(fx.nfd("Zoë said"))])
    assert read_w3c(json.dumps(node), fx.DOCUMENTS).records[0]["span"] == fx.span(
        "ch-1", 2, "Zoë said"
    )


def test_hypothesis_style_body_value_and_a_linking_pair_from_another_tool():
    first = annotation("ch-1", [quote("waved again")], bodyValue="Repeated.",
                       id="http://tool/a1", motivation="commenting")  # fmt: skip
    link = annotation(
        "ch-1",
        [quote("waved at the ship")],
        ["http://tool/a1"],
        id="http://tool/a2",
        motivation="linking",
    )
    read = read_w3c("\n".join(json.dumps(a) for a in (link, first)), fx.DOCUMENTS)
    (only,) = read.records
    assert only["comment"] == "Repeated."
    assert only["span"] == fx.span("ch-1", 1, "waved again")
    assert only["paired_span"] == fx.span("ch-1", 1, "waved at the ship")


# --- refusals ----------------------------------------------------------------------------


def refused(text: str, name: str = "in.jsonl") -> list[str]:
    with pytest.raises(InteropError) as caught:
        read_w3c(text, fx.DOCUMENTS, name=name)
    return [str(problem) for problem in caught.value.problems]


def test_every_refusal_names_the_line_and_the_field():
    good = lines()[0]
    crossing = annotation("ch-1", [position(40, 70)], id="x:1")
    unknown = annotation("urn:falte:demo:ch-9", [quote("ship")], id="x:2")
    purpose = annotation(
        "ch-1",
        [quote("ship")],
        [{"type": "TextualBody", "purpose": "editing", "value": "ship"}],
        id="x:3",
    )
    absent = annotation("ch-1", [quote("Nowhere to be seen")], id="x:4")
    no_selector = annotation("ch-1", [], id="x:5")
    two = annotation(
        "ch-1",
        [quote("ship")],
        [
            {"type": "TextualBody", "purpose": "classifying", "value": "severity:minor"},
            {"type": "TextualBody", "purpose": "classifying", "value": "severity:major"},
        ],
        id="x:6",
    )
    dangling = annotation("ch-1", [quote("ship")], ["x:99"], id="x:7", motivation="linking")
    text = "\n".join([good, "{not json", *(json.dumps(a) for a in (
        crossing, unknown, purpose, absent, no_selector, two, dangling)), "[1]"])  # fmt: skip
    assert refused(text) == [
        "in.jsonl:2: not valid JSON (Expecting property name enclosed in double quotes)",
        "in.jsonl:3: target.selector: the span 40-70 crosses from paragraph 0 into "
        "paragraph 1; a span must lie within one paragraph",
        "in.jsonl:4: target.source: 'urn:falte:demo:ch-9' names no imported document "
        "(urn:falte:<study>:<id>, or an address ending in the document id)",
        "in.jsonl:5: body.purpose: 'editing' is not read (classifying or tagging: a label; "
        "commenting or describing: the comment)",
        "in.jsonl:6: target.selector: the quote 'Nowhere to be seen' is not in document ch-1",
        "in.jsonl:7: target.selector: needs a TextQuoteSelector or a TextPositionSelector",
        "in.jsonl:8: body: 2 severities; an error has one",
        "in.jsonl:10: type: each line must be one Annotation",
        "in.jsonl:9: body: links to 'x:99', no Annotation in this file",
    ]


def test_refusals_in_arrays_and_collections_name_the_item():
    assert refused(json.dumps([json.loads(lines()[0]), {"type": "Note"}]), "a.json") == [
        "a.json: [1]: type: not an Annotation"
    ]
    collection = {"type": "AnnotationCollection", "first": "https://example.org/page1"}
    assert refused(json.dumps(collection), "c.json") == [
        "c.json: first: the page 'https://example.org/page1' is given by its address; "
        "this import reads pages embedded in the file (save every page into it)"
    ]
    pages = {"type": "AnnotationCollection", "first": {"type": "AnnotationPage", "items": [],
             "next": {"type": "AnnotationPage", "items": [{"type": "Note"}]}}}  # fmt: skip
    assert refused(json.dumps(pages), "c.json") == [
        "c.json: first.next.items[0]: type: not an Annotation"
    ]
    outside = annotation("ch-2", [position(0, 500)])
    assert refused(json.dumps(outside), "o.json") == [
        "o.json: target.selector: positions 0-500 lie outside document ch-2"
    ]
    page = {"type": "AnnotationPage", "items": [{"type": "Annotation", "target": "ch-1"}]}
    assert refused(json.dumps(page), "p.json") == [
        "p.json: items[0]: target: selects no text: give a source and a selector"
    ]
    assert refused("", "e.json") == ["e.json: the file is empty"]
    assert refused('{"type": "Annotation",', "t.json") == [
        "t.json: not JSON (Expecting property name enclosed in double quotes, line 1)"
    ]


def test_a_refused_file_gives_no_records_even_for_its_good_lines():
    text = "\n".join([lines()[0], json.dumps(annotation("ch-1", [quote("absent text")]))])
    with pytest.raises(InteropError) as caught:
        read_w3c(text, fx.DOCUMENTS, name="f.jsonl")
    assert len(caught.value.problems) == 1


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_any_spans_round_trip_exactly(data):
    documents, records = fx.random_study(data.draw)
    exported = list(export_lines(records, documents, study=fx.STUDY, pseudonymise=KEEP))
    for line in exported:
        assert model_problems(json.loads(line)) == []
    read = read_w3c("\n".join(exported), documents)
    assert fx.projection(read.records) == fx.projection(records)
    assert fx.units(read.records) == fx.units(records)
