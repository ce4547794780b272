"""Taxonomy parsing and validation: pure functions on YAML files, no app needed."""

from __future__ import annotations

import re
import shutil
from decimal import Decimal
from pathlib import Path

import pytest
from click.testing import CliRunner
from flask import Flask
from flask.cli import FlaskGroup

from app.taxonomy import (
    DEFAULT_PAIRED_PROMPT,
    PALETTE,
    TaxonomyError,
    check_taxonomy_command,
    current_taxonomy,
    init_app,
    load_taxonomy,
    summarise,
)
from tests.support.taxonomies import TWO_CATEGORIES, problems_of, write_taxonomy

ROOT = Path(__file__).resolve().parents[2]
DEFAULT = ROOT / "config" / "taxonomy.yaml"
BOOOOKSCORE = ROOT / "config" / "taxonomies" / "booookscore.yaml"

GOOD = TWO_CATEGORIES

# Every line below with a comment has exactly one problem, reported at that line.
BROKEN = """\
title: Broken
instructions: Read carefully.
colour: red                           # 3: unknown top-level key
categories:
  - key: Bad Key                      # 5: key pattern
    name: First
    type: singleton
    description: d
    shortcut: "1"
  - key: second
    name: Second
    type: triple                      # 12: unknown type
    description: d
    shortcut: "1"                     # 14: duplicate shortcut
    color: blue                       # 15: bad colour
  - key: second                       # 16: duplicate category key
    name: ""                          # 17: empty name
    type: singleton
    description: d
    paired_prompt: Pick another       # 20: prompt on a singleton
    hint: typo                        # 21: unknown category key
entities: sometimes                   # 22: unknown mode
study:
  annotators_per_document: 0          # 24: out of range
  completion_url: "ftp://x.org/done"  # 25: not http(s), no {code}
  attention_check_share: 0.9          # 26: out of range
validation:
  reasons: ["A. ok", ""]              # 28: empty reason
"""


# --- the shipped files ---------------------------------------------------------------


def test_default_taxonomy_is_the_falte_coherence_taxonomy():
    taxonomy = load_taxonomy(DEFAULT)
    assert taxonomy.title == "Coherence errors in narrative summaries"
    assert taxonomy.keys == (
        "new-person",
        "missing-info",
        "abrupt-transition",
        "repetition",
        "inconsistency",
        "ungrammatical",
        "unclear-coreference",
    )
    paired = [c.key for c in taxonomy.categories if c.is_paired]
    assert paired == ["repetition", "inconsistency"]
    assert all(c.type == "singleton" for c in taxonomy.categories if not c.is_paired)
    assert [c.shortcut for c in taxonomy.categories] == list("1234567")
    assert len({c.color for c in taxonomy.categories}) == 7
    assert all(c.description and c.name for c in taxonomy.categories)
    assert all(c.paired_prompt for c in taxonomy.categories if c.is_paired)
    assert taxonomy.comment.label == "Other comments / feedback (optional)"
    assert taxonomy.comment.required is False
    assert taxonomy.entities == "auto"
    assert taxonomy.study.annotators_per_document == 3
    assert taxonomy.study.completion_url == (
        "https://app.prolific.com/submissions/complete?cc={code}"
    )
    assert taxonomy.study.abandon_after_minutes == 120
    assert taxonomy.study.claim_minutes == 10
    assert taxonomy.study.attention_check_share == 0.1
    assert taxonomy.validation.partial_counts_as_valid is True
    assert taxonomy.validation.reasons == (
        "A. Not relevant to span",
        "B. Answered in the summary",
        "C. Not addressing issues that matter",
        "D. Other",
    )


def test_booookscore_taxonomy_has_the_eight_types_and_the_real_reasons():
    taxonomy = load_taxonomy(BOOOOKSCORE)
    assert taxonomy.keys == (
        "entity-omission",
        "event-omission",
        "causal-omission",
        "discontinuity",
        "salience",
        "language",
        "inconsistency",
        "duplication",
    )
    assert [c.key for c in taxonomy.categories if c.is_paired] == ["inconsistency", "duplication"]
    assert taxonomy.category("entity-omission").name == "Entity omission"
    assert taxonomy.comment.required is True
    # Exactly the wording of the validators' reasons in the BooookScore data.
    assert taxonomy.validation.reasons == (
        "A. Not relevant to span",
        "B. Answered in the summary",
        "C. Not addressing issues that matter (refer to standards)",
        "D. Other",
    )
    assert len({c.color for c in taxonomy.categories}) == 8


