"""Outcomes: which one ends a session, and where each sends a worker (app.rules.outcomes), and
the taxonomy's `completion:` / `attention_checks:` settings that feed them."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from app.rules.outcomes import (
    FROM_COMPLETION,
    FROM_COMPLETION_URL,
    FROM_CONFIG,
    FROM_NOWHERE,
    OUTCOMES,
    CompletionTarget,
    completion_address,
    completion_targets,
    session_outcome,
)
from app.taxonomy import check_taxonomy_command, load_taxonomy
from tests.support.taxonomies import problems_of, write_taxonomy

ROOT = Path(__file__).resolve().parents[2]
PROLIFIC = "https://app.prolific.com/submissions/complete?cc="

HEAD = """\
title: Test taxonomy
instructions: Read each paragraph.
categories:
  - {key: vague, name: Vague, type: singleton, description: Too vague.}
"""


def write(tmp_path: Path, study: str) -> Path:
    return write_taxonomy(tmp_path, HEAD + study)


# --- which outcome -------------------------------------------------------------------


def test_a_worker_who_did_everything_completed():
    assert session_outcome() == "completed"
    assert session_outcome(attention_checks="fail") == "completed"


def test_missed_checks_fail_only_when_the_study_says_so():
    assert session_outcome(failed_checks=True) == "completed"
    assert session_outcome(failed_checks=True, attention_checks="flag") == "completed"
    assert session_outcome(failed_checks=True, attention_checks="fail") == "failed_checks"


def test_the_first_step_not_got_through_decides():
    everything_failed = {"consented": False, "passed_training": False, "failed_checks": True}
    assert session_outcome(**everything_failed, attention_checks="fail") == "no_consent"
    assert (
        session_outcome(passed_training=False, failed_checks=True, attention_checks="fail")
        == "failed_training"
    )


# --- where each outcome goes ---------------------------------------------------------


def test_per_outcome_codes_win_and_the_first_wave_url_fills_the_rest():
    targets = completion_targets(
        {"completed": f"{PROLIFIC}C1", "failed_checks": f"{PROLIFIC}C3"},
        "https://x.org/done?cc={code}",
    )
    assert [t.outcome for t in targets] == list(OUTCOMES)
    assert {t.outcome: (t.url, t.source) for t in targets} == {
        "completed": (f"{PROLIFIC}C1", FROM_COMPLETION),
        "failed_training": ("https://x.org/done?cc={code}", FROM_COMPLETION_URL),
        "failed_checks": (f"{PROLIFIC}C3", FROM_COMPLETION),
        "no_consent": ("https://x.org/done?cc={code}", FROM_COMPLETION_URL),
    }


def test_completion_url_setting_overrides_every_outcome():
    targets = completion_targets({"completed": f"{PROLIFIC}C1"}, None, "https://e.org/{code}")
    assert {(t.url, t.source) for t in targets} == {("https://e.org/{code}", FROM_CONFIG)}


def test_without_anything_no_outcome_has_an_address():
    targets = completion_targets({}, None)
    assert targets == tuple(CompletionTarget(o, None, FROM_NOWHERE) for o in OUTCOMES)


@pytest.mark.parametrize(
    ("template", "address"),
    [
        (f"{PROLIFIC}C1A2B3C4", f"{PROLIFIC}C1A2B3C4"),  # a fixed code: as it is
        (f"{PROLIFIC}{{code}}", f"{PROLIFIC}SESSIONCODE"),  # first wave: the session's code
        ("https://x.org/fixed", "https://x.org/fixed"),  # first wave without {code}
        (None, None),
        ("", None),
        ("javascript:alert(1)//{code}", None),  # COMPLETION_URL is not checked elsewhere
        ("/relative/{code}", None),
    ],
)
def test_completion_address(template, address):
    assert completion_address(template, "SESSIONCODE") == address


def test_only_a_url_with_code_sends_the_session_code():
    first_wave = CompletionTarget("completed", f"{PROLIFIC}{{code}}", FROM_COMPLETION_URL)
    assert first_wave.sends_session_code
    assert not CompletionTarget("completed", f"{PROLIFIC}C1", FROM_COMPLETION).sends_session_code
    assert not CompletionTarget("completed", None, FROM_NOWHERE).sends_session_code


# --- the taxonomy's study section ----------------------------------------------------


def test_prolific_codes_become_prolific_completion_urls(tmp_path):
    path = write(
        tmp_path,
        "study:\n"
        "  completion:\n"
        "    no_consent: CN1M2L3K\n"
        "    completed: C1A2B3C4\n"
        '    failed_training: "https://example.org/screened-out?study=7"\n'
        "    failed_checks: cq5-r4_s3t\n"
        "  attention_checks: fail\n",
    )
    study = load_taxonomy(path).study
    assert study.completion == (
        ("completed", f"{PROLIFIC}C1A2B3C4"),
        ("failed_training", "https://example.org/screened-out?study=7"),
        ("failed_checks", f"{PROLIFIC}cq5-r4_s3t"),
        ("no_consent", f"{PROLIFIC}CN1M2L3K"),
    )
    assert study.attention_checks == "fail"


def test_check_taxonomy_accepts_a_fixed_completion_code(tmp_path):
    """The first-wave refusal: every Prolific submission landed in manual review."""
    fixed = write(tmp_path, f'study:\n  completion_url: "{PROLIFIC}C1A2B3C4"\n')
    result = CliRunner().invoke(check_taxonomy_command, [str(fixed)])
    assert result.exit_code == 0, result.output
    assert f"  completed        {PROLIFIC}C1A2B3C4" in result.output
    assert f"  no_consent       {PROLIFIC}C1A2B3C4" in result.output
    per_outcome = write(tmp_path, "study:\n  completion: {completed: C1A2B3C4}\n")
    result = CliRunner().invoke(check_taxonomy_command, [str(per_outcome)])
    assert result.exit_code == 0, result.output
    assert "attention_checks: flag" in result.output


def test_defaults_flag_attention_checks_and_name_no_codes(tmp_path):
    study = load_taxonomy(write(tmp_path, "")).study
    assert (study.completion, study.attention_checks) == ((), "flag")


def test_completion_problems_are_reported_at_their_lines(tmp_path):
    path = write(
        tmp_path,
        "study:\n"  # 5
        "  completion:\n"  # 6
        "    completed: C1A2 B3C4\n"  # 7: a space
        "    screened_out: C9\n"  # 8: not an outcome
        '    failed_checks: "http://example.org/done"\n'  # 9: not https
        "    failed_training: 12345\n"  # 10: a number
        '    no_consent: "https://example.org/{study}"\n'  # 11: a brace
        "  attention_checks: drop\n"  # 12
        '  completion_url: "ftp://example.org/{code}"\n',  # 13
    )
    code = "must be a Prolific completion code (letters, digits, '-' and '_', at most 64) "
    code += "or a full https:// URL"
    assert problems_of(path) == [
        f"7: study.completion.completed: {code}, got 'C1A2 B3C4'",
        "8: study.completion.screened_out: unknown key; expected one of completed, "
        "failed_training, failed_checks, no_consent",
        "9: study.completion.failed_checks: must be a full https:// URL, "
        "got 'http://example.org/done'",
        f"10: study.completion.failed_training: {code}; write a code made of digits in "
        "quotes, got 12345",
        "11: study.completion.no_consent: must be a full https:// URL, with no braces other "
        "than {code}, got 'https://example.org/{study}'",
        "12: study.attention_checks: must be one of flag, fail, got 'drop'",
        "13: study.completion_url: must be an http(s) URL ({code} is replaced by the "
        "session's own code), got 'ftp://example.org/{code}'",
    ]


@pytest.mark.parametrize(
    "value",
    [
        "javascript:alert(1)",
        "C1<script>",
        "https://",
        "https:///path",
        "'https://a b.org/'",
        "'https://[::1/done'",
        '""',
        "[C1]",
    ],
)
def test_bad_completion_values_are_refused(tmp_path, value):
    [problem] = problems_of(write(tmp_path, f"study:\n  completion:\n    completed: {value}\n"))
    assert problem.startswith("7: study.completion.completed: must be")


def test_completion_must_be_a_mapping(tmp_path):
    assert problems_of(write(tmp_path, "study:\n  completion: C1A2B3C4\n")) == [
        "6: study.completion: must be a mapping of outcomes (completed, failed_training, "
        "failed_checks, no_consent) to codes"
    ]


def test_shipped_taxonomies_carry_a_commented_completion_example_that_is_valid(tmp_path):
    for name in ("taxonomy.yaml", "taxonomies/booookscore.yaml"):
        lines = (ROOT / "config" / name).read_text(encoding="utf-8").splitlines()
        start = next(i for i, line in enumerate(lines) if line.startswith("  # completion:"))
        block = []
        for line in lines[start:]:
            if not line.startswith("  # "):
                break
            block.append("  " + line[4:])
        study = "study:\n" + "\n".join(block) + "\n"
        taxonomy = load_taxonomy(write(tmp_path, study)).study
        assert [outcome for outcome, _ in taxonomy.completion] == list(OUTCOMES)
        assert taxonomy.attention_checks == "flag"  # the example shows the default
