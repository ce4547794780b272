"""The English splitter against NLTK's own splits of BooookScore's sample summaries.

tests/fixtures/booookscore/punkt-sentences.json holds what `nltk.sent_tokenize` (Punkt,
English parameters: what the release's scorer runs) gives for each sample summary, made
outside the project. The app splits each stored paragraph (a paragraph break always ends
a sentence); on these summaries that gives the same sentences, one for one.
"""

from __future__ import annotations

import json

import pytest

from app.imports.document_formats import split_paragraphs
from app.rules.metrics import document_sentences
from tests.support.apps import BOOOOKSCORE_SAMPLE as SAMPLE

FILES = {"inc": "human-annotations.json", "hier": "human-annotations-hier.json"}
NLTK = json.loads((SAMPLE / "punkt-sentences.json").read_text("utf-8"))


@pytest.mark.parametrize("kind", sorted(FILES))
def test_english_sentences_are_nltks_sentence_for_sentence(kind):
    data = json.loads((SAMPLE / FILES[kind]).read_text("utf-8"))
    assert set(NLTK[kind]) == set(data)
    for book, expected in NLTK[kind].items():
        paragraphs = split_paragraphs(data[book]["summary"])
        got = [paragraphs[p][start:end] for p, start, end in document_sentences(paragraphs)]
        assert got == expected, book
        assert document_sentences(paragraphs, "en") == document_sentences(paragraphs), book
