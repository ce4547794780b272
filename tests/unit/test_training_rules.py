"""Training's pure rules: feedback per gold span, extras, the pass rule; and the
taxonomy's `training:` section with its line-numbered problems."""

from __future__ import annotations

import pytest

from app.crowd.training.feedback import Answer, PassRule, check_answers
from app.crowd.training.service import study_key
from app.crowd.training.summary import summarise
from app.taxonomy import TaxonomyError, load_taxonomy, training_summary
from tests.support.taxonomies import DEFAULT_TAXONOMY, taxonomy_variant
from tests.support.training import PRACTICE_GOLD, PRACTICE_PARAGRAPHS

TEXTS = PRACTICE_PARAGRAPHS
RULE = PassRule(min_recall=1.0, min_precision=0.5)


def kinds(result):
    return [item["kind"] for item in result.feedback]


def test_every_gold_span_found_passes_with_its_explanation():
    answers = [Answer("a", 0, 32, 43, "new-person"), Answer("b", 1, 32, 63, "repetition")]
    result = check_answers(PRACTICE_GOLD, answers, TEXTS, RULE)
    assert kinds(result) == ["found", "found"]
    assert result.recall == 1.0 and result.precision == 1.0 and result.passed
    first = result.feedback[0]
    assert first["span"]["text"] == "Lord Findon"
    assert first["explanation"] == "Lord Findon appears without any introduction."
    assert first["annotation_id"] == "a"
    assert result.feedback[1]["paired_span"]["text"] == "Mara opened the bakery at dawn."


def test_near_exact_spans_match_as_attention_checks_do():
    # "Findon": 6 shared of the 11 covered together (IoU 0.55); "Lord Findon bought" 11
    # of 18 (0.61); the repeated sentence without its full stop 30 of 31.
    for start, end in ((37, 43), (32, 50)):
        answers = [Answer("a", 0, start, end, "new-person"), Answer("b", 1, 32, 62, "repetition")]
        assert kinds(check_answers(PRACTICE_GOLD, answers, TEXTS, RULE)) == ["found", "found"]
    # One character in common with a longer span is not a match.
    answers = [Answer("a", 0, 42, 50, "new-person"), Answer("b", 1, 32, 63, "repetition")]
    result = check_answers(PRACTICE_GOLD, answers, TEXTS, RULE)
    assert kinds(result) == ["missed", "found", "extra"]
    assert not result.passed


def test_whole_paragraphs_do_not_pass_the_worked_example():
    # docs/training.md: each paragraph highlighted whole. The earlier rule ("half of the
    # shorter span") matched both gold spans: recall 1 and precision 1 with the right
    # types, 0.5 and 0.5 with one type for both, which passed the default rule.
    default = PassRule(0.5, 0.5)
    for second in ("repetition", "new-person"):
        answers = [Answer("a", 0, 0, 64, "new-person"), Answer("b", 1, 0, 63, second)]
        result = check_answers(PRACTICE_GOLD, answers, TEXTS, default)
        assert kinds(result) == ["missed", "missed", "extra", "extra"]
        assert (result.recall, result.precision, result.passed) == (0.0, 0.0, False)
    # The sentence holding the error, not the error: "Lord Findon bought three loaves."
    # shares 11 of 32 characters (0.34).
    answers = [Answer("a", 0, 32, 64, "new-person"), Answer("b", 1, 32, 63, "repetition")]
    assert kinds(check_answers(PRACTICE_GOLD, answers, TEXTS, default))[0] == "missed"


def test_wrong_category_missed_and_extra_are_told_apart():
    answers = [
        Answer("a", 0, 32, 43, "missing-info"),  # right place, wrong type
        Answer("c", 0, 0, 4, "new-person"),  # "Mara": not an error here
    ]
    result = check_answers(PRACTICE_GOLD, answers, TEXTS, RULE)
    assert kinds(result) == ["wrong_category", "missed", "extra"]
    wrong, missed, extra = result.feedback
    assert wrong["category"] == "new-person" and wrong["chosen"] == "missing-info"
    assert missed["annotation_id"] is None and "chosen" not in missed
    assert extra["span"]["text"] == "Mara" and extra["category"] == "new-person"
    assert result.recall == 0.0 and result.precision == 0.0 and not result.passed