# --- defaults, version, public dict --------------------------------------------------


def test_minimal_file_gets_defaults(tmp_path):
    taxonomy = load_taxonomy(write_taxonomy(tmp_path, GOOD))
    vague, echo = taxonomy.categories
    assert (vague.color, echo.color) == (PALETTE[0], PALETTE[1])
    assert vague.shortcut is None and vague.paired_prompt is None
    assert echo.is_paired and echo.paired_prompt == DEFAULT_PAIRED_PROMPT
    assert taxonomy.comment.label == "Other comments / feedback (optional)"
    assert taxonomy.comment.required is False
    assert taxonomy.comment.max_length == 2000
    assert taxonomy.entities == "auto"
    assert taxonomy.study.annotators_per_document == 3
    assert taxonomy.study.completion_url is None
    assert taxonomy.study.anonymous is False  # production needs a platform id or link
    assert taxonomy.validation.partial_counts_as_valid is True
    assert taxonomy.category("echo") is echo
    assert taxonomy.category("missing") is None


def test_unquoted_digit_shortcut_and_short_colour_are_accepted(tmp_path):
    content = GOOD.replace(
        "    description: Too vague to follow.\n",
        '    description: Too vague to follow.\n    shortcut: 1\n    color: "#ABC"\n',
    )
    vague = load_taxonomy(write_taxonomy(tmp_path, content)).category("vague")
    assert vague.shortcut == "1"
    assert vague.color == "#abc"


def test_version_is_stable_and_follows_the_content(tmp_path):
    path = write_taxonomy(tmp_path, GOOD)
    first = load_taxonomy(path).version
    assert re.fullmatch(r"[0-9a-f]{16}", first)
    assert load_taxonomy(path).version == first
    copy = tmp_path / "copy.yaml"
    shutil.copyfile(path, copy)
    assert load_taxonomy(copy).version == first
    write_taxonomy(tmp_path, GOOD.replace("Too vague", "Much too vague"))
    assert load_taxonomy(path).version != first


def test_public_dict_has_what_the_page_needs_and_no_internals():
    taxonomy = load_taxonomy(DEFAULT)
    public = taxonomy.to_public_dict()
    assert set(public) == {
        "version",
        "title",
        "instructions_html",
        "comment",
        "categories",
        "entities",
    }
    assert public["comment"] == {
        "label": "Other comments / feedback (optional)",
        "required": False,
        "max_length": 2000,
    }
    assert public["categories"][3] == {
        "key": "repetition",
        "name": "Repetition",
        "type": "paired",
        "description": taxonomy.categories[3].description,
        "shortcut": "4",
        "color": taxonomy.categories[3].color,
        "paired_prompt": taxonomy.categories[3].paired_prompt,
    }
    assert "prolific" not in repr(public)


def test_instructions_html_escapes_raw_html_and_drops_javascript_links(tmp_path):
    instructions = (
        "instructions: |\n"
        "  **Read** carefully.\n\n"
        "  <script>alert(1)</script>\n\n"
        '  <img src=x onerror="alert(2)">\n\n'
        "  [bad](javascript:alert(3)) <javascript:alert(4)> [good](https://example.org)\n"
    )
    content = GOOD.replace("instructions: Read each paragraph.\n", instructions)
    html = load_taxonomy(write_taxonomy(tmp_path, content)).instructions_html
    assert "<strong>Read</strong>" in html
    assert "<script" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<img" not in html and "&lt;img" in html
    assert 'href="javascript' not in html.lower()
    assert '<a href="https://example.org">good</a>' in html


# --- problems --------------------------------------------------------------------------


def test_every_problem_is_reported_at_once_with_its_line(tmp_path):
    path = write_taxonomy(tmp_path, BROKEN)
    with pytest.raises(TaxonomyError) as caught:
        load_taxonomy(path)
    located = [f"{p.line}: {p.key}" for p in caught.value.problems]
    assert located == [
        "3: colour",
        "5: categories[0].key",
        "12: categories[1].type",
        "14: categories[1].shortcut",
        "15: categories[1].color",
        "16: categories[2].key",
        "17: categories[2].name",
        "20: categories[2].paired_prompt",
        "21: categories[2].hint",
        "22: entities",
        "24: study.annotators_per_document",
        "25: study.completion_url",
        "26: study.attention_check_share",
        "28: validation.reasons[1]",
    ]
    lines = str(caught.value).splitlines()
    assert len(lines) == len(located)
    for line, prefix in zip(lines, located, strict=True):
        number, key = prefix.split(": ")
        assert line.startswith(f"{path}:{number}: {key}: ")
    problems = problems_of(path)
    assert "14: categories[1].shortcut: duplicate shortcut '1' (first at line 9)" in problems
    assert "16: categories[2].key: duplicate key 'second' (first at line 10)" in problems


