"""The claim rule (app.crowd.assignment.claims): which sessions occupy a place of the quota."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app.crowd.assignment.claims import LOAD_GRACE, WORK_GRACE, ClaimRule
from app.crowd.assignment.service import DocumentOption, rank_documents

NOW = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)
RULE = ClaimRule.at(NOW, claim_minutes=10)
LOADED = NOW - timedelta(minutes=30)
STARTED = LOADED
WORKED = NOW - timedelta(minutes=29)


def ago(**delta) -> datetime:
    return NOW - timedelta(**delta)


def occupies(status, loaded, seen, started=STARTED, worked=WORKED, rule=RULE) -> bool:
    """The rule for a session that did real work (unless `worked` is None)."""
    return rule.occupies(status, loaded, seen, started, worked)


@pytest.mark.parametrize("loaded", [None, LOADED])
@pytest.mark.parametrize("seen", [ago(seconds=1), ago(days=30), None])
def test_a_submitted_session_always_occupies(loaded, seen):
    assert occupies("submitted", loaded, seen, worked=None)


@pytest.mark.parametrize("loaded", [None, LOADED])
def test_an_abandoned_session_never_occupies(loaded):
    assert not occupies("abandoned", loaded, ago(seconds=1), started=ago(seconds=2))


@pytest.mark.parametrize(
    ("seen", "holds"),
    [
        (ago(seconds=0), True),
        (ago(minutes=9, seconds=59), True),
        (ago(minutes=10), True),  # the boundary still holds
        (ago(minutes=10, seconds=1), False),
        (ago(hours=3), False),
    ],
)
def test_a_loaded_active_session_holds_its_place_for_claim_minutes(seen, holds):
    assert occupies("active", LOADED, seen) is holds


@pytest.mark.parametrize(
    ("seen", "holds"),
    [
        (ago(seconds=5), True),  # following the redirect to its page
        (NOW - LOAD_GRACE, True),
        (NOW - LOAD_GRACE - timedelta(seconds=1), False),
        (ago(minutes=5), False),  # well within claim_minutes, but nobody loaded the page
    ],
)
def test_a_never_loaded_session_holds_its_place_only_for_the_load_grace(seen, holds):
    assert occupies("active", None, seen, started=ago(seconds=30), worked=None) is holds


def test_an_active_session_never_seen_holds_nothing():
    assert not occupies("active", LOADED, None)


@pytest.mark.parametrize(
    ("started", "holds"),
    [
        (ago(seconds=10), True),
        (ago(minutes=4, seconds=59), True),
        (NOW - WORK_GRACE, True),  # the boundary still holds
        (NOW - WORK_GRACE - timedelta(seconds=1), False),
        (ago(hours=2), False),
    ],
)
def test_before_any_work_a_place_is_held_for_five_minutes_whatever_the_activity(started, holds):
    # Seen a second ago (a heartbeat), loaded: a place it would hold after real work.
    assert occupies("active", started, ago(seconds=1), started=started, worked=None) is holds
    assert occupies("active", started, ago(seconds=1), started=started, worked=ago(seconds=2))


def test_after_the_first_work_claim_minutes_of_inactivity_release_it_as_before():
    started = ago(hours=1)
    assert occupies("active", started, ago(minutes=9), started=started, worked=ago(minutes=50))
    assert not occupies("active", started, ago(minutes=11), started=started, worked=ago(minutes=50))


def test_claim_minutes_sets_the_window():
    assert ClaimRule.at(NOW, 30).active_since == ago(minutes=30)
    assert ClaimRule.at(NOW, 30).unloaded_since == NOW - LOAD_GRACE
    assert ClaimRule.at(NOW, 30).idle_started_since == NOW - WORK_GRACE


def test_rank_documents_tries_the_emptiest_first():
    docs = [DocumentOption(1, 2, False), DocumentOption(2, 1, False), DocumentOption(3, 1, False)]
    assert rank_documents(docs, 3, 0.0, 0, 4) == [2, 3, 1]
    assert rank_documents([*docs, DocumentOption(4, 3, False)], 3, 0.0, 0, 7) == [2, 3, 1]  # full
    assert (
        rank_documents([DocumentOption(1, 3, False), DocumentOption(9, 0, True)], 3, 0.5, 0, 3)
        == []
    )
    checks = [*docs, DocumentOption(9, 5, True), DocumentOption(8, 5, True)]
    assert rank_documents(checks, 3, 0.1, 0, 9) == [8, 9]  # a check is due: checks only
