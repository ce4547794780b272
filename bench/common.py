"""Shared benchmark plumbing: scratch PostgreSQL databases and a migrated app."""

from __future__ import annotations

import contextlib
import os
import sys
import time
import uuid
from collections.abc import Iterator

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url


def admin_url() -> str:
    """The PostgreSQL admin URL (TEST_DATABASE_URL, set by scripts/with-postgres.sh)."""
    url = os.environ.get("TEST_DATABASE_URL")
    if not url:
        sys.exit("bench: TEST_DATABASE_URL is not set; run through `make bench`.")
    return url.replace("postgres://", "postgresql://", 1)


def _admin_engine(admin: str | None = None):
    base = make_url(admin or admin_url()).set(drivername="postgresql+psycopg2")
    return base, create_engine(base, isolation_level="AUTOCOMMIT")


def create_database(prefix: str = "falte_bench", admin: str | None = None) -> str:
    """Create an empty PostgreSQL database, migrate it, and return its URL (on the server
    of `admin`, an admin URL; default: TEST_DATABASE_URL's)."""
    from flask_migrate import upgrade

    from app import create_app
    from app.core.extensions import db

    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    base, engine = _admin_engine(admin)
    with engine.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    engine.dispose()
    url = base.set(database=name).render_as_string(hide_password=False)
    app = create_app({"APP_ENV": "testing", "SQLALCHEMY_DATABASE_URI": url})
    with app.app_context():
        upgrade()
        db.engine.dispose()
    return url


def drop_database(url: str) -> None:
    """Drop a database made by create_database, ending its connections first."""
    name = make_url(url).database
    _, admin = _admin_engine()
    with admin.connect() as conn:
        conn.execute(
            text(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = :n AND pid <> pg_backend_pid()"
                # Not autovacuum (a superuser process): DROP DATABASE stops it itself.
                " AND backend_type = 'client backend'"
            ),
            {"n": name},
        )
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}"'))
    admin.dispose()


@contextlib.contextmanager
def scratch_database(prefix: str = "falte_bench") -> Iterator[str]:
    """An empty, migrated PostgreSQL database for the with-block; dropped afterwards."""
    url = create_database(prefix)
    try:
        yield url
    finally:
        drop_database(url)


def libpq_url(sqlalchemy_url: str) -> str:
    """The same URL as psycopg2/psql understand it."""
    return sqlalchemy_url.replace("postgresql+psycopg2://", "postgresql://", 1)


class Timer:
    """Wall-clock seconds of a with-block: `with Timer() as t: ...; t.seconds`."""

    def __enter__(self) -> Timer:
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        self.seconds = time.perf_counter() - self.start


def ratio(value: float, baseline: float) -> str:
    """value / baseline, formatted."""
    return f"{value / baseline:.2f}x" if baseline > 0 else "n/a"
