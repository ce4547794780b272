"""Planting attention checks (app/crowd/checks/plant.py) and the taxonomy's `checks:` mapping."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.crowd.checks.plant import (
    KINDS,
    NAMES,
    NEW_ENTITY_SENTENCES,
    PlantError,
    parse_kinds,
    plant,
)
from app.imports.document_formats import document_from_record, split_paragraphs
from app.rules.metrics import split_sentences
from app.taxonomy import TaxonomyError, load_taxonomy

SOURCE = Path(__file__).resolve().parents[1] / "fixtures" / "planted" / "source.json"
CATEGORIES = {"repetition": "rep", "inconsistency": "inc", "new-entity": "new"}


def sample() -> tuple[str, ...]:
    record = json.loads(SOURCE.read_text(encoding="utf-8"))["the-golden-doves"]
    return split_paragraphs(record["text"])


@pytest.mark.parametrize("seed", range(8))
def test_every_kind_is_planted_with_exact_spans(seed):
    original = sample()
    paragraphs, checks = plant(original, KINDS, seed, CATEGORIES)
    assert [c.kind for c in checks] == list(KINDS)
    assert [c.category for c in checks] == ["rep", "inc", "new"]
    for check in checks:
        assert paragraphs[check.paragraph_id][check.start : check.end] == check.text
    repetition, inconsistency, new_entity = checks
    # The copy repeats, word for word, a whole sentence of an earlier paragraph.
    pid, start, end = repetition.paired
    assert pid < repetition.paragraph_id
    assert paragraphs[pid][start:end] == repetition.text
    assert (start, end) in split_sentences(paragraphs[pid])
    # The changed mention is a fresh name; its pair is the old name's first mention.
    pid, start, end = inconsistency.paired
    old = paragraphs[pid][start:end]
    assert pid < inconsistency.paragraph_id
    assert old in "\n".join(original) and old != inconsistency.text
    assert inconsistency.text in NAMES and inconsistency.text not in "\n".join(original)
    # The new person is named once in the whole document, nowhere in the source.
    assert new_entity.paired is None and new_entity.text in NAMES
    assert "\n".join(paragraphs).count(new_entity.text) == 1
    assert new_entity.text != inconsistency.text
    # Nothing else changed: one sentence added twice over, one name swapped.
    assert len(paragraphs) == len(original)
    assert sum(map(len, paragraphs)) - sum(map(len, original)) == (
        len(repetition.text)
        + 1
        + (len(inconsistency.text) - len(old))
        + _added(new_entity, paragraphs)
    )


def _added(check, paragraphs) -> int:
    """Length of the inserted new-entity sentence plus its separating space."""
    sentences = (s.format(name=check.text) for s in NEW_ENTITY_SENTENCES)
    return next(len(s) + 1 for s in sentences if s in paragraphs[check.paragraph_id])


def test_same_seed_same_document_other_seed_other_choices():
    first = plant(sample(), KINDS, 7, CATEGORIES)
    assert plant(sample(), KINDS, 7, CATEGORIES) == first
    others = {plant(sample(), KINDS, seed, CATEGORIES)[0] for seed in range(8)}
    assert len(others) > 4


def test_gold_entries_are_valid_document_gold():
    paragraphs, checks = plant(sample(), KINDS, 3, CATEGORIES)
    gold = [check.gold() for check in checks]
    document = document_from_record("x-check-3", {"paragraphs": list(paragraphs), "gold": gold})
    assert document.gold == gold
    assert document.paragraphs == paragraphs  # already normalised: offsets stay exact
    assert gold[0]["paired_span"] and gold[0]["explanation"]
    assert "paired_span" not in gold[2]


@pytest.mark.parametrize(
    ("paragraphs", "kinds", "message"),
    [
        (["One short line."], ("repetition",), "repetition: needs a sentence of at least 5"),
        (["Anna met Bob there.", "Then it rained."], ("inconsistency",), "inconsistency: needs"),
        (["A single paragraph only."], ("new-entity",), "new-entity: needs at least two"),
    ],
)
def test_clear_error_when_the_source_has_nothing_to_plant(paragraphs, kinds, message):
    with pytest.raises(PlantError, match=message):
        plant(paragraphs, kinds, 1, CATEGORIES)


def test_parse_kinds():
    assert parse_kinds("new-entity, repetition") == ("new-entity", "repetition")
    with pytest.raises(ValueError, match="unknown kind 'typo'"):
        parse_kinds("repetition,typo")
    with pytest.raises(ValueError, match="given twice"):
        parse_kinds("repetition,repetition")


def test_gold_paired_span_and_explanation_are_checked():
    with pytest.raises(ValueError) as caught:
        document_from_record(
            "d",
            {
                "paragraphs": ["Anna met Bob.", "Bob left."],
                "gold": [
                    {"paragraph_id": 1, "start": 0, "end": 3, "category": "c", "explanation": ""},
                    {
                        "paragraph_id": 1,
                        "start": 0,
                        "end": 3,
                        "category": "c",
                        "paired_span": {"paragraph_id": 0, "start": 9, "end": 40},
                    },
                ],
            },
        )
    assert str(caught.value) == (
        "gold[0].explanation: must be a non-empty string; "
        "gold[1].paired_span.end: 40 is beyond paragraph 0 (13 characters)"
    )


TAXONOMY = """\
title: T
instructions: Read.
categories:
  - {key: echo, name: Echo, type: paired, description: d}
  - {key: who, name: Who, type: singleton, description: d}
checks:
  repetition: who        # 7: singleton for a paired kind
  inconsistency: nope    # 8: no such category
  new-entity: echo       # 9: paired for a singleton kind
  typo: echo             # 10: unknown kind
study:
  min_words_per_minute: 0   # 12: out of range
"""


def test_taxonomy_checks_mapping_is_validated_with_lines(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text(TAXONOMY, encoding="utf-8")
    with pytest.raises(TaxonomyError) as caught:
        load_taxonomy(path)
    lines = [(p.line, p.key) for p in caught.value.problems]
    assert lines == [
        (7, "checks.repetition"),
        (8, "checks.inconsistency"),
        (9, "checks.new-entity"),
        (10, "checks.typo"),
        (12, "study.min_words_per_minute"),
    ]
    messages = str(caught.value)
    assert "category 'who' is singleton; repetition needs paired" in messages
    assert "no category 'nope' (categories: echo, who)" in messages


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("config/taxonomy.yaml", ("repetition", "inconsistency", "new-person")),
        ("config/taxonomies/booookscore.yaml", ("duplication", "inconsistency", "entity-omission")),
    ],
)
def test_shipped_taxonomies_map_every_kind(path, expected):
    taxonomy = load_taxonomy(Path(__file__).resolve().parents[2] / path)
    assert dict(taxonomy.checks) == dict(zip(KINDS, expected, strict=True))
