"""Consent and surveys: the taxonomy sections (FILE:line errors), the form rules, the
dashboard's summary and the step order. Pure functions, no app."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from app.crowd.journey import (
    AFTER_SURVEY,
    BEFORE_SURVEY,
    CONSENT,
    DONE,
    ENDED,
    TASK,
    TRAINING,
    StepFacts,
    step_of,
)
from app.crowd.surveys.answers import MESSAGES, answer_text, parse_survey_form
from app.crowd.surveys.summary import summarise_answers
from app.taxonomy import TaxonomyError, check_taxonomy_command, load_taxonomy, summarise
from app.taxonomy.surveys import Question, Survey

HEAD = """\
title: Test taxonomy
instructions: Read each paragraph.
categories:
  - {key: vague, name: Vague, type: singleton, description: Too vague.}
"""

GOOD = (
    HEAD
    + """\
consent: |
  You will read a text. <script>alert(1)</script> [More](javascript:alert(1))
survey:
  before:
    - {key: native, type: choice, text: "English first?", options: ["Yes", "No"], required: true}
  after:
    - {key: difficulty, type: likert, scale: 7, text: "How hard?", low: Easy, high: Hard}
    - {key: tools, type: multi, text: "What did you use?", options: [Notes, Dictionary, 42]}
    - {key: feedback, type: text, text: "Anything else?", max_length: 20}
"""
)

# Every line with a comment has exactly one problem, reported at that line.
BROKEN = (
    HEAD
    + """\
consent: ""                                                   # 5: empty consent
survey:
  during: []                                                  # 7: unknown survey
  before:
    - {key: Bad Key, type: choice, text: t, options: [a, b]}  # 9: key pattern
    - {key: q2, type: slider, text: t}                        # 10: unknown type
    - {key: q3, type: choice, text: t, options: [only]}       # 11: fewer than two options
    - {key: q4, type: choice, text: t, options: [yes, no]}    # 12: booleans (reported twice)
    - {key: q5, type: likert, text: t, scale: 4}              # 13: scale
    - {key: q6, type: text, text: t, options: [a, b]}         # 14: options on text
    - {key: q7, type: multi, text: t, options: [a, a]}        # 15: duplicate option
    - {key: q8, type: text, text: t, required: maybe}         # 16: required not a flag
    - {key: q9, type: text}                                   # 17: text missing
    - {key: q9, type: text, text: t}                          # 18: duplicate key
    - {key: q10, type: text, text: t, colour: red}            # 19: unknown field
  after: {key: x}                                             # 20: not a list
