"""Where a worker goes after Submit: MTurk externalSubmit (Prolific's per-outcome URLs:
tests/unit/test_outcomes.py)."""

from __future__ import annotations

import pytest

from app.platforms import mturk_submit_url, mturk_target


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
