"""Race-safe get-or-create (the database's unique constraint settles concurrent arrivals),
one retry of idempotent views when the database connection turned out to be dead, and the
autocommit connection that single-statement writes run on."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

from flask import Flask, g
from sqlalchemy import Connection
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import DBAPIError

from app.core import prepared  # also registers the PREPARE/EXECUTE listener
from app.core.extensions import db

Model = TypeVar("Model")
T = TypeVar("T")


def get_or_create(model: type[Model], defaults: dict[str, Any] | None = None, **unique: Any):
    """(row, created): the row matching the unique key `unique`, inserted with `defaults`
    if missing. Two requests inserting at once: one wins, the other reads its row back.

    The insert is `INSERT ... ON CONFLICT (unique key) DO NOTHING RETURNING`: a concurrent
    arrival costs neither a savepoint nor an aborted statement."""
    query = db.select(model).filter_by(**unique)
    row = db.session.scalars(query).first()
    if row is not None:
        return row, False
    statement = (
        upsert_insert(db.session.get_bind().dialect.name)(model)
        .values(**unique, **(defaults or {}))
        .on_conflict_do_nothing(index_elements=list(unique))
        .returning(model)
    )
    row = db.session.scalars(statement).first()
    if row is not None:
        return row, True
    return db.session.scalars(query).one(), False


def upsert_insert(dialect: str):
    """The dialect's `insert` construct, which has `on_conflict_do_nothing` (PostgreSQL and
    SQLite both say ON CONFLICT)."""
    return {"postgresql": postgresql_insert, "sqlite": sqlite_insert}[dialect]


def retry_on_disconnect(view: Callable[..., T]) -> Callable[..., T]:
    """Run an idempotent view again, once, when its database connection turned out to be
    dead (the server restarted or failed over while the connection sat in the pool).

    The pool does not ping connections before use (a round trip per request); instead the
    first statement on a dead connection fails, SQLAlchemy invalidates the pool, and the
    second run gets a fresh connection. Only for views that are safe to run twice: the
    worker's and validator's saves are idempotent by their client ids."""

    @wraps(view)
    def wrapper(*args: Any, **kwargs: Any) -> T:
        try:
            return view(*args, **kwargs)
        except DBAPIError as error:
            if not error.connection_invalidated:
                raise
            db.session.rollback()
            release_autocommit_connection()
            # The server restarted: the other engine's pooled connections are dead too
            # (the failing one's pool was invalidated already).
            for engine in db.engines.values():
                engine.dispose(close=False)
            return view(*args, **kwargs)

    return wrapper


# --- autocommit connection for single-statement writes ---------------------------------

AUTOCOMMIT_BIND = "autocommit"


def add_autocommit_bind(app: Flask) -> None:
    """On PostgreSQL, a second engine (a Flask-SQLAlchemy bind with no models) whose
    connections stay in autocommit for their whole life; both engines prepare the
    statements marked for it unless DB_PREPARED_STATEMENTS is off (app.core.prepared).

    A write that is one statement needs no BEGIN/COMMIT. Switching a pooled connection to
    autocommit per request (SQLAlchemy's `isolation_level` execution option) costs a
    round trip of its own with psycopg2 (`SET default_transaction_isolation`, sent when the
    level is set and again when the pool resets it); a connection that never leaves
    autocommit costs none. Same URL and pool settings as the main engine. SQLite has no
    round trips to save: its writes use the request's ORM session."""
    uri = str(app.config.get("SQLALCHEMY_DATABASE_URI") or "")
    if not uri.startswith("postgresql"):
        return
    options = dict(app.config.get("SQLALCHEMY_ENGINE_OPTIONS") or {})
    options["execution_options"] = {
        **options.get("execution_options", {}),
        prepared.ENABLED: bool(app.config.get("DB_PREPARED_STATEMENTS", True)),
    }
    app.config["SQLALCHEMY_ENGINE_OPTIONS"] = options
    binds = app.config.setdefault("SQLALCHEMY_BINDS", {})
    binds.setdefault(AUTOCOMMIT_BIND, {**options, "url": uri, "isolation_level": "AUTOCOMMIT"})
    app.teardown_request(lambda _error: release_autocommit_connection())


def autocommit_connection() -> Connection:
    """The connection for a request's single-statement writes: each statement commits by
    itself. On PostgreSQL it comes from the autocommit engine, checked out once per request;
    on SQLite, or when the request's ORM session is already in a transaction (tests that
    share one session across requests), it is the session's own connection."""
    if orm_transaction_open():
        return db.session.connection()
    engine = db.engines.get(AUTOCOMMIT_BIND)
    if engine is None:
        return db.session.connection(execution_options={"isolation_level": "AUTOCOMMIT"})
    connection = g.get("_autocommit_connection")
    if connection is None:
        connection = g._autocommit_connection = engine.connect()
    return connection


def orm_transaction_open() -> bool:
    """Whether the request's ORM session exists and is in a transaction. Asking does not
    create the session (a request that never uses it should not pay for building and
    closing one)."""
    return db.session.registry.has() and db.session().in_transaction()


def end_orm_transaction() -> None:
    """After statements on autocommit_connection(): commit when they ran on the ORM
    session's own connection (SQLite, tests sharing a session); on the autocommit engine
    each statement already committed."""
    if orm_transaction_open():
        db.session.commit()


def release_autocommit_connection() -> None:
    """Give the request's autocommit connection back to the pool (at the end of the
    request, and before a retried view runs again on a fresh one)."""
    connection = g.pop("_autocommit_connection", None)
    if connection is not None:
        connection.close()
