"""Locating span texts in documents: exact, ambiguous, tolerant of whitespace and quotes."""

from __future__ import annotations

from app.imports.locate import locate, normalise_with_map

PARAGRAPHS = (
    "Zoë met 🚢 Łukasz. Zoë smiled.",
    "He said “hello  there”\nand left — quickly.",
)


def test_exact_match_gives_code_point_offsets():
    found = locate(PARAGRAPHS, "Łukasz")
    assert (found.paragraph_id, found.start, found.end) == (0, 10, 16)
    assert PARAGRAPHS[0][found.start : found.end] == "Łukasz"
    assert not found.ambiguous


def test_several_matches_use_the_first_and_say_so():
    found = locate(PARAGRAPHS, "Zoë")
    assert (found.paragraph_id, found.start, found.matches) == (0, 0, 2)
    assert found.ambiguous


def test_search_can_be_limited_to_one_paragraph():
    assert locate(PARAGRAPHS, "Zoë", paragraph_id=1) is None
    assert locate(PARAGRAPHS, "left", paragraph_id=1).start == PARAGRAPHS[1].index("left")


def test_other_whitespace_and_straight_quotes_still_match():
    found = locate(PARAGRAPHS, 'said "hello there" and left - quickly.')
    assert found is not None
    assert found.paragraph_id == 1
    assert found.text == PARAGRAPHS[1][found.start : found.end]
    assert found.text == "said “hello  there”\nand left — quickly."


def test_missing_text_is_not_found():
    assert locate(PARAGRAPHS, "not there") is None
    assert locate(PARAGRAPHS, "   ") is None


def test_normalised_map_points_back_to_the_original():
    text, index = normalise_with_map("a  \n b’c")
    assert text == "a b'c"
    assert [index[i] for i in range(len(text))] == [0, 1, 5, 6, 7]


def test_a_pair_with_the_same_text_gets_distinct_occurrences():
    from app.imports.locate import place_pair

    paragraphs = ("Anna wrote. Then Anna wrote.", "Anna wrote.")
    span, paired = place_pair(paragraphs, ("Anna wrote.", None), ("Anna wrote.", None))
    # The paired span (the earlier text) takes the first occurrence, the span the next.
    assert (paired.paragraph_id, paired.start, paired.end) == (0, 0, 11)
    assert (span.paragraph_id, span.start, span.end) == (0, 17, 28)
    # Three occurrences: still ambiguous, and each says how often its text occurs.
    assert span.ambiguous and paired.ambiguous and span.matches == 3
    two = place_pair(paragraphs[:1], ("Anna wrote.", None), ("Anna wrote.", None))
    assert not two[0].ambiguous and not two[1].ambiguous  # only one way to place them
    assert (two[1].start, two[0].start) == (0, 17)
    assert place_pair(("Anna wrote.",), ("Anna wrote.", None), ("Anna wrote.", None)) is None
    # Limited to paragraphs: the paired span in paragraph 0, the span in paragraph 1.
    span, paired = place_pair(paragraphs, ("Anna wrote.", 1), ("Anna wrote.", 0))
    assert (paired.paragraph_id, paired.start, span.paragraph_id, span.start) == (0, 0, 1, 0)
