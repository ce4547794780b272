"""A document's joined text and its offsets (app.interop.anchoring): code points, the blank
line between paragraphs, and quotes found with their prefix and suffix."""

from __future__ import annotations

import pytest

from app.interop.anchoring import DocumentText, locate_quote, normalise_quote

TEXT = DocumentText.of(["Zoë 🚢 left.", "He\nwaved.", "Gone."])


def test_paragraphs_are_joined_by_a_blank_line_and_counted_in_code_points():
    assert TEXT.text == "Zoë 🚢 left.\n\nHe\nwaved.\n\nGone."
    assert TEXT.starts == (0, 13, 24)  # "Zoë 🚢 left." is 11 code points (13 UTF-16 units)
    assert TEXT.to_document(1, 3, 9) == (16, 22)
    assert TEXT.text[16:22] == "waved."
    assert TEXT.to_paragraph(16, 22) == (1, 3, 9)
    assert TEXT.span_offsets({"paragraph_id": 2, "start": 0, "end": 4, "text": "Gone"}) == (
        24,
        28,
    )


@pytest.mark.parametrize(
    ("start", "end", "message"),
    [
        (5, 15, "the span 5-15 crosses from paragraph 0 into paragraph 1; a span must lie "
                "within one paragraph"),
        (5, 12, "the span 5-12 crosses from paragraph 0 into the blank line after it; a span "
                "must lie within one paragraph"),
        (11, 13, "offset 11 falls between paragraphs 0 and 1"),
        (3, 3, "offsets 3-3 are not a span of the document's text (29 characters; start must "
               "be below end)"),
        (28, 30, "offsets 28-30 are not a span of the document's text (29 characters; start "
                 "must be below end)"),
    ],
)  # fmt: skip
def test_offsets_with_no_place_in_one_paragraph_are_refused(start, end, message):
    with pytest.raises(ValueError) as caught:
        TEXT.to_paragraph(start, end)
    assert str(caught.value) == message


def test_a_span_that_does_not_quote_its_paragraph_has_no_offsets():
    for span in (
        {"paragraph_id": 0, "start": 0, "end": 3, "text": "Zoe"},
        {"paragraph_id": 3, "start": 0, "end": 1, "text": "x"},
        {"paragraph_id": 2, "start": 3, "end": 9, "text": "e."},
    ):
        with pytest.raises(ValueError, match="does not quote the document at its offsets"):
            TEXT.span_offsets(span)


def test_the_quote_context_stops_at_the_ends_of_the_text():
    assert TEXT.context(0, 3) == ("", " 🚢 left.\n\nHe\nwaved.\n\nGone.")
    assert TEXT.context(24, 29, size=4) == ("d.\n\n", "")


def test_prefix_and_suffix_choose_the_occurrence_then_the_nearest_position():
    text = "a cat, the cat, my cat"
    assert locate_quote(text, "cat", "the ", ",").start == 11
    assert locate_quote(text, "cat", "my ", "").start == 19
    assert locate_quote(text, "cat", "xx", "yy", near=18).start == 19  # nothing fits: nearest
    tie = locate_quote(text, "cat")
    assert (tie.start, tie.candidates, tie.ties, tie.ambiguous) == (2, 3, 3, True)
    # A partial fit still counts: the prefix's last characters agree.
    assert locate_quote(text, "cat", "XXXthe ", "").start == 11
    assert locate_quote(text, "dog") is None
    assert locate_quote(text, "") is None


def test_quotes_from_other_tools_are_normalised_as_stored_text_is():
    assert normalise_quote("Zoe\u0308\r\nsaid\r") == "Zoë\nsaid\n"
