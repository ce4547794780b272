"""Race-safe get-or-create: the database's unique constraint settles concurrent arrivals."""

from __future__ import annotations

from typing import Any, TypeVar

from sqlalchemy.exc import IntegrityError

from app.extensions import db

Model = TypeVar("Model")


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
