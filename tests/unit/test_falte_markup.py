"""FALTE's own input (stories.json with entity marks) is read as FALTE's page shows it."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.imports.document_formats import DocumentFileError, parse_documents
from app.imports.falte_markup import MarkupError, parse_paragraph

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "falte"


def test_marks_are_removed_and_spaces_render_as_in_a_browser():
    marked = parse_paragraph(
        '<span class = "ne ne-4"> John</span><span class = "ne ne-0"> Fenwick</span>, an '
        'aspiring artist, accepts a loan from Mr.<span class = "ne ne-10"> Morrison</span>.'
    )
    # The leading space inside the first span is at the start of the block: not shown.
    assert marked.text == "John Fenwick, an aspiring artist, accepts a loan from Mr. Morrison."
    assert marked.entities == ("John", "Fenwick", "Morrison")


def test_spaces_between_marks_and_character_references():
    marked = parse_paragraph(
        '<span class="ne ne-13">Mr.</span>  \n<span class="ne ne-8">Bingley</span> &amp; Jane'
    )
    assert marked.text == "Mr. Bingley & Jane"
    assert marked.entities == ("Mr.", "Bingley")


def test_plain_text_is_left_exactly_as_it_is():
    for text in ("3 < 4 &amp; so on.", "Two  spaces stay.", "a<", "x < y > z"):
        assert parse_paragraph(text).text == text
        assert parse_paragraph(text).entities == ()


MARK = '<span class="ne ne-0">Anna</span> '
OTHER_MARKUP = [
    "She met <b>Bob</b>.",
    '<span class="ne">Anna</span>',
    '<span class="ne ne-1" style="color:red">Anna</span>',
    '<span class="ne ne-x">Anna</span>',
    "<img src=x onerror=alert(1)>",
    "Anna</span>",
    "<!-- note --> Anna",
    "<br/>",
]


@pytest.mark.parametrize(
    "paragraph",
    [
        *(MARK + other for other in OTHER_MARKUP),
        '<span class="ne ne-1">Anna',
        '<span class="ne ne-1"><span class="ne ne-2">A</span></span>',
    ],
)
def test_other_markup_in_a_paragraph_with_entity_marks_is_refused(paragraph):
    with pytest.raises(MarkupError):
        parse_paragraph(paragraph)


@pytest.mark.parametrize(
    "paragraph",
    [
        *OTHER_MARKUP,
        "<think>The user wants a summary.</think> Anna left.",
        "if a<b and c>d then print(x)",
        'Use <div class="x"> for layout &amp; more.',
    ],
)
def test_a_paragraph_without_entity_marks_is_plain_text_as_it_is(paragraph):
    # Issue 28: such a paragraph was refused, although a .txt file imports it as it is.
    assert parse_paragraph(paragraph).text == paragraph
    assert parse_paragraph(paragraph).entities == ()


def test_stories_json_imports_as_plain_text_with_entities():
    documents = {d.external_id: d for d in parse_documents(FIXTURES / "stories.json")}
    first = documents["test0"]
    assert first.paragraphs[0] == (
        "John Fenwick, an aspiring artist, accepts a loan from Mr. Morrison to move to London."
    )
    assert first.paragraphs[1] == "Fenwick writes to Mrs. Morrison & her son."
    assert first.entities == ("John", "Fenwick", "Morrison")
    second = documents["test1"]
    assert second.paragraphs[0].startswith("Mr. Bingley, a wealthy man,")
    assert second.paragraphs[1] == "A plain paragraph: 3 < 4 & so on."
    assert second.entities == ("Mr.", "Bingley", "Jane")


def test_other_markup_is_refused_with_file_record_and_paragraph():
    with pytest.raises(DocumentFileError) as caught:
        parse_documents(FIXTURES / "bad-markup.json")
    (problem,) = caught.value.problems
    assert str(problem).startswith(
        "bad-markup.json:record 1 (story): sentences[1]: markup other than FALTE's entity marks"
    )
