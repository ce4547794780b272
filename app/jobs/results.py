"""The `analysis_results` table: read, ask for, claim and store analysis results.

Every server, worker and command goes through these functions, so a key is computed
once wherever it is asked for:

- `read`: the rows of some keys of a kind, at the kind's current version.
- `request`: the keys a page needs that have no usable row get one, `pending`
  (INSERT ... ON CONFLICT DO NOTHING: of two servers asking at once, one inserts and
  only it enqueues the job); a row left pending or running past its lease (a lost queue,
  a dead worker) is taken over by one guarded UPDATE, so one process enqueues it again.
- `claim`: the job (or a command) turns the row to `running` under its token with one
  guarded UPDATE; a job that finds the row done, or running under another live claim,
  computes nothing. The same token may claim again (RQ's retry of a job whose work horse
  died), at most MAX_ATTEMPTS computations in all.
- `store`: the value, under the claim that computed it.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, func, insert, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError
from sqlalchemy.sql.elements import ColumnElement

from app.core.extensions import db
from app.jobs.kinds import Kind
from app.jobs.limits import Limits
from app.models import AnalysisResult, utcnow

PENDING, RUNNING, DONE, SKIPPED, ERROR = "pending", "running", "done", "skipped", "error"
MAX_ATTEMPTS = 3
# A pending row waits this long for its job before the next page that needs it asks
# again (the queue may have been lost: the deploy's Redis keeps nothing on disk).
PENDING_LEASE = timedelta(minutes=10)
# Keys per IN (...) list: a 10,000-document study's gamma is one statement (SQLite allows
# 32,766 parameters, PostgreSQL 65,535).
CHUNK = 10_000
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Result:
    """One row of `analysis_results`, as read."""

    key: str
    status: str
    value: dict[str, Any] | None
    approximate: bool
    error: str | None
    attempts: int
    claimed_by: str | None
    requested_at: datetime
    started_at: datetime | None
    computed_at: datetime | None

    @property
    def ready(self) -> bool:
        """Whether it has a value (computed, or skipped with its limits)."""
        return self.status in (DONE, SKIPPED, ERROR)


def running_lease(limits: Limits) -> timedelta:
    """How long a claim may run before another process may take the key over: the time
    limit and two minutes for the job's own reads and writes (an hour without a limit)."""
    if limits.seconds <= 0:
        return timedelta(hours=1)
    return timedelta(seconds=limits.seconds + 120)


# Columns, not ORM objects: a row read again is read afresh (the session's identity map
# would hand back the first read's values), and nothing is left in the session.
COLUMNS = (
    AnalysisResult.key,
    AnalysisResult.status,
    AnalysisResult.value,
    AnalysisResult.approximate,
    AnalysisResult.error,
    AnalysisResult.attempts,
    AnalysisResult.claimed_by,
    AnalysisResult.requested_at,
    AnalysisResult.started_at,
    AnalysisResult.computed_at,
)


def read(kind: Kind, keys: Iterable[str]) -> dict[str, Result]:
    """The rows of these keys (at the kind's version), by key: one statement per CHUNK
    keys, and one for none (a page's statement count does not depend on its data)."""
    keys = list(dict.fromkeys(keys))
    found: dict[str, Result] = {}
    for start in range(0, max(len(keys), 1), CHUNK):
        rows = db.session.execute(
            select(*COLUMNS).where(
                AnalysisResult.kind == kind.name,
                AnalysisResult.version == kind.version,
                AnalysisResult.key.in_(keys[start : start + CHUNK]),
            )
        )
        for row in rows:
            found[row.key] = Result(*row)
    return found


def usable(result: Result | None, limits: Limits) -> bool:
    """Whether a row answers under `limits`: done, an error given up on, or skipped
    under limits no smaller than these (larger ones may compute it)."""
    if result is None or not result.ready:
        return False
    if result.status == SKIPPED:
        return limits.covers((result.value or {}).get("limits", [0, 0]))
    return True