def test_yaml_syntax_error_reports_its_line(tmp_path):
    path = write_taxonomy(tmp_path, "title: ok\ninstructions: ok\n  bad: indentation\n")
    assert problems_of(path) == ["3: yaml: mapping values are not allowed here"]


def test_unclosed_quote_names_where_it_started(tmp_path):
    path = write_taxonomy(tmp_path, 'title: "ok\ninstructions: x\n')
    [problem] = problems_of(path)
    assert problem.startswith("3: yaml: ") and "at line 1" in problem


def test_duplicate_mapping_keys_are_caught_anywhere(tmp_path):
    content = GOOD.replace("title: Test taxonomy\n", "title: One\ntitle: Two\n").replace(
        "    name: Vague\n", "    name: Vague\n    name: Vaguer\n"
    )
    assert problems_of(write_taxonomy(tmp_path, content)) == [
        "2: title: duplicate key (first at line 1)",
        "7: categories[0].name: duplicate key (first at line 6)",
    ]


def test_unknown_type_bad_colour_and_unknown_field(tmp_path):
    content = GOOD.replace("type: paired", "type: pair\n    colour: red\n    color: red")
    assert problems_of(write_taxonomy(tmp_path, content)) == [
        "10: categories[1].type: must be one of singleton, paired, got 'pair'",
        "11: categories[1].colour: unknown key; expected one of key, name, type, "
        "description, shortcut, color, paired_prompt",
        "12: categories[1].color: must be a colour written #rgb or #rrggbb, got 'red'",
    ]


@pytest.mark.parametrize("shortcut", ['" "', '"ab"', '"\\n"', '""', "[x]"])
def test_shortcut_must_be_one_printable_character(tmp_path, shortcut):
    content = GOOD.replace("type: singleton", f"type: singleton\n    shortcut: {shortcut}")
    [problem] = problems_of(write_taxonomy(tmp_path, content))
    assert problem.startswith("7: categories[0].shortcut: must be one printable character")


def test_required_fields_and_empty_categories(tmp_path):
    assert problems_of(write_taxonomy(tmp_path, "title: ''\ncategories: []\n")) == [
        "1: title: must be non-empty text",
        "1: instructions: is required",
        "2: categories: must be a non-empty list of categories",
    ]
    content = "title: t\ninstructions: i\ncategories:\n  - name: n\n  - just text\n"
    assert problems_of(write_taxonomy(tmp_path, content)) == [
        "4: categories[0].key: is required",
        "4: categories[0].type: is required",
        "4: categories[0].description: is required",
        "5: categories[1]: must be a mapping with key, name, type and description",
    ]


def test_settings_sections_are_checked(tmp_path):
    content = GOOD + (
        "comment: {label: 5, required: 'yes', max_length: 0}\n"
        "study: {completion_url: 'https://x.org/done?cc={code}&s={study}', abandon: 3,"
        " anonymous: 'no'}\n"
        "validation: {partial_counts_as_valid: 1, reasons: [A, A]}\n"
    )
    assert problems_of(write_taxonomy(tmp_path, content)) == [
        "12: comment.label: must be non-empty text",
        "12: comment.required: must be true or false, got 'yes'",
        "12: comment.max_length: must be a whole number from 1 to 10000, got 0",
        "13: study.abandon: unknown key; expected one of annotators_per_document, "
        "completion_url, completion, attention_checks, abandon_after_minutes, claim_minutes, "
        "attention_check_share, anonymous, max_open_per_network, min_words_per_minute, "
        "suggestions, suggestion_arms, language, prolific_study_id, contact, bonus",
        "13: study.completion_url: must be an http(s) URL ({code} is replaced by the "
        "session's own code), with no braces other than {code}, "
        "got 'https://x.org/done?cc={code}&s={study}'",
        "13: study.anonymous: must be true or false, got 'no'",
        "14: validation.partial_counts_as_valid: must be true or false, got 1",
        "14: validation.reasons[1]: duplicate reason 'A'",
    ]


