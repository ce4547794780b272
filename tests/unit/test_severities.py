"""Severities (issue 18 point 4): taxonomy parsing, the save rule and MQM scoring, pure."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.research import mqm
from app.rules.annotation import SeverityError, check_severity
from app.taxonomy import TaxonomyError, load_taxonomy, summarise
from tests.support.severities import DEFAULT_TAXONOMY, WEIGHTS, severity_taxonomy
from tests.support.taxonomies import TWO_CATEGORIES

# The vague category with shortcut 1.
BASE = TWO_CATEGORIES.replace(
    "Too vague to follow.\n", 'Too vague to follow.\n    shortcut: "1"\n', 1
)


def problems_of(tmp_path: Path, content: str) -> list[str]:
    path = tmp_path / "taxonomy.yaml"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(TaxonomyError) as caught:
        load_taxonomy(path)
    return [f"{p.line}: {p.key}: {p.message}" for p in caught.value.problems]


def test_severities_load_with_weights_keys_and_a_category_subset(tmp_path):
    taxonomy = load_taxonomy(severity_taxonomy(tmp_path))
    assert [(s.key, s.name, s.weight, s.shortcut) for s in taxonomy.severities] == [
        ("minor", "Minor", 1.0, "q"),
        ("major", "Major", 5.0, "w"),
    ]
    assert taxonomy.severity_weights == WEIGHTS
    assert [s.key for s in taxonomy.severities_for("ungrammatical")] == ["minor"]
    assert [s.key for s in taxonomy.severities_for("repetition")] == ["minor", "major"]
    public = taxonomy.to_public_dict()
    assert public["severities"][1] == {
        "key": "major",
        "name": "Major",
        "weight": 5.0,
        "description": "A reader cannot follow the story here.",
        "shortcut": "w",
    }
    assert public["category_severities"]["ungrammatical"] == ["minor"]
    assert public["category_severities"]["new-person"] == ["minor", "major"]
    assert "severities (2, MQM weights):" in summarise(taxonomy)
    assert "ungrammatical            offers minor" in summarise(taxonomy)


def test_a_taxonomy_without_severities_is_as_before():
    taxonomy = load_taxonomy(DEFAULT_TAXONOMY)
    assert taxonomy.severities == () and taxonomy.severity_weights == {}
    public = taxonomy.to_public_dict()
    assert "severities" not in public and "category_severities" not in public
    assert all("severities" not in category for category in public["categories"])
    assert "MQM weights" not in summarise(taxonomy)


def test_every_severity_problem_is_reported_at_its_line(tmp_path):
    content = BASE.replace(
        "    description: Says the same thing twice.\n",
        "    description: Says the same thing twice.\n"
        "    severities: [minor, huge, minor]\n",  # 13: huge unknown, minor twice
    ) + (
        "severities:\n"
        "  - {key: minor, name: Minor, weight: 1, shortcut: '1'}\n"  # 15: taken by vague
        "  - {key: minor, name: Again, weight: 2}\n"  # 16: duplicate key
        "  - {key: major, name: Major, weight: -5}\n"  # 17: negative weight
        "  - {key: crit, weight: 10, colour: red}\n"  # 18: no name, unknown key
        "  - just text\n"  # 19: not a mapping
    )
    assert problems_of(tmp_path, content) == [
        "13: categories[1].severities[1]: no severity 'huge' (severities: minor)",
        "13: categories[1].severities[2]: duplicate severity 'minor'",
        "15: severities[0].shortcut: '1' is already the key of category 'vague'",
        "16: severities[1].key: duplicate key 'minor' (first at line 15)",
        "17: severities[2].weight: must be a number from 0.0 to 1000.0, got -5",
        "18: severities[3].colour: unknown key; expected one of key, name, weight, "
        "description, shortcut",
        "18: severities[3].name: is required",
        "19: severities[4]: must be a mapping with key, name and weight",
    ]


def test_a_category_subset_needs_the_top_level_list(tmp_path):
    content = BASE.replace('    shortcut: "1"\n', '    shortcut: "1"\n    severities: [minor]\n')
    assert problems_of(tmp_path, content) == [
        "9: categories[0].severities: needs a top-level severities: list to choose from"
    ]
    assert problems_of(tmp_path, BASE + "severities: []\n") == [
        "13: severities: must be a non-empty list of severities (or left out)"
    ]


def test_the_save_rule_follows_the_taxonomy(tmp_path):
    with_severities = load_taxonomy(severity_taxonomy(tmp_path))
    check_severity(with_severities, "repetition", "major")
    check_severity(with_severities, "ungrammatical", "minor")
    for category, value, code in (
        ("repetition", None, "severity_required"),
        ("repetition", "fatal", "unknown_severity"),
        ("ungrammatical", "major", "unknown_severity"),  # not offered for this category
    ):
        with pytest.raises(SeverityError) as caught:
            check_severity(with_severities, category, value)
        assert (caught.value.code, caught.value.field) == (code, "severity")
    without = load_taxonomy(DEFAULT_TAXONOMY)
    check_severity(without, "repetition", None)
    with pytest.raises(SeverityError) as caught:
        check_severity(without, "repetition", "minor")
    assert caught.value.code == "severity_not_used"


def test_mqm_score_is_weights_per_100_words_averaged_over_sessions():
    # 200 words; session A: one major + two minor = 7 -> 3.5; session B: one minor -> 0.5.
    words = mqm.word_count(["word " * 150, "more words " * 25])
    assert words == 200
    readings = [["major", "minor", "minor"], ["minor"]]
    assert mqm.document_mqm(readings, WEIGHTS, words) == pytest.approx((3.5 + 0.5) / 2)
    # A session that found nothing counts as 0; unknown or missing severities weigh 0.
    assert mqm.document_mqm([[], ["major", None, "gone"]], WEIGHTS, 100) == pytest.approx(2.5)
    assert mqm.document_mqm(readings, {}, words) is None  # no severities: no score
    assert mqm.document_mqm([], WEIGHTS, words) is None  # nothing submitted
    assert mqm.document_mqm([["major"]], WEIGHTS, 0) is None  # no words
