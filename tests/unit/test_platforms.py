"""The crowd platforms' rules (app/platforms.py): the links a researcher pastes, the HIT
preview, the per-submission secret, and where a worker goes after Submit (MTurk
externalSubmit; Prolific's per-outcome URLs: tests/unit/test_outcomes.py)."""

from __future__ import annotations

import pytest

from app.platforms import (
    is_mturk_preview,
    mturk_external_question,
    mturk_submit_url,
    mturk_target,
    platform_secret_matches,
    prolific_code_url,
    prolific_study_url,
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