@pytest.mark.parametrize(
    ("setting", "value", "refused"),
    [
        *(
            ("max_open_per_network", value, "must be a whole number from 1")
            for value in ["0", "-1", "1.5", "'3'", "true"]
        ),
        *(
            ("claim_minutes", value, "must be a whole number from 3 to 100000")
            for value in ["2", "0", "1.5", "'10'", "true"]
        ),
    ],
)
def test_study_counts_are_whole_numbers_in_their_range(tmp_path, setting, value, refused):
    content = GOOD + f"study: {{{setting}: {value}}}\n"
    [problem] = problems_of(write_taxonomy(tmp_path, content))
    assert problem.startswith(f"12: study.{setting}: {refused}")


@pytest.mark.parametrize(
    ("setting", "default", "given"), [("max_open_per_network", 3, 12), ("claim_minutes", 10, 25)]
)
def test_study_counts_have_a_default_and_are_read(tmp_path, setting, default, given):
    assert getattr(load_taxonomy(write_taxonomy(tmp_path, GOOD)).study, setting) == default
    study = GOOD + f"study: {{{setting}: {given}}}\n"
    assert getattr(load_taxonomy(write_taxonomy(tmp_path, study)).study, setting) == given


def test_the_bonus_rule_is_read_and_each_key_checked_at_its_line(tmp_path):
    bonus = (
        "study:\n  bonus:\n    per_validated: 0.05\n    per_planted: 0.2\n    cap: 2\n"
        "    currency: GBP\n"
    )
    rule = load_taxonomy(write_taxonomy(tmp_path, GOOD + bonus)).study.bonus
    assert (rule.per_validated, rule.per_planted, rule.cap, rule.currency) == (
        Decimal("0.05"), Decimal("0.2"), Decimal("2.0"), "GBP")  # fmt: skip
    assert rule.amount(10, 3) == Decimal("1.10")
    assert load_taxonomy(write_taxonomy(tmp_path, GOOD)).study.bonus is None
    bad = (
        "study:\n  bonus:\n    per_validated: -1\n    per_plant: 0.2\n    currency: gbp\n"
        "    cap: lots\n"
    )
    assert problems_of(write_taxonomy(tmp_path, GOOD + bad)) == [
        "14: study.bonus.per_validated: must be a number from 0.0 to 10000.0, got -1",
        "15: study.bonus.per_plant: unknown key; expected one of per_validated, per_planted, "
        "cap, currency",
        "16: study.bonus.currency: must be the currency as 3 capitals (GBP, USD, EUR), got 'gbp'",
        "17: study.bonus.cap: must be a number from 0.0 to 10000.0, got 'lots'",
    ]
    no_currency = "study:\n  bonus:\n    per_planted: 0.5\n"
    assert problems_of(write_taxonomy(tmp_path, GOOD + no_currency)) == [
        "13: study.bonus.currency: is required when a bonus is paid (GBP, USD...)"
    ]
    assert problems_of(write_taxonomy(tmp_path, GOOD + "study: {bonus: 3}\n")) == [
        "12: study.bonus: must be a mapping of per_validated, per_planted, cap, currency"
    ]


NOT_A_MAPPING = "1: file: must be a mapping with title, instructions and categories, found"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", f"{NOT_A_MAPPING} an empty file"),
        ("- a\n", f"{NOT_A_MAPPING} a list"),
        (b"title: \xff\n", "1: file: is not UTF-8 text"),
    ],
)
def test_file_that_is_not_a_mapping(tmp_path, content, message):
    path = tmp_path / "taxonomy.yaml"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    assert problems_of(path) == [message]


def test_missing_file(tmp_path):
    assert problems_of(tmp_path / "nope.yaml") == [
        "1: file: cannot read: No such file or directory"
    ]


# --- check-taxonomy command and init_app ---------------------------------------------


def test_check_taxonomy_summarises_a_good_file():
    result = CliRunner().invoke(check_taxonomy_command, [str(BOOOOKSCORE)])
    assert result.exit_code == 0, result.output
    assert result.stdout == summarise(load_taxonomy(BOOOOKSCORE)) + "\n"
    assert "8 categories (6 singleton, 2 paired)" in result.stdout
    assert "  duplication              paired    [8] Duplication" in result.stdout


