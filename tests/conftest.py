"""Shared fixtures: databases (SQLite and PostgreSQL), app, client, runner.

Integration tests take the `app` fixture, which is parametrised over both databases.
PostgreSQL comes from TEST_DATABASE_URL (an admin URL; `make test` starts the machine's
cluster and sets it). Each test run creates its own database and drops it at the end, so
parallel runs don't collide. In CI (CI=true) a missing PostgreSQL is a failure, not a skip.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from app import create_app
from app.core.extensions import db
from tests.support.accounts import add_account
from tests.support.apps import (
    BOOOOKSCORE_SAMPLE,
    app_in_context,
    dispose_engines,
    log_in_directly,
    make_test_config,
    require_or_skip,
    truncate_all,
)


def migrate_database(database_uri: str) -> None:
    """Run the Alembic migrations (the real schema path) on a database."""
    from flask_migrate import upgrade

    app = create_app(make_test_config(database_uri))
    with app.app_context():
        upgrade()
        dispose_engines()


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory) -> Path:
    """A migrated SQLite file, copied for every test (migrating each time is slow)."""
    path = tmp_path_factory.mktemp("sqlite") / "template.sqlite3"
    migrate_database(f"sqlite:///{path}")
    return path


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A fresh, migrated PostgreSQL database for this test run, dropped afterwards."""
    admin_url = os.environ.get("TEST_DATABASE_URL")
    if not admin_url:
        require_or_skip("TEST_DATABASE_URL is not set: no PostgreSQL (run `make test`)")
    admin_url = admin_url.replace("postgres://", "postgresql://", 1)
    name = f"falte_test_{uuid.uuid4().hex[:10]}"
    admin = create_engine(
        make_url(admin_url).set(drivername="postgresql+psycopg2"), isolation_level="AUTOCOMMIT"
    )
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    except Exception as exc:
        admin.dispose()
        require_or_skip(f"PostgreSQL at TEST_DATABASE_URL did not answer: {exc}")
    url = make_url(admin_url).set(drivername="postgresql+psycopg2", database=name)
    url_text = url.render_as_string(hide_password=False)
    migrate_database(url_text)
    yield url_text
    # The resilience tests restart PostgreSQL: start from fresh connections.
    admin.dispose()
    with admin.connect() as conn:
        conn.execute(
            text(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = :name AND pid <> pg_backend_pid()"
                # Not autovacuum (a superuser process): DROP DATABASE stops it itself.
                " AND backend_type = 'client backend'"
            ),
            {"name": name},
        )
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}"'))
    admin.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def database_uri(request, tmp_path) -> Iterator[str]:
    """A migrated, empty database: a SQLite file, then the run's PostgreSQL database."""
    if request.param == "sqlite":
        path = tmp_path / "test.sqlite3"
        shutil.copy(request.getfixturevalue("sqlite_template"), path)
        yield f"sqlite:///{path}"
    else:
        url = request.getfixturevalue("postgres_url")
        truncate_all(url)
        yield url


@pytest.fixture
def app(database_uri):
    """The app on a fresh database, with an app context pushed."""
    yield from app_in_context(database_uri)


@pytest.fixture
def client(app):
    """A test client for the app."""
    return app.test_client()


@pytest.fixture
def runner(app):
    """A CLI runner for the app's flask commands."""
    return app.test_cli_runner()


@pytest.fixture
def booookscore_sample() -> Path:
    """The BooookScore sample data copied under tests/fixtures/booookscore (MIT, LICENSE there)."""
    return BOOOOKSCORE_SAMPLE


@pytest.fixture
def researcher(app):
    """A researcher account: researcher@example.org / correct-horse-battery, an editor of
    the default study (as `flask create-researcher` makes it)."""
    account = add_account("researcher@example.org", "correct-horse-battery")
    db.session.commit()
    return account


@pytest.fixture
def researcher_client(app, researcher):
    """A test client logged in as `researcher` (Flask-Login session set directly)."""
    test_client = app.test_client()
    log_in_directly(test_client, researcher)
    return test_client
