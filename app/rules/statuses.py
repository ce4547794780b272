"""The statuses a worker's or validator's session moves through (one name per state).

`StrEnum` members compare equal to their strings, so rows read from the database, JSON
answers and SQL literals need no conversion: `session.status == SessionStatus.SUBMITTED`.
The CHECK constraint on annotation_sessions.status lists the same three values.
"""

from __future__ import annotations

from enum import StrEnum


class SessionStatus(StrEnum):
    """An annotation or validation session's state."""

    ACTIVE = "active"  # opened, the worker may still save
    SUBMITTED = "submitted"  # final: nothing more is accepted
    ABANDONED = "abandoned"  # released by the claim timeout or a researcher; may come back