"""
)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "taxonomy.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_consent_and_surveys_load_with_their_questions(tmp_path):
    taxonomy = load_taxonomy(write(tmp_path, GOOD))
    assert taxonomy.consent.startswith("You will read a text.")
    native = taxonomy.survey.before[0]
    assert (native.key, native.type, native.required, native.options) == (
        "native",
        "choice",
        True,
        ("Yes", "No"),
    )
    difficulty, tools, feedback = taxonomy.survey.after
    assert difficulty.points == (1, 2, 3, 4, 5, 6, 7)
    assert (difficulty.low, difficulty.high, difficulty.required) == ("Easy", "Hard", False)
    assert tools.options == ("Notes", "Dictionary", "42")  # a number is an option's text
    assert feedback.max_length == 20


def test_consent_markdown_never_becomes_markup(tmp_path):
    html = load_taxonomy(write(tmp_path, GOOD)).consent_html
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert 'href="javascript' not in html  # left as text, never a link


def test_no_consent_or_survey_means_no_steps(tmp_path):
    taxonomy = load_taxonomy(write(tmp_path, HEAD))
    assert taxonomy.consent is None
    assert not taxonomy.survey
    assert "consent: (none)" in summarise(taxonomy)
    assert "survey after Submit: no question(s)" in summarise(taxonomy)


def test_every_problem_is_reported_at_its_line(tmp_path):
    path = write(tmp_path, BROKEN)
    with pytest.raises(TaxonomyError) as caught:
        load_taxonomy(path)
    problems = caught.value.problems
    lines = sorted({problem.line for problem in problems})
    expected = [
        int(match.group(1))
        for match in re.finditer(r"# (\d+):", BROKEN)  # the commented lines
    ]
    assert lines == expected
    text = str(caught.value)
    for message in (
        "9: survey.before[0].key: must be lower-case letters",
        "10: survey.before[1].type: must be one of choice, multi, likert, text",
        "11: survey.before[2].options: must be a list of at least two options",
        "12: survey.before[3].options[0]: must be text: YAML reads yes/no",
        "13: survey.before[4].scale: must be 5 or 7",
        "14: survey.before[5].options: is not used by text questions",
        "15: survey.before[6].options[1]: duplicate option 'a'",
        "17: survey.before[8].text: is required",
        "18: survey.before[9].key: duplicate key 'q9' (first at line 17)",
        "19: survey.before[10].colour: unknown key",
        "20: survey.after: must be a list of questions",
        "5: consent: must be non-empty text",
        "7: survey.during: unknown key; expected one of before, after",
    ):
        assert f"{path}:{message}" in text


def test_check_taxonomy_accepts_and_summarises_the_steps(tmp_path):
    path = write(tmp_path, GOOD)
    result = CliRunner().invoke(check_taxonomy_command, [str(path)])
    assert result.exit_code == 0, result.output
    assert "survey after Submit: 3 question(s)" in result.output
    assert "survey before the task: 1 question(s)" in result.output
    assert "difficulty" in result.output and "likert" in result.output
    summary = summarise(load_taxonomy(path))
    assert "consent: " in summary and "(none)" not in summary.split("consent: ")[1][:8]


def test_check_taxonomy_lists_survey_problems_and_fails(tmp_path):
    result = CliRunner().invoke(check_taxonomy_command, [str(write(tmp_path, BROKEN))])
    assert result.exit_code == 1
    assert "survey.before[4].scale: must be 5 or 7" in result.output


# --- the form ---------------------------------------------------------------------------

CHOICE = Question("native", "choice", "English first?", required=True, options=("Yes", "No"))
MULTI = Question("tools", "multi", "Used?", options=("Notes", "Dictionary", "Web"))
LIKERT = Question("difficulty", "likert", "How hard?", required=True, scale=5)
TEXT = Question("feedback", "text", "Anything else?", max_length=10)
QUESTIONS = (CHOICE, MULTI, LIKERT, TEXT)


def form(**values):
    return lambda name: values.get(name.removeprefix("q-"), [])


def test_a_complete_form_gives_the_options_text_and_numbers():
    parsed = parse_survey_form(
        QUESTIONS,
        form(native=["1"], tools=["2", "0", "0"], difficulty=["4"], feedback=["  ok  "]),
    )
    assert parsed.errors == {}
    assert parsed.answers == {
        "native": "No",
        "tools": ["Notes", "Web"],  # taxonomy order, each once
        "difficulty": 4,
        "feedback": "ok",
    }


def test_optional_questions_may_be_blank_and_required_ones_say_what_is_missing():
    parsed = parse_survey_form(QUESTIONS, form())
    assert parsed.answers == {"tools": None, "feedback": None}
    assert parsed.errors == {"native": MESSAGES["choose_one"], "difficulty": MESSAGES["choose_one"]}


@pytest.mark.parametrize(
    ("values", "key", "message"),
    [
        ({"native": ["2"]}, "native", MESSAGES["not_listed"]),
        ({"native": ["0", "1"]}, "native", MESSAGES["not_listed"]),
        ({"native": ["Yes"]}, "native", MESSAGES["not_listed"]),  # positions, not texts
        ({"tools": ["9"]}, "tools", MESSAGES["not_listed"]),
        ({"difficulty": ["6"]}, "difficulty", MESSAGES["not_listed"]),
        ({"difficulty": ["0"]}, "difficulty", MESSAGES["not_listed"]),
        ({"feedback": ["x" * 11]}, "feedback", "Write at most 10 characters (you wrote 11)."),
    ],
)
def test_values_outside_the_question_are_refused_with_a_message(values, key, message):
    complete = {"native": ["0"], "difficulty": ["3"]}
    parsed = parse_survey_form(QUESTIONS, form(**{**complete, **values}))
    assert parsed.errors == {key: message}
    assert parsed.raw[key] == values[key]  # shown again in the form


def test_messages_are_translated_before_their_placeholders_are_filled():
    """The routes pass gettext: the catalogue holds `{limit}`, not the worker's numbers."""
    seen = []

    def translate(message):
        seen.append(message)
        return message.replace("Write at most", "Höchstens").replace("(you wrote", "(Sie:")

    parsed = parse_survey_form(
        QUESTIONS, form(native=["0"], difficulty=["3"], feedback=["x" * 11]), translate
    )
    assert seen == [MESSAGES["too_long"]]
    assert parsed.errors == {"feedback": "Höchstens 10 characters (Sie: 11)."}


