"""The crowd platforms' rules (app/rules/platforms.py): the links a researcher pastes, the HIT
preview, the per-submission secret, and where a worker goes after Submit (MTurk
externalSubmit; Prolific's per-outcome URLs: tests/unit/test_outcomes.py)."""

from __future__ import annotations

import pytest

from app.rules.platforms import (
    REFUSED,
    UNVERIFIED,
    VERIFIED,
    is_mturk_preview,
    is_placeholder,
    mturk_external_question,
    mturk_submit_url,
    mturk_target,
    platform_secret_matches,
    prolific_code_url,
    prolific_study_url,
    prolific_verification,
)


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("https://www.mturk.com", "https://www.mturk.com/mturk/externalSubmit"),
        (
            "https://workersandbox.mturk.com/",
            "https://workersandbox.mturk.com/mturk/externalSubmit",
        ),
        ("https://WWW.MTURK.COM", None),  # MTurk sends its origins exactly: nothing else
        ("https://evil.com\\.mturk.com", None),  # a backslash is a slash to browsers: evil.com
        ("http://www.mturk.com", None),
        ("https://mturk.com.evil.example", None),
        ("https://evilmturk.com", None),
        ("https://www.mturk.com@evil.example", None),
        ("https://user@www.mturk.com", None),
        ("https://www.mturk.com:8443", None),
        ("https://www.mturk.com:notaport", None),
        ("https://www.mturk.com/other/path", None),
        ("https://www.mturk.com/?x=1", None),
        ("javascript:alert(1)", None),
        ("", None),
        (None, None),
        (42, None),
    ],
)
def test_mturk_submit_url_accepts_only_mturk_origins(given, expected):
    assert mturk_submit_url(given) == expected


def test_mturk_target_needs_platform_assignment_and_origin():
    params = {"assignment_id": "A1", "turk_submit_to": "https://www.mturk.com"}
    assert mturk_target("mturk", params) == {
        "submit_to": "https://www.mturk.com/mturk/externalSubmit",
        "assignment_id": "A1",
    }
    assert mturk_target("prolific", params) is None
    assert mturk_target("mturk", {"turk_submit_to": "https://www.mturk.com"}) is None
    assert mturk_target("mturk", {"assignment_id": "A1"}) is None


def test_study_links_carry_each_platforms_placeholders():
    start = "https://falte.example/start"
    assert prolific_study_url(start) == (
        "https://falte.example/start?PROLIFIC_PID={{%PROLIFIC_PID%}}"
        "&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
    )
    xml = mturk_external_question("https://falte.example/start?a=1&b=<2>")
    assert "<ExternalURL>https://falte.example/start?a=1&amp;b=&lt;2&gt;</ExternalURL>" in xml
    assert "<FrameHeight>0</FrameHeight>" in xml
    assert prolific_code_url("C0DE") == "https://app.prolific.com/submissions/complete?cc=C0DE"


def test_mturk_preview_is_only_the_placeholder_assignment():
    assert is_mturk_preview({"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE"})
    assert not is_mturk_preview({"assignmentId": "A1"})
    assert not is_mturk_preview({})


def test_the_per_submission_secret_must_match_every_key():
    stored = {"study_id": "S", "session_id": "X", "assignment_id": "A1"}
    assert platform_secret_matches("prolific", {"study_id": "S", "session_id": "X"}, stored)
    assert not platform_secret_matches("prolific", {"study_id": "S", "session_id": "Y"}, stored)
    assert not platform_secret_matches("prolific", {"study_id": "S"}, stored)
    assert platform_secret_matches("mturk", {"assignment_id": "A1"}, stored)
    assert not platform_secret_matches("mturk", {"assignment_id": "A2"}, stored)
    assert not platform_secret_matches("direct", {"assignment_id": "A1"}, stored)


# --- issue 26: Prolific's answer about a submission; issue 27: placeholders ----------------

OPEN = {"participant": "pid-1", "study_id": "study-1", "status": "ACTIVE"}


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (200, OPEN, VERIFIED),
        (200, {**OPEN, "status": "RESERVED"}, VERIFIED),
        (404, None, REFUSED),
        (200, {**OPEN, "participant": "pid-2"}, REFUSED),
        (200, {**OPEN, "study_id": "study-2"}, REFUSED),
        (200, {**OPEN, "status": "RETURNED"}, REFUSED),
        (200, {**OPEN, "status": "APPROVED"}, REFUSED),
        (None, None, UNVERIFIED),  # no answer in time
        (500, None, UNVERIFIED),
        (503, None, UNVERIFIED),
        (401, None, UNVERIFIED),  # our token refused: not the worker's fault
        (200, ["not", "a", "submission"], UNVERIFIED),
        (200, {"results": []}, UNVERIFIED),
    ],
)
def test_prolific_verification_rule(status, body, expected):
    assert prolific_verification(status, body, "pid-1", "study-1").result == expected


@pytest.mark.parametrize(
    "value",
    [
        "{{%PROLIFIC_PID%}}",
        "%PROLIFIC_PID%",
        "%SESSION_ID%",
        "${workerId}",
        "{{workerId}}",
        "{workerId}",
        "[workerId]",
        "x{{y}}",
    ],
)
def test_unexpanded_placeholders_are_recognised(value):
    assert is_placeholder(value)


@pytest.mark.parametrize(
    "value", ["5f3a9b2c1d0e4f5a6b7c8d9e", "A2B3C4D5E6F7G8", "W-1", "50%", "a{b}", "name (2)"]
)
def test_real_ids_are_not_placeholders(value):
    assert not is_placeholder(value)


def test_the_study_url_prolific_gets_is_made_of_its_placeholders():
    url = prolific_study_url("https://falte.example/start")
    query = url.split("?", 1)[1]
    assert all(is_placeholder(part.split("=", 1)[1]) for part in query.split("&"))
