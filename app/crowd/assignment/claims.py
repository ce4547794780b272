"""Which sessions occupy a place of their document's quota: the claim rule.

A session *occupies* (claims) one of the `annotators_per_document` places of its document
when it is
1. submitted; or
2. active, and either its worker did real work (`worked_at` is set: a finished step -
   consent, a survey, a training check - or a save or a move) or it was opened at most
   WORK_GRACE (5 minutes) ago; and
   a. its page was loaded (`page_loaded_at` is set) and its last activity
      (`last_seen_at`) is at most `claim_minutes` old; or
   b. its page was never loaded, and it was opened (or its link followed again) at most
      LOAD_GRACE ago: the moment a browser needs to follow the redirect from /start to
      /s/<token>.

Every other session is *released*: it holds no place, so the next worker can get its
document. That is an active session whose page was never loaded after LOAD_GRACE (a
link opened by a script, a crawler or someone who closed the tab at once), one opened
more than WORK_GRACE ago that has done no real work yet (a page kept open by its
heartbeat alone: a place cannot be hoarded), an active session idle for longer than
`claim_minutes`, and an abandoned or ended one (no_consent, failed_training).

Activity is any request the page makes on the session's token: loading it, reading the
session, a save, a remove, a move, Submit, and the heartbeat the page sends about once a
minute while it is open and visible (POST /api/sessions/<token>/heartbeat).
`last_seen_at` is written at most once a minute (app.crowd.sessions.touch_due), so a
working worker's last activity is never more than two minutes old: `claim_minutes` is at
least 3 (app.taxonomy).

A released session keeps everything: when its worker comes back (the page's next
request, or the study link again) it is active and recent again, so it occupies its place
again (one released before any work, with its first work), even when that puts its
document over the quota (the dashboard shows such documents). Losing the work of a slow
worker would be worse than one extra annotator.

The rule is written once here, as a Python predicate (`ClaimRule.occupies`, for the
dashboard) and as the same SQL condition (`holds_place`, with `ClaimRule.params()`, for
the assignment's counts); tests check the two agree.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, and_, bindparam, or_

from app.models import UTCDateTime
from app.rules.statuses import SessionStatus

LOAD_GRACE = timedelta(minutes=1)
WORK_GRACE = timedelta(minutes=5)
_ACTIVE_SINCE = bindparam("claim_active_since", type_=UTCDateTime())
_UNLOADED_SINCE = bindparam("claim_unloaded_since", type_=UTCDateTime())
_IDLE_STARTED_SINCE = bindparam("claim_idle_started_since", type_=UTCDateTime())


@dataclass(frozen=True)
class ClaimRule:
    """The claim rule at one instant: the oldest activity that still holds a place."""

    active_since: datetime  # loaded sessions seen at or after this hold their place
    unloaded_since: datetime  # never-loaded sessions seen at or after this hold it
    idle_started_since: datetime  # sessions without work opened before this hold none

    @classmethod
    def at(cls, now: datetime, claim_minutes: int) -> ClaimRule:
        """The rule as it applies at `now` with this study's `claim_minutes`."""
        return cls(now - timedelta(minutes=claim_minutes), now - LOAD_GRACE, now - WORK_GRACE)

    def occupies(
        self,
        status: str,
        page_loaded_at: datetime | None,
        last_seen_at: datetime | None,
        started_at: datetime | None,
        worked_at: datetime | None,
    ) -> bool:
        """Whether a session with these columns occupies a place of its document."""
        if status == SessionStatus.SUBMITTED:
            return True
        if status != SessionStatus.ACTIVE or last_seen_at is None:
            return False
        idle_since_start = started_at is None or started_at < self.idle_started_since
        if worked_at is None and idle_since_start:
            return False
        since = self.active_since if page_loaded_at is not None else self.unloaded_since
        return last_seen_at >= since

    def params(self) -> dict[str, datetime]:
        """The parameters of the `holds_place` condition at this instant."""
        return {
            "claim_active_since": self.active_since,
            "claim_unloaded_since": self.unloaded_since,
            "claim_idle_started_since": self.idle_started_since,
        }


def holds_place(sessions: Any) -> ColumnElement[bool]:
    """The rule as a SQL condition on `sessions` (the AnnotationSession model or its table's
    columns), with bound parameters: execute it with `ClaimRule.params()`. The statements
    that use it can then be built once and their compiled form reused."""
    return or_(
        sessions.status == SessionStatus.SUBMITTED,
        and_(
            sessions.status == SessionStatus.ACTIVE,
            or_(sessions.worked_at.is_not(None), sessions.started_at >= _IDLE_STARTED_SINCE),
            or_(
                and_(sessions.page_loaded_at.is_not(None), sessions.last_seen_at >= _ACTIVE_SINCE),
                and_(sessions.page_loaded_at.is_(None), sessions.last_seen_at >= _UNLOADED_SINCE),
            ),
        ),
    )