def test_check_taxonomy_lists_every_problem_of_a_bad_file(tmp_path):
    path = write_taxonomy(tmp_path, BROKEN)
    result = CliRunner().invoke(check_taxonomy_command, [str(path)])
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    assert lines[-1] == f"14 problem(s) in {path}"
    with pytest.raises(TaxonomyError) as caught:
        load_taxonomy(path)
    assert lines[:-1] == [str(problem) for problem in caught.value.problems]
    assert result.stdout == ""


def test_check_taxonomy_defaults_to_the_environment_then_the_shipped_file(tmp_path, monkeypatch):
    monkeypatch.delenv("FLASK_TAXONOMY_PATH", raising=False)
    monkeypatch.setenv("TAXONOMY_PATH", str(write_taxonomy(tmp_path, "title: [")))
    result = CliRunner().invoke(check_taxonomy_command, [])
    assert result.exit_code == 1
    assert str(tmp_path) in result.stderr
    monkeypatch.delenv("TAXONOMY_PATH")
    result = CliRunner().invoke(check_taxonomy_command, [])
    assert result.exit_code == 0
    assert result.stdout.startswith("Coherence errors in narrative summaries\n")


def test_check_taxonomy_has_help():
    result = CliRunner().invoke(check_taxonomy_command, ["--help"])
    assert result.exit_code == 0
    assert "Validate a taxonomy YAML file" in result.stdout


def test_init_app_registers_the_taxonomy_or_refuses_to_start(tmp_path):
    app = Flask(__name__)
    app.config["TAXONOMY_PATH"] = str(DEFAULT)
    init_app(app)
    with app.app_context():
        assert current_taxonomy().keys[0] == "new-person"

    broken = Flask(__name__)
    broken.config["TAXONOMY_PATH"] = str(write_taxonomy(tmp_path, BROKEN))
    with pytest.raises(TaxonomyError, match=r"taxonomy\.yaml:3: colour: unknown key"):
        init_app(broken)
    assert "taxonomy" not in broken.extensions


def test_flask_commands_report_a_broken_app_taxonomy_without_a_traceback(tmp_path):
    # `flask COMMAND` builds the app before looking an app command up, so init_app fails
    # first. (check-taxonomy itself is a CLI plugin that runs without the app.)
    path = write_taxonomy(tmp_path, BROKEN)

    def create_app() -> Flask:
        app = Flask(__name__)
        app.config["TAXONOMY_PATH"] = str(path)
        init_app(app)
        return app

    result = CliRunner().invoke(FlaskGroup(create_app=create_app), ["routes"])
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: {path}:3: colour: unknown key")
    assert len(result.stderr.splitlines()) == 14
    assert "Traceback" not in result.output


def test_suggestion_settings(tmp_path):
    content = GOOD + "study: {suggestion_arms: {show: 0.5, none: 0.5}}\n"
    taxonomy = load_taxonomy(write_taxonomy(tmp_path, content))
    assert taxonomy.study.suggestion_arms == (("show", 0.5), ("none", 0.5))
    assert taxonomy.study.suggestions == "none"
    content = GOOD + "study: {suggestions: always, suggestion_arms: {show: 0, maybe: 1}}\n"
    assert problems_of(write_taxonomy(tmp_path, content)) == [
        "12: study.suggestions: must be one of show, none, got 'always'",
        "12: study.suggestion_arms.maybe: unknown key; expected one of show, none",
        "12: study.suggestion_arms.show: must be a number from 0.001 to 1000.0, got 0",
    ]


def test_the_prolific_study_id_and_contact_are_read_and_checked(tmp_path):
    study = "study: {prolific_study_id: 60aa0000bbbb1111cccc2222, contact: lab@example.org}\n"
    taxonomy = load_taxonomy(write_taxonomy(tmp_path, GOOD + study))
    assert taxonomy.study.prolific_study_id == "60aa0000bbbb1111cccc2222"
    assert taxonomy.study.contact == "lab@example.org"
    bad = "study: {prolific_study_id: '{{%STUDY_ID%}}', contact: ''}\n"
    assert problems_of(write_taxonomy(tmp_path, GOOD + bad)) == [
        "12: study.prolific_study_id: must be the study's id itself, not a placeholder, "
        "got '{{%STUDY_ID%}}'",
        "12: study.contact: must be non-empty text",
    ]
    spaced = "study: {prolific_study_id: 'two words'}\n"
    [problem] = problems_of(write_taxonomy(tmp_path, GOOD + spaced))
    assert problem.startswith("12: study.prolific_study_id: must be the study's id as")
