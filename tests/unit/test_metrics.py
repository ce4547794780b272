"""Dashboard arithmetic on examples small enough to check by hand."""

from __future__ import annotations

import math

import pytest

from app.rules.metrics import (
    Reading,
    booookscore,
    document_sentences,
    error_units,
    errors_per_sentence,
    gold_recall,
    krippendorff_alpha,
    label_value_counts,
    mean,
    mean_pairwise_f1,
    overlaps,
    sentence_labels,
    span_f1,
    split_sentences,
)


def sentences_of(text: str) -> list[str]:
    return [text[start:end] for start, end in split_sentences(text)]


# --- sentence splitting -----------------------------------------------------------------


def test_english_is_punkt_and_splits_on_terminators():
    text = "Anna left. She was tired! Was it late? 1984 was the year."
    assert sentences_of(text) == [
        "Anna left.",
        "She was tired!",
        "Was it late?",
        "1984 was the year.",
    ]


def test_no_split_inside_numbers_or_where_punkt_sees_no_boundary():
    assert sentences_of("It cost 3.50 dollars and more. Then it rained") == [
        "It cost 3.50 dollars and more.",
        "Then it rained",
    ]


def test_english_follows_nltk_where_a_hand_made_rule_would_not():
    # Punkt's English parameters (what BooookScore's scorer used): initials inside a
    # sentence stay, and a quoted question ends one even before a lower-case word.
    text = "He met J.B. Smith in Washington, D.C. on Monday. She said “May I?” and left."
    assert sentences_of(text) == [
        "He met J.B. Smith in Washington, D.C. on Monday.",
        "She said “May I?”",
        "and left.",
    ]


def test_abbreviations_and_initials_do_not_end_sentences():
    text = "Mr. Smith met Dr. Jones at St. Mary's. J. R. R. Tolkien wrote it. Mrs. Hale left."
    assert sentences_of(text) == [
        "Mr. Smith met Dr. Jones at St. Mary's.",
        "J. R. R. Tolkien wrote it.",
        "Mrs. Hale left.",
    ]


def test_closing_quotes_and_brackets_stay_with_their_sentence():
    text = 'He said "Go home." Then he left. (It rained.) "Why?" she asked.'
    assert sentences_of(text) == [
        'He said "Go home."',
        "Then he left.",
        "(It rained.)",
        '"Why?"',
        "she asked.",
    ]


def test_offsets_are_code_points_and_whitespace_is_trimmed():
    text = "  Ünïcode 🙂 first.   Second one  "
    spans = split_sentences(text)
    assert [text[a:b] for a, b in spans] == ["Ünïcode 🙂 first.", "Second one"]
    # 16 code points (the emoji is one; in the browser's UTF-16 it would be two)
    assert spans[0] == (2, 18)


def test_empty_and_blank_paragraphs_have_no_sentences():
    assert split_sentences("") == []
    assert split_sentences("   \n ") == []


def test_document_sentences_never_cross_paragraphs():
    # Paragraph 0 has no final full stop: its text is still one sentence of its own.
    assert document_sentences(["One. Two", "Three."]) == [(0, 0, 4), (0, 5, 8), (1, 0, 6)]


# --- overlap, labels, BooookScore --------------------------------------------------------


def test_overlap_needs_same_paragraph_and_a_shared_character():
    assert overlaps((0, 0, 5), (0, 4, 9))
    assert not overlaps((0, 0, 5), (0, 5, 9))  # end is exclusive
    assert not overlaps((0, 0, 5), (1, 0, 5))


def test_sentence_labels_and_booookscore():
    sentences = [(0, 0, 10), (0, 11, 20), (1, 0, 8), (1, 9, 15)]
    spans = [(0, 8, 12), (1, 14, 15)]  # touches sentences 0 and 1, and 3
    assert sentence_labels(sentences, spans) == [True, True, False, True]
    # BooookScore as the release computes it: two error units of four sentences.
    assert booookscore(len(sentences), error_units([1, 2])) == pytest.approx(50.0)
    assert booookscore(len(sentences), error_units([])) == 100.0


def test_errors_per_sentence_is_occurrences_over_sentences():
    # BooookScore Table 1: 7.3% entity omission = occurrences / all sentences.
    assert errors_per_sentence({"entity": 3, "event": 0}, 40) == {"entity": 0.075, "event": 0.0}
    assert errors_per_sentence({"entity": 3}, 0) == {"entity": 0.0}


def test_mean_skips_missing_values():
    assert mean([1.0, None, 0.0, math.nan]) == 0.5
    assert mean([None]) is None


# --- Krippendorff's alpha -----------------------------------------------------------------


