"""The pure rules of app.crowd.identity: what proves a request is a session's worker, and what
a resume may change of the stored platform parameters."""

from __future__ import annotations

import pytest

from app.crowd.identity import WorkerIdentity
from app.rules.platforms import mturk_origin

PROLIFIC_STORED = {"study_id": "S", "session_id": "X"}
MTURK_STORED = {"assignment_id": "A1", "hit_id": "H", "turk_submit_to": "https://www.mturk.com"}


@pytest.mark.parametrize(
    ("identity", "stored", "allowed"),
    [
        (
            WorkerIdentity("prolific", "p", {"study_id": "S", "session_id": "X"}),
            PROLIFIC_STORED,
            True,
        ),
        (WorkerIdentity("prolific", "p", {"session_id": "X"}), PROLIFIC_STORED, False),
        (WorkerIdentity("prolific", "p", {"study_id": "S"}), PROLIFIC_STORED, False),
        (
            WorkerIdentity("prolific", "p", {"study_id": "T", "session_id": "X"}),
            PROLIFIC_STORED,
            False,
        ),
        (WorkerIdentity("prolific", "p", {"study_id": "S", "session_id": "X"}), {}, False),
        (WorkerIdentity("mturk", "w", {"assignment_id": "A1"}), MTURK_STORED, True),
        (WorkerIdentity("mturk", "w", {"assignment_id": "A2"}), MTURK_STORED, False),
        (WorkerIdentity("mturk", "w", {}), MTURK_STORED, False),
        (WorkerIdentity("mturk", "w", {"assignment_id": "A1"}), {}, False),
        (WorkerIdentity("direct", "n"), {}, False),
        (WorkerIdentity("direct", "n", owner=True), {}, True),
        (WorkerIdentity("mturk", "w", opened=frozenset({"a7"})), MTURK_STORED, True),
        (WorkerIdentity("mturk", "w", opened=frozenset({"v7", "a8"})), MTURK_STORED, False),
    ],
)
def test_what_proves_a_resume(identity, stored, allowed):
    assert identity.may_resume("a", 7, stored) is allowed


def test_a_resume_never_changes_stored_parameters():
    other = WorkerIdentity(
        "mturk", "w", {"assignment_id": "A2", "hit_id": "H2", "turk_submit_to": "https://x"}
    )
    assert other.resumed_params(MTURK_STORED) == MTURK_STORED
    # A session opened without an assignment gets the first one it is resumed with.
    assert other.resumed_params({}) == other.params
    prolific = WorkerIdentity("prolific", "p", {"study_id": "S", "session_id": "Y"})
    assert prolific.resumed_params({"study_id": "S"}) == {"study_id": "S", "session_id": "Y"}
    assert prolific.resumed_params(PROLIFIC_STORED) == PROLIFIC_STORED


@pytest.mark.parametrize(
    ("value", "origin"),
    [
        ("https://www.mturk.com", "https://www.mturk.com"),
        ("https://workersandbox.mturk.com/", "https://workersandbox.mturk.com"),
        ("https://www.mturk.com//", None),
        ("https://evil.com\\.mturk.com", None),
        ("https://www.mturk.com.", None),
        (" https://www.mturk.com", None),
    ],
)
def test_mturk_origin_is_an_exact_match(value, origin):
    assert mturk_origin(value) == origin
