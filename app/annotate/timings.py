"""Time per paragraph (issue 17, point 3): one upsert per move or page open.

A *visit* of a paragraph runs from when it becomes the session's current paragraph (a
move to it, or the annotator page opening on it) to the next move away from it. The
statement below closes every open visit of the session except the one to the target
paragraph, adding its elapsed time (server clock) to `seconds_visible` and the page's
reported `active_seconds` (capped at that elapsed time: the page cannot claim more time
than the paragraph was shown); and it opens the target's visit, creating its row with
`first_shown_at` on the first one. A visit already open on the target stays open, so a
page reload does not lose the time before it. On a move it runs with the session's own
UPDATE (writes.py): in the same statement on PostgreSQL (the UPDATE as a data-modifying
CTE, `move_and_record`), right after it on SQLite (no such CTE there); in autocommit like
the rest. Opening the page (app/annotate/reads.py) runs it with the page's read, the same
way: in one statement on PostgreSQL, right after it on SQLite.

Definitions used in exports and on the dashboard: *seconds visible* is the sum of the
paragraph's visits; a visit still open (the last paragraph, left by submitting) counts up
to the session's submit time, or its last activity while unsubmitted
(app/crowd/paragraph_times.py).
*Active seconds* is the part the page saw the tab visible (static/js/annotator/activity.mjs),
reported with the move that leaves the paragraph.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    Float,
    Update,
    bindparam,
    case,
    cast,
    exists,
    func,
    literal,
    null,
    select,
    union_all,
)

from app.core.persistence import autocommit_connection, upsert_insert
from app.models import ParagraphTiming

TIMINGS = ParagraphTiming.__table__
# A page cannot report more than a day of activity in one visit (a clock jump, a bad body).
MAX_ACTIVE_SECONDS = 86_400.0


def _statement(dialect: str, gate=None, to=None):
    # With a gate (the move's UPDATE, or the page's read, as a CTE), the session is its
    # row; `to`, the paragraph shown, is a bound parameter unless given as an expression.
    session_id = bindparam("sid") if gate is None else select(gate.c.id).scalar_subquery()
    to = bindparam("to") if to is None else to
    elapsed = bindparam("epoch", type_=Float) - TIMINGS.c.visit_started
    active = bindparam("active", type_=Float)
    leaving = select(
        TIMINGS.c.session_id,
        TIMINGS.c.paragraph_id,
        TIMINGS.c.first_shown_at,
        bindparam("now").label("left_at"),
        cast(null(), Float).label("visit_started"),
        case((elapsed > 0, elapsed), else_=0.0).label("seconds_visible"),
        case((active < elapsed, active), (elapsed > 0, elapsed), else_=0.0).label("active_seconds"),
    ).where(
        TIMINGS.c.session_id == session_id,
        TIMINGS.c.visit_started.is_not(None),
        TIMINGS.c.paragraph_id != to,
    )
    entering = select(
        session_id,
        to,
        bindparam("now"),
        cast(null(), TIMINGS.c.left_at.type),
        bindparam("epoch", type_=Float),
        literal(0.0),
        literal(0.0),
    )
    if gate is not None:  # only when the gate (a CTE) has a row
        leaving = leaving.where(exists(select(1).select_from(gate)))
        entering = entering.where(exists(select(1).select_from(gate)))
    columns = [
        "session_id",
        "paragraph_id",
        "first_shown_at",
        "left_at",
        "visit_started",
        "seconds_visible",
        "active_seconds",
    ]
    # The SELECT with a WHERE comes last: SQLite reads `ON CONFLICT` after a bare FROM as
    # a join constraint.
    statement = upsert_insert(dialect)(TIMINGS).from_select(columns, union_all(entering, leaving))
    new = statement.excluded
    return statement.on_conflict_do_update(
        index_elements=[TIMINGS.c.session_id, TIMINGS.c.paragraph_id],
        set_={
            "seconds_visible": TIMINGS.c.seconds_visible + new.seconds_visible,
            "active_seconds": TIMINGS.c.active_seconds + new.active_seconds,
            "left_at": func.coalesce(new.left_at, TIMINGS.c.left_at),
            # A leaving row closes the visit; entering keeps an open visit open.
            "visit_started": case(
                (new.visit_started.is_(None), null()),
                else_=func.coalesce(TIMINGS.c.visit_started, new.visit_started),
            ),
        },
    )


_STATEMENTS: dict[object, Any] = {}


def _params(
    session_id: int | None, paragraph_id: int, now: datetime, active_seconds: float | None
) -> dict[str, Any]:
    active = min(max(float(active_seconds or 0.0), 0.0), MAX_ACTIVE_SECONDS)
    return {
        "sid": session_id,
        "to": paragraph_id,
        "now": now,
        "epoch": now.timestamp(),
        "active": active,
    }


def visit_statement(gate, to):
    """The visit upsert gated on a CTE with the session's `id` (PostgreSQL), showing the
    paragraph `to` (an expression): the page's read shows the session's position."""
    return _statement("postgresql", gate=gate, to=to)


def visit_params(now: datetime) -> dict[str, Any]:
    """The parameters of visit_statement: the clock, and no active time reported."""
    return {"now": now, "epoch": now.timestamp(), "active": 0.0}


def record_visit(
    session_id: int, paragraph_id: int, now: datetime, active_seconds: float | None = None
) -> None:
    """Close the session's open visits (but `paragraph_id`'s) and open `paragraph_id`'s."""
    connection = autocommit_connection()
    dialect = connection.dialect.name
    if dialect not in _STATEMENTS:
        _STATEMENTS[dialect] = _statement(dialect).execution_options(prepare=True)
    connection.execute(_STATEMENTS[dialect], _params(session_id, paragraph_id, now, active_seconds))


def move_and_record(move: Update, params: dict[str, Any], active_seconds: float | None) -> Any:
    """Run a move (an UPDATE of one session RETURNING its `id` and what the caller needs,
    with `to` and `now` among `params`) and record the visit; the row it returns, None if
    no row moved.

    PostgreSQL: one statement, the move a data-modifying CTE that gates the timings
    insert. SQLite has no such CTE: the move, then record_visit when it moved a row."""
    connection = autocommit_connection()
    if connection.dialect.name != "postgresql":
        moved = connection.execute(move, params).first()
        if moved is not None:
            record_visit(moved.id, params["to"], params["now"], active_seconds)
        return moved
    key = (id(move), "postgresql")
    if key not in _STATEMENTS:
        moved = move.cte("moved")
        timing = _statement("postgresql", gate=moved).cte("timing")
        _STATEMENTS[key] = select(moved).add_cte(timing).execution_options(prepare=True)
    timing_params = _params(None, params["to"], params["now"], active_seconds)
    return connection.execute(_STATEMENTS[key], params | timing_params).first()