def test_pass_rule_thresholds():
    one = [Answer("a", 0, 32, 43, "new-person")]
    result = check_answers(PRACTICE_GOLD, one, TEXTS, PassRule(0.5, 0.5))
    assert result.recall == 0.5 and result.precision == 1.0 and result.passed
    assert not check_answers(PRACTICE_GOLD, one, TEXTS, PassRule(0.51, 0.5)).passed
    # Marking everything finds everything but is not precise.
    many = [Answer(str(i), 0, i * 4, i * 4 + 3, "new-person") for i in range(8)]
    many += [Answer("x", 0, 32, 43, "new-person"), Answer("y", 1, 32, 63, "repetition")]
    result = check_answers(PRACTICE_GOLD, many, TEXTS, PassRule(1.0, 0.5))
    assert result.recall == 1.0 and result.precision < 0.5 and not result.passed


def test_nothing_marked_fails_and_no_gold_never_passes():
    result = check_answers(PRACTICE_GOLD, [], TEXTS, PassRule(0.0, 0.0))
    assert result.recall == 0.0 and result.precision == 0.0 and result.passed
    assert not check_answers(PRACTICE_GOLD, [], TEXTS, RULE).passed
    assert not check_answers([], [], TEXTS, PassRule(0.0, 0.0)).passed


def test_study_key_is_title_and_study_id():
    # Stored in training_attempts.study_key: a change would forget every passed training,
    # so a known study's key is pinned.
    key = study_key("Coherence errors in narrative summaries", "60aa0000bbbb1111cccc2222")
    assert key == "4bbf14f16ce47ed41ea6583b0700d7b5"
    assert study_key("T", "S1") != study_key("T", "S2")
    assert study_key("T", None) == study_key("T", "") != study_key("U", None)
    # The title and the study id cannot trade characters.
    assert study_key("T\nS1", None) != study_key("T", "S1")
    assert study_key("TS", "1") != study_key("T", "S1")


def _taxonomy(tmp_path, section: str):
    return taxonomy_variant(tmp_path, append=section, name="t.yaml")


def test_taxonomy_training_section(tmp_path):
    section = "training:\n  documents: [practice-1, 7]\n  pass: {recall: 0.8}\n  attempts: 3\n"
    training = load_taxonomy(_taxonomy(tmp_path, section)).training
    assert training.documents == ("practice-1", "7")
    assert (training.min_recall, training.min_precision, training.attempts) == (0.8, 0.5, 3)
    assert "pass with recall >= 80% and precision >= 50%" in training_summary(training)
    assert not load_taxonomy(DEFAULT_TAXONOMY).training.enabled


def test_taxonomy_training_problems_have_file_and_line(tmp_path):
    section = (
        "training:\n"
        "  documents: [practice-1, practice-1]\n"
        "  pass: {recall: 2, f1: 0.5}\n"
        "  attempts: 0\n"
        "  intro: hello\n"
    )
    path = _taxonomy(tmp_path, section)
    base = len(DEFAULT_TAXONOMY.read_text(encoding="utf-8").splitlines()) + 1
    with pytest.raises(TaxonomyError) as caught:
        load_taxonomy(path)
    problems = [str(p) for p in caught.value.problems]
    assert f"{path}:{base + 1}: training.documents[1]: duplicate document 'practice-1'" in problems
    assert any(
        p.startswith(f"{path}:{base + 2}: training.pass.recall: must be a number") for p in problems
    )
    assert any(p.startswith(f"{path}:{base + 2}: training.pass.f1: unknown key") for p in problems)
    assert any(
        p.startswith(f"{path}:{base + 3}: training.attempts: must be a whole number")
        for p in problems
    )
    assert any(p.startswith(f"{path}:{base + 4}: training.intro: unknown key") for p in problems)


def test_taxonomy_training_needs_documents(tmp_path):
    with pytest.raises(TaxonomyError) as caught:
        load_taxonomy(_taxonomy(tmp_path, "training:\n  attempts: 2\n"))
    assert [p.key for p in caught.value.problems] == ["training.documents"]
    with pytest.raises(TaxonomyError) as caught:
        load_taxonomy(_taxonomy(tmp_path, "training:\n  documents: []\n"))
    assert "non-empty list" in caught.value.problems[0].message


def test_practice_figures_per_document():
    a, b, c = (1, "s"), (2, "s"), (1, "other-study")
    rows = [
        ("p1", a, 1, True),  # first try
        ("p1", b, 1, False),
        ("p1", b, 2, True),  # second try
        ("p1", c, 1, False),
        ("p1", c, 2, False),  # used both checks: failed
        ("p2", a, 1, False),  # still has a check left: neither passed nor failed
    ]
    p1, p2 = summarise(rows, allowed=2)
    assert (p1.document_id, p1.workers, p1.passed, p1.first_try, p1.failed) == ("p1", 3, 2, 1, 1)
    assert p1.mean_attempts == 1.5
    assert (p2.workers, p2.passed, p2.failed, p2.mean_attempts) == (1, 0, 0, None)
