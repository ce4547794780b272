"""Race-safe get-or-create (the database's unique constraint settles concurrent arrivals),
and one retry of idempotent views when the database connection turned out to be dead."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

from sqlalchemy.exc import DBAPIError, IntegrityError

from app.extensions import db

Model = TypeVar("Model")
T = TypeVar("T")


def get_or_create(model: type[Model], defaults: dict[str, Any] | None = None, **unique: Any):
    """(row, created): the row matching the unique key `unique`, inserted with `defaults`
    if missing. Two requests inserting at once: one wins, the other reads its row back."""
    query = db.select(model).filter_by(**unique)
    row = db.session.scalars(query).first()
    if row is not None:
        return row, False
    try:
        with db.session.begin_nested():
            row = model(**unique, **(defaults or {}))
            db.session.add(row)
    except IntegrityError:
        return db.session.scalars(query).one(), False
    return row, True


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
            return view(*args, **kwargs)

    return wrapper
