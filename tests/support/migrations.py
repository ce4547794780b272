"""Data made before a migration: the tables as the database has them at an earlier revision
(after `flask_migrate.downgrade`), read from the database itself, so that a test writes
rows of the old shape without spelling out each old column."""

from __future__ import annotations

import sqlalchemy as sa

from app.core.extensions import db


def tables_as_they_are(*names: str) -> list[sa.Table]:
    """The named tables, reflected from the current database (in the order named)."""
    metadata = sa.MetaData()
    metadata.reflect(bind=db.engine, only=names)
    return [metadata.tables[name] for name in names]