def test_answers_become_csv_text():
    assert answer_text(None) == ""
    assert answer_text(4) == "4"
    assert answer_text(["a; b", 'c"']) == '["a; b", "c\\""]'


# --- the dashboard's summary ------------------------------------------------------------


def test_summary_counts_options_and_averages_likert_points():
    survey = Survey(before=(CHOICE,), after=(MULTI, LIKERT, TEXT))
    answers = [
        ("before", "native", "choice", "Yes"),
        ("before", "native", "choice", "Yes"),
        ("before", "native", "choice", "No"),
        ("after", "tools", "multi", ["Notes", "Web"]),
        ("after", "tools", "multi", ["Notes"]),
        ("after", "tools", "multi", None),
        ("after", "difficulty", "likert", 2),
        ("after", "difficulty", "likert", 5),
        ("after", "difficulty", "likert", 5),
        ("after", "feedback", "text", "fine"),
        ("after", "feedback", "text", None),
        ("after", "gone", "text", "a question the taxonomy lost"),
        ("after", "difficulty", "choice", "3"),  # another type under the same key: left out
    ]
    native, tools, difficulty, feedback = summarise_answers(survey, answers)
    assert native.counts == [("Yes", 2), ("No", 1)] and native.answered == 3
    assert tools.counts == [("Notes", 2), ("Dictionary", 0), ("Web", 1)]
    assert (tools.answered, tools.blank) == (2, 1)
    assert difficulty.counts == [("1", 0), ("2", 1), ("3", 0), ("4", 0), ("5", 2)]
    assert difficulty.mean == pytest.approx(4.0)
    assert (feedback.answered, feedback.blank, feedback.counts) == (1, 1, [])


def test_summary_of_a_question_nobody_answered_has_no_mean():
    (difficulty,) = summarise_answers(Survey(after=(LIKERT,)), [])
    assert difficulty.mean is None and difficulty.answered == 0


# --- the step order ---------------------------------------------------------------------

EVERY_STEP = {"has_consent": True, "has_before": True, "has_after": True}


@pytest.mark.parametrize(
    ("facts", "step"),
    [
        (StepFacts(), TASK),
        (StepFacts(submitted=True, outcome="completed"), DONE),
        (StepFacts(**EVERY_STEP), CONSENT),
        (StepFacts(**EVERY_STEP, consent=False, outcome="no_consent"), ENDED),
        (StepFacts(**EVERY_STEP, consent=True), BEFORE_SURVEY),
        (StepFacts(**EVERY_STEP, consent=True, before_done=True, training_pending=True), TRAINING),
        (StepFacts(**EVERY_STEP, consent=True, before_done=True), TASK),
        (StepFacts(**EVERY_STEP, consent=True, before_done=True, submitted=True), AFTER_SURVEY),
        (StepFacts(**EVERY_STEP, consent=True, submitted=True, after_done=True), DONE),
        (StepFacts(**EVERY_STEP, consent=True, outcome="failed_training"), ENDED),
        # Submitted before the taxonomy had a consent step: only the after-survey is asked.
        (StepFacts(**EVERY_STEP, submitted=True, outcome="completed"), AFTER_SURVEY),
        (StepFacts(has_before=True), BEFORE_SURVEY),
    ],
)
def test_a_session_is_at_its_first_pending_step(facts, step):
    assert step_of(facts) == step
