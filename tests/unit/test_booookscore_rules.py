"""BooookScore's definitions (Chang et al., ICLR 2024) on hand-made cases.

Equation 1: the score is the share of sentences without error. Footnote 12: a span over
consecutive sentences, and a relation between two spans, count as a single sentence.
Table 1: errors per sentence = occurrences of a category / all sentences.
"""

from __future__ import annotations

import pytest

from app.metrics import booookscore, footnote12_counts

# Four sentences: two in paragraph 0, two in paragraph 1.
SENTENCES = [(0, 0, 10), (0, 11, 20), (1, 0, 8), (1, 9, 15)]


def test_a_span_over_consecutive_sentences_is_one_sentence():
    # Sentences 0 and 1 become one: 3 sentences, 1 with an error (was 2 of 4).
    assert footnote12_counts(SENTENCES, [(0, 0, 20)]) == (3, 1)
    assert footnote12_counts(SENTENCES, [(0, 8, 12)]) == (3, 1)
    assert booookscore(*footnote12_counts(SENTENCES, [(0, 0, 20)])) == pytest.approx(200 / 3)


def test_a_relation_is_one_sentence():
    # A span in sentence 3 related to one in sentence 0: one sentence of 3.
    assert footnote12_counts(SENTENCES, [(1, 9, 15)], [(0, 0, 4)]) == (3, 1)
    # Both spans in one sentence: nothing to merge.
    assert footnote12_counts(SENTENCES, [(1, 9, 11)], [(1, 12, 15)]) == (4, 1)
    # Without its pair it is an ordinary span.
    assert footnote12_counts(SENTENCES, [(1, 9, 15)], [None]) == (4, 1)


def test_a_sentence_with_several_errors_counts_once():
    assert footnote12_counts(SENTENCES, [(0, 0, 3), (0, 5, 8), (0, 2, 9)]) == (4, 1)
    assert footnote12_counts(SENTENCES, [(0, 0, 3), (1, 0, 3)]) == (4, 2)


def test_merging_is_transitive():
    # One span covers sentences 0-1; a relation joins sentence 2 to sentence 1: sentences
    # 0, 1 and 2 are one sentence, sentence 3 the other; one of the two has errors.
    spans = [(0, 0, 20), (1, 0, 3)]
    assert footnote12_counts(SENTENCES, spans, [None, (0, 12, 14)]) == (2, 1)


def test_score_on_the_papers_scale():
    assert booookscore(25, 2) == pytest.approx(92.0)  # Figure 2: 23/25 error-free, 92%
    assert booookscore(4, 0) == 100.0
    assert booookscore(0, 0) is None
    assert booookscore(*footnote12_counts(SENTENCES, [])) == 100.0
    assert booookscore(*footnote12_counts([], [(0, 0, 1)])) is None
