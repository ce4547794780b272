"""Moments read back aware and in UTC on both databases, stored as before (issue 29 point
7: app.models.UTCDateTime instead of the six helpers that each converted SQLite's naive
datetimes). Before the column type, SQLite handed back naive datetimes, so these checks
failed there; the stored text must not change (no migration)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from sqlalchemy import select, text

from app.core.extensions import db
from app.models import AnnotationSession, UTCDateTime
from tests.support.validation import make_documents, make_session

MOMENT = datetime(2024, 5, 1, 12, 0, 0, 250_000, tzinfo=UTC)


def _stored(session_id: int) -> str:
    """The stored last_seen_at as the database itself writes it, in UTC."""
    if db.engine.dialect.name == "sqlite":
        sql = "SELECT last_seen_at FROM annotation_sessions WHERE id = :id"
    else:
        sql = (
            "SELECT to_char(last_seen_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') "
            "FROM annotation_sessions WHERE id = :id"
        )
    return db.session.execute(text(sql), {"id": session_id}).scalar_one()


def test_moments_read_back_aware_in_utc_through_the_orm_and_core(app):
    make_documents()
    session = make_session("doc-a", "alice", last_seen=MOMENT)
    db.session.expire_all()
    orm = db.session.get(AnnotationSession, session.id)
    table = AnnotationSession.__table__
    core = db.session.execute(
        select(table.c.last_seen_at, table.c.started_at).where(table.c.id == session.id)
    ).one()
    for value in (orm.last_seen_at, orm.started_at, *core):
        assert value.tzinfo is not None
        assert value.utcoffset() == timedelta(0)
    assert orm.last_seen_at == MOMENT
    assert core.last_seen_at.isoformat() == "2024-05-01T12:00:00.250000+00:00"


def test_the_stored_form_is_unchanged(app):
    make_documents()
    # What the app writes (aware, in UTC) is stored as it always was; a naive moment is
    # taken as UTC, and one in another zone is converted to UTC first.
    other_zone = MOMENT.astimezone(timezone(timedelta(hours=-5)))
    for number, written in enumerate((MOMENT, MOMENT.replace(tzinfo=None), other_zone)):
        session = make_session("doc-a", f"worker-{number}", last_seen=written)
        assert _stored(session.id) == "2024-05-01 12:00:00.250000"


def test_the_type_converts_both_ways_without_a_database():
    column = UTCDateTime()
    naive = datetime(2024, 5, 1, 12, 0)
    assert column.process_result_value(naive, None) == naive.replace(tzinfo=UTC)
    east = datetime(2024, 5, 1, 14, 0, tzinfo=timezone(timedelta(hours=2)))
    assert column.process_result_value(east, None).tzinfo is UTC
    assert column.process_bind_param(east, None) == naive.replace(tzinfo=UTC)
    assert column.process_bind_param(None, None) is None