def request(
    kind: Kind, keys: Collection[str], found: Mapping[str, Result], limits: Limits
) -> list[str]:
    """Ask for these keys (`found`: their rows as read); returns the keys this process
    must enqueue: those it inserted as pending, or took over (pending past
    PENDING_LEASE, running past the running lease, skipped under smaller limits)."""
    now = utcnow()
    mine = _insert_pending(kind, [k for k in keys if k not in found], now)
    for key in keys:
        row = found.get(key)
        if row is None or usable(row, limits):
            continue
        if row.status == PENDING and row.requested_at > now - PENDING_LEASE:
            continue
        if row.status == RUNNING and (row.started_at or now) > now - running_lease(limits):
            continue
        if row.status == RUNNING and row.attempts >= MAX_ATTEMPTS:
            _give_up(kind, key, row)
            continue
        if _take_over(kind, row, now):
            mine.append(key)
    db.session.commit()
    return mine


def _insert_pending(kind: Kind, keys: list[str], now: datetime) -> list[str]:
    if not keys:
        return []
    dialect = db.session.get_bind().dialect.name
    upsert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    inserted: list[str] = []
    for start in range(0, len(keys), CHUNK):
        rows = [
            {
                "kind": kind.name,
                "key": key,
                "version": kind.version,
                "status": PENDING,
                "approximate": False,
                "attempts": 0,
                "requested_at": now,
            }
            for key in keys[start : start + CHUNK]
        ]
        statement = (
            upsert(AnalysisResult)
            .values(rows)
            .on_conflict_do_nothing(index_elements=["kind", "key"])
            .returning(AnalysisResult.key)
        )
        inserted.extend(db.session.execute(statement).scalars())
    return inserted


def _take_over(kind: Kind, row: Result, now: datetime) -> bool:
    """Back to pending, if nobody changed the row since it was read (one process wins)."""
    changed = db.session.execute(
        update(AnalysisResult)
        .where(
            AnalysisResult.kind == kind.name,
            AnalysisResult.key == row.key,
            AnalysisResult.status == row.status,
            AnalysisResult.requested_at == row.requested_at,
        )
        .values(
            status=PENDING,
            requested_at=now,
            attempts=0 if row.status == SKIPPED else AnalysisResult.attempts,
            claimed_by=None,
        )
        .execution_options(synchronize_session=False)
    )
    return changed.rowcount == 1


def _give_up(kind: Kind, key: str, row: Result) -> None:
    log.warning("analysis %s %s: gave up after %d attempts", kind.name, key[:12], row.attempts)
    db.session.execute(
        update(AnalysisResult)
        .where(
            AnalysisResult.kind == kind.name,
            AnalysisResult.key == key,
            AnalysisResult.status == RUNNING,
            AnalysisResult.attempts == row.attempts,
        )
        .values(
            status=ERROR,
            error=f"gave up after {row.attempts} attempts (the job died each time)",
            computed_at=utcnow(),
        )
        .execution_options(synchronize_session=False)
    )


def claim(kind: Kind, key: str, token: str, limits: Limits, *, retake: bool = False) -> bool:
    """Turn the key's row to running under `token` (one guarded UPDATE; a missing row is
    inserted as running): True when this caller is to compute it. Claimable: pending; or
    running under this token (a retry) or past its lease, fewer than MAX_ATTEMPTS times;
    with `retake` (a command that computes what is missing) also skipped and error rows."""
    now = utcnow()
    stale = now - running_lease(limits)
    claimable = [
        AnalysisResult.status == PENDING,
        and_(
            AnalysisResult.status == RUNNING,
            AnalysisResult.attempts < MAX_ATTEMPTS,
            or_(AnalysisResult.claimed_by == token, AnalysisResult.started_at < stale),
        ),
    ]
    if retake:
        claimable.append(AnalysisResult.status.in_((SKIPPED, ERROR)))
        claimable.append(and_(AnalysisResult.status == RUNNING, AnalysisResult.started_at < stale))
    changed = db.session.execute(
        update(AnalysisResult)
        .where(
            AnalysisResult.kind == kind.name,
            AnalysisResult.key == key,
            AnalysisResult.version == kind.version,
            or_(*claimable),
        )
        .values(
            status=RUNNING,
            claimed_by=token,
            started_at=now,
            attempts=AnalysisResult.attempts + 1,
        )
        .execution_options(synchronize_session=False)
    )
    if changed.rowcount == 1:
        db.session.commit()
        return True
    if retake and _insert_running(kind, key, token, now):
        return True
    db.session.commit()
    return False


def _insert_running(kind: Kind, key: str, token: str, now: datetime) -> bool:
    try:
        db.session.execute(
            insert(AnalysisResult).values(
                kind=kind.name,
                key=key,
                version=kind.version,
                status=RUNNING,
                approximate=False,
                attempts=1,
                claimed_by=token,
                requested_at=now,
                started_at=now,
            )
        )
        db.session.commit()
    except IntegrityError:  # another process has the row now
        db.session.rollback()
        return False
    return True


