"""The documented `entities: auto` rule (app/rules/entities.py)."""

from __future__ import annotations

from app.rules.entities import auto_entities, entities_for

FENWICK = [
    "John Fenwick, an aspiring artist, accepts a loan from Mr. Morrison to move to London. "
    "In London, he impresses several wealthy art collectors with his work.",
    "At Lord Findon's dinner party, Fenwick meets Madame de Pastourelles, who is an artist. "
    "Fenwick is immediately taken by her.",
    "As the party progresses, Madame de Pastourelles makes Fenwick feel at ease.",
    "In London, John Fenwick meets Lord Findon at an art gallery. He impresses collectors.",
]


def test_names_occurring_twice_are_found_in_order_of_first_appearance():
    assert auto_entities(FENWICK) == [
        "John",
        "Fenwick",
        "John Fenwick",
        "London",
        "Lord",
        "Findon",
        "Lord Findon",
        "Madame",
        "Pastourelles",
        "Madame de Pastourelles",
    ]


def test_a_name_seen_once_is_not_an_entity():
    assert "Morrison" not in auto_entities(FENWICK)
    assert auto_entities(["Anna sings."]) == []


def test_stop_words_are_never_entities_even_when_frequent():
    text = ["The cat sat. The dog sat. He left. He came. In June, Ada ran. Ada hid."]
    assert auto_entities(text) == ["Ada"]


def test_words_seen_only_at_sentence_starts_are_not_entities():
    text = ["Suddenly it rained. Suddenly it stopped! Honestly? Honestly."]
    assert auto_entities(text) == []


def test_a_name_also_seen_mid_sentence_counts_its_sentence_initial_uses():
    assert auto_entities(["Berta left. Then came Berta."]) == ["Berta"]
    assert auto_entities(["Berta left.", "Berta came back."]) == []


def test_title_abbreviation_does_not_start_a_sentence():
    assert auto_entities(["Mr. Smith waved.", "Dr. Smith came."]) == ["Smith"]


def test_unicode_letters_and_possessives():
    text = ["Zoë's boat left; then Łukasz saw Zoë and O'Brien met Łukasz. O'Brien's hat fell."]
    assert auto_entities(text) == ["Zoë", "Łukasz", "O'Brien"]


def test_lowercase_words_and_numbers_are_ignored():
    assert auto_entities(["the 1920s and the 1920s, ipad and ipad"]) == []


def test_entities_for_each_mode():
    text = ["Ada met Bo. Then Ada left with Bo."]
    assert entities_for("none", ["Ada"], text) == []
    assert entities_for("document", [], text) == []
    assert entities_for("document", ["Ada"], text) == ["Ada"]
    assert entities_for("auto", ["Cy"], text) == ["Cy"]
    assert entities_for("auto", [], text) == ["Ada", "Bo"]
