"""The claim rule (app.assignment.claims): which sessions occupy a place of the quota."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app.assignment.claims import LOAD_GRACE, ClaimRule
from app.assignment.service import Candidate, rank_documents

NOW = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)
RULE = ClaimRule.at(NOW, claim_minutes=10)
LOADED = NOW - timedelta(minutes=30)


def ago(**delta) -> datetime:
    return NOW - timedelta(**delta)


@pytest.mark.parametrize("loaded", [None, LOADED])
@pytest.mark.parametrize("seen", [ago(seconds=1), ago(days=30), None])
def test_a_submitted_session_always_occupies(loaded, seen):
    assert RULE.occupies("submitted", loaded, seen)


@pytest.mark.parametrize("loaded", [None, LOADED])
def test_an_abandoned_session_never_occupies(loaded):
    assert not RULE.occupies("abandoned", loaded, ago(seconds=1))


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
    assert RULE.occupies("active", LOADED, seen) is holds


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
    assert RULE.occupies("active", None, seen) is holds


def test_an_active_session_never_seen_holds_nothing():
    assert not RULE.occupies("active", LOADED, None)


def test_naive_datetimes_from_sqlite_are_utc():
    naive = (NOW - timedelta(minutes=5)).replace(tzinfo=None)
    assert RULE.occupies("active", LOADED.replace(tzinfo=None), naive)
    assert not ClaimRule.at(NOW, 3).occupies("active", LOADED, naive)


def test_claim_minutes_sets_the_window():
    assert ClaimRule.at(NOW, 30).active_since == ago(minutes=30)
    assert ClaimRule.at(NOW, 30).unloaded_since == NOW - LOAD_GRACE


def test_rank_documents_tries_the_emptiest_first():
    docs = [Candidate(1, 2, False), Candidate(2, 1, False), Candidate(3, 1, False)]
    assert rank_documents(docs, 3, 0.0, 0, 4) == [2, 3, 1]
    assert rank_documents([*docs, Candidate(4, 3, False)], 3, 0.0, 0, 7) == [2, 3, 1]  # full
    assert rank_documents([Candidate(1, 3, False), Candidate(9, 0, True)], 3, 0.5, 0, 3) == []
    checks = [*docs, Candidate(9, 5, True), Candidate(8, 5, True)]
    assert rank_documents(checks, 3, 0.1, 0, 9) == [8, 9]  # a check is due: checks only
