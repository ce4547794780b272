"""The pure span rules: offsets in code points, quote == text[start:end], paired rules."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.rules.spans import Span, SpanError, check_annotation, check_span

TEXTS = {
    0: "Zoë met Łukasz at the harbour.",
    1: "🚢 The ship left. Zoë waved at the ship.",
    2: "Later, he said nothing.",
}


@dataclass(frozen=True)
class Cat:
    key: str
    name: str
    type: str

    @property
    def is_paired(self) -> bool:
        return self.type == "paired"


SINGLE = Cat("ungrammatical", "Ungrammatical", "singleton")
PAIRED = Cat("repetition", "Repetition", "paired")


def annotate(category=SINGLE, span=None, paired=None, comment=None, furthest=2, required=False):
    check_annotation(
        category=category,
        known_categories=["ungrammatical", "repetition"],
        category_key=category.key if category else "nope",
        span=span or Span(0, 0, 3, "Zoë"),
        paired_span=paired,
        comment=comment,
        comment_required=required,
        comment_label="Your question",
        max_comment_length=20,
        texts=TEXTS,
        furthest=furthest,
    )


def test_valid_span_after_emoji_uses_code_points():
    text = TEXTS[1]
    start = text.index("The ship")
    assert start == 2  # one code point for the emoji, then a space
    check_span(Span(1, start, start + 8, "The ship"), TEXTS, furthest=1, field="span")


def test_quote_mismatch_is_reported_with_the_stored_text():
    with pytest.raises(SpanError) as err:
        # UTF-16 offsets (what a browser counts) are off by one after the emoji.
        check_span(Span(1, 3, 11, "The ship"), TEXTS, furthest=1, field="span")
    assert err.value.code == "quote_mismatch"
    assert err.value.field == "span.text"
    assert "'he ship '" in err.value.message


@pytest.mark.parametrize(
    ("span", "code"),
    [
        (Span(0, 3, 3, ""), "out_of_range"),
        (Span(0, 5, 2, "x"), "out_of_range"),
        (Span(0, -1, 2, "x"), "out_of_range"),
        (Span(0, 0, 999, "x"), "out_of_range"),
        (Span(7, 0, 1, "x"), "beyond_furthest"),
        (Span(0, 3, 4, " "), "blank_span"),
    ],
)
def test_bad_spans(span, code):
    with pytest.raises(SpanError) as err:
        check_span(span, TEXTS, furthest=2, field="span")
    assert err.value.code == code


def test_paragraph_missing_from_document():
    with pytest.raises(SpanError) as err:
        check_span(Span(3, 0, 1, "x"), TEXTS, furthest=5, field="span")
    assert err.value.code == "no_such_paragraph"


def test_beyond_furthest_even_if_paragraph_exists():
    with pytest.raises(SpanError) as err:
        annotate(span=Span(2, 0, 5, "Later"), furthest=1)
    assert err.value.code == "beyond_furthest"
    assert err.value.field == "span.paragraph_id"


def test_unknown_category_lists_known_ones():
    with pytest.raises(SpanError) as err:
        annotate(category=None)
    assert err.value.code == "unknown_category"
    assert "ungrammatical, repetition" in err.value.message


def test_paired_category_needs_second_span():
    with pytest.raises(SpanError) as err:
        annotate(category=PAIRED, span=Span(1, 2, 10, "The ship"))
    assert err.value.code == "paired_span_required"


def test_singleton_category_forbids_second_span():
    with pytest.raises(SpanError) as err:
        annotate(paired=Span(0, 0, 3, "Zoë"), span=Span(1, 2, 10, "The ship"))
    assert err.value.code == "paired_span_forbidden"


def test_paired_span_in_earlier_or_same_paragraph_is_accepted():
    annotate(category=PAIRED, span=Span(1, 34, 38, "ship"), paired=Span(1, 6, 10, "ship"))
    annotate(category=PAIRED, span=Span(1, 17, 20, "Zoë"), paired=Span(0, 0, 3, "Zoë"))


def test_paired_span_later_is_refused():
    with pytest.raises(SpanError) as err:
        annotate(category=PAIRED, span=Span(0, 0, 3, "Zoë"), paired=Span(1, 17, 20, "Zoë"))
    assert err.value.code == "paired_span_later"


def test_paired_span_identical_is_refused():
    with pytest.raises(SpanError) as err:
        annotate(category=PAIRED, span=Span(0, 0, 3, "Zoë"), paired=Span(0, 0, 3, "Zoë"))
    assert err.value.code == "paired_span_same"


def test_paired_span_text_checked_too():
    with pytest.raises(SpanError) as err:
        annotate(category=PAIRED, span=Span(1, 17, 20, "Zoë"), paired=Span(0, 0, 3, "Zoe"))
    assert err.value.field == "paired_span.text"


def test_comment_rules():
    annotate(comment=None)
    annotate(comment="fine")
    with pytest.raises(SpanError) as err:
        annotate(comment="x" * 21)
    assert err.value.code == "comment_too_long"
    with pytest.raises(SpanError) as err:
        annotate(comment="   ", required=True)
    assert err.value.code == "comment_required"
    annotate(comment="Who is Zoë?", required=True)


paragraph_chars = st.one_of(
    st.characters(codec="utf-8", exclude_categories=("Cs",)),
    st.sampled_from(["😀", "👩🏽‍🚀", "𝔘", "e\u0301", "\u05e9\u05dc\u05d5\u05dd", "\r\n", "\r"]),
)


@given(pieces=st.lists(paragraph_chars, min_size=1, max_size=60), data=st.data())
def test_any_span_of_normalised_text_is_checked_in_code_points(pieces, data):
    """Any span of normalised text (astral characters, combining marks, RTL) passes the
    check when it holds more than whitespace: offsets are code points, as stored."""
    raw = "".join(pieces)
    text = unicodedata.normalize("NFC", raw.replace("\r\n", "\n").replace("\r", "\n"))
    if not text:
        return
    start = data.draw(st.integers(0, len(text) - 1))
    end = data.draw(st.integers(start + 1, len(text)))
    span = Span(0, start, end, text[start:end])
    if span.text.strip():
        check_span(span, {0: text}, furthest=0, field="span")
    else:
        with pytest.raises(SpanError):
            check_span(span, {0: text}, furthest=0, field="span")