def test_alpha_matches_a_hand_computation():
    # Two annotators, four sentences: A = [1, 1, 0, 0], B = [1, 0, 0, 0].
    # Coincidences: o11 = 2, o10 = o01 = 1, o00 = 4; n = 8, n0 = 5, n1 = 3.
    # D_o = (o01 + o10) / n = 2/8; D_e = 2 n0 n1 / (n (n-1)) = 30/56.
    # alpha = 1 - D_o / D_e = 1 - (1/4) / (30/56) = 1 - 14/30 = 8/15.
    counts = label_value_counts([[True, True, False, False], [True, False, False, False]])
    assert counts == [(0, 2), (1, 1), (2, 0), (2, 0)]
    assert krippendorff_alpha(counts) == pytest.approx(8 / 15)


def test_alpha_three_annotators_hand_computation():
    # Three annotators, three sentences: [1,1,1], [1,1,0], [0,0,0].
    # Unit weights 1/(m-1) = 1/2: unit 1 o11 += 3; unit 2 o11 += 1, o10 = o01 += 1; unit 3
    # o00 += 3. n = 9, n1 = 5, n0 = 4. D_o = 2/9; D_e = 2*4*5/(9*8) = 40/72.
    # alpha = 1 - (2/9)/(40/72) = 1 - 16/40 = 0.6.
    rows = [[True, True, False], [True, True, False], [True, False, False]]
    assert krippendorff_alpha(label_value_counts(rows)) == pytest.approx(0.6)


def test_alpha_perfect_and_undefined_cases():
    assert krippendorff_alpha([(0, 2), (2, 0)]) == pytest.approx(1.0)
    assert krippendorff_alpha([(2, 0), (2, 0)]) is None  # one value only: no expected disagreement
    assert krippendorff_alpha([(1, 0), (0, 1)]) is None  # nothing pairable
    assert krippendorff_alpha([]) is None


# --- span F1 ------------------------------------------------------------------------------


def test_span_f1_by_hand():
    a = [(0, 0, 5), (0, 10, 12)]  # first matches b's (0,4,6); second matches nothing
    b = [(0, 4, 6), (1, 0, 3)]  # first matches a's first; second is in another paragraph
    # precision 1/2, recall 1/2 -> F1 1/2
    assert span_f1(a, b) == pytest.approx(0.5)
    assert span_f1(b, a) == pytest.approx(0.5)


def test_span_f1_counts_many_to_one_matches_per_direction():
    a = [(0, 0, 10)]
    b = [(0, 1, 2), (0, 3, 4), (0, 20, 25)]
    # precision: a's one span matches -> 1; recall: 2 of b's 3 match -> 2/3
    assert span_f1(a, b) == pytest.approx(2 * 1 * (2 / 3) / (1 + 2 / 3))


def test_span_f1_edge_cases():
    assert span_f1([], []) is None
    assert span_f1([(0, 0, 1)], []) == 0.0
    assert span_f1([(0, 0, 1)], [(0, 1, 2)]) == 0.0


def test_mean_pairwise_f1_over_three_annotators():
    a, b, c = [(0, 0, 5)], [(0, 2, 3)], [(1, 0, 5)]
    # pairs: (a,b) = 1, (a,c) = 0, (b,c) = 0
    assert mean_pairwise_f1([a, b, c]) == pytest.approx(1 / 3)
    assert mean_pairwise_f1([a]) is None
    assert mean_pairwise_f1([Reading(a), Reading(b)]) == 1.0


# --- gold recall --------------------------------------------------------------------------


def test_gold_recall_category_blind_and_aware():
    gold = [
        {"paragraph_id": 0, "start": 0, "end": 5, "category": "new-person"},
        {"paragraph_id": 1, "start": 10, "end": 20, "category": "repetition"},
        {"paragraph_id": 2, "start": 0, "end": 4, "category": "ungrammatical"},
    ]
    annotations = [
        (0, 1, 6, "new-person"),  # 4 shared of 6 covered (IoU 0.67): found, right category
        (1, 12, 20, "inconsistency"),  # 8 of 10 (0.8): located, wrong category
        (3, 0, 4, "ungrammatical"),  # other paragraph: finds nothing
    ]
    result = gold_recall(gold, annotations)
    assert (result.total, result.found_any, result.found_same_category) == (3, 2, 1)
    assert result.recall_any == pytest.approx(2 / 3)
    assert result.recall_category == pytest.approx(1 / 3)
    assert (result.annotations, result.unmatched) == (3, 2)
    assert result.precision == pytest.approx(1 / 3)
    combined = result + gold_recall(gold[:1], [])
    assert (combined.total, combined.found_any) == (4, 2)
    assert gold_recall([], annotations).recall_any is None