def store(kind: Kind, key: str, token: str, value: dict[str, Any], limits: Limits) -> bool:
    """Store the value computed under the claim `token` (skipped with `limits` when it
    says so); False when the claim was lost meanwhile (the other claim stores it)."""
    if "skipped" in value:
        status, value = SKIPPED, {"skipped": str(value["skipped"]), "limits": limits.as_list()}
    else:
        status = DONE
    changed = db.session.execute(
        update(AnalysisResult)
        .where(
            AnalysisResult.kind == kind.name,
            AnalysisResult.key == key,
            AnalysisResult.status == RUNNING,
            AnalysisResult.claimed_by == token,
        )
        .values(
            status=status,
            value=value,
            approximate=bool(value.get("approximate", False)),
            error=None,
            computed_at=utcnow(),
        )
        .execution_options(synchronize_session=False)
    )
    db.session.commit()
    return changed.rowcount == 1


def fail(kind: Kind, key: str, token: str, error: str) -> None:
    """The computation raised: stored as an error (a page shows it as skipped)."""
    db.session.execute(
        update(AnalysisResult)
        .where(
            AnalysisResult.kind == kind.name,
            AnalysisResult.key == key,
            AnalysisResult.status == RUNNING,
            AnalysisResult.claimed_by == token,
        )
        .values(status=ERROR, error=error[:2000], computed_at=utcnow())
        .execution_options(synchronize_session=False)
    )
    db.session.commit()


@dataclass(frozen=True)
class Waiting:
    """What one kind has waiting: how many keys, and since when the oldest."""

    kind: str
    pending: int
    running: int
    oldest: datetime


def waiting(limits: Limits) -> list[Waiting]:
    """Keys pending or running, per kind (the dashboard's line on the queue): those asked
    for within PENDING_LEASE (a key still needed is asked for again after it) and those
    running within their lease; older ones were abandoned (their content changed, or the
    process that held them ended) and are not waited for."""
    now = utcnow()
    rows = db.session.execute(
        select(
            AnalysisResult.kind,
            AnalysisResult.status,
            func.count(),
            func.min(AnalysisResult.requested_at),
        )
        .where(_within_lease(now, running_lease(limits)))
        .group_by(AnalysisResult.kind, AnalysisResult.status)
    ).all()
    by_kind: dict[str, list] = {}
    for kind, status, count, oldest in rows:
        entry = by_kind.setdefault(kind, [0, 0, None])
        entry[0 if status == PENDING else 1] += count
        entry[2] = oldest if entry[2] is None else min(entry[2], oldest)
    return [Waiting(kind, p, r, o) for kind, (p, r, o) in sorted(by_kind.items())]


def _within_lease(now: datetime, running_for: timedelta) -> ColumnElement[bool]:
    """SQL: a row pending within PENDING_LEASE, or running for less than `running_for`."""
    return or_(
        and_(AnalysisResult.status == PENDING, AnalysisResult.requested_at > now - PENDING_LEASE),
        and_(AnalysisResult.status == RUNNING, AnalysisResult.started_at > now - running_for),
    )


def in_flight(kind: Kind, prefix: str) -> bool:
    """Whether a key of this kind starting with `prefix` is pending or running within
    its lease (PENDING_LEASE; an hour for a running one)."""
    now = utcnow()
    found = db.session.scalar(
        select(AnalysisResult.key)
        .where(
            AnalysisResult.kind == kind.name,
            AnalysisResult.version == kind.version,
            AnalysisResult.key.startswith(prefix, autoescape=True),
            _within_lease(now, timedelta(hours=1)),
        )
        .limit(1)
    )
    return found is not None


def newest(kind: Kind, prefix: str) -> Result | None:
    """The most recently computed done row of a kind whose key starts with `prefix` (a
    kind whose keys start with what they belong to: the dashboard's figures of a study)."""
    row = db.session.execute(
        select(*COLUMNS)
        .where(
            AnalysisResult.kind == kind.name,
            AnalysisResult.version == kind.version,
            AnalysisResult.status == DONE,
            AnalysisResult.key.startswith(prefix, autoescape=True),
        )
        .order_by(AnalysisResult.computed_at.desc())
        .limit(1)
    ).first()
    return Result(*row) if row is not None else None
