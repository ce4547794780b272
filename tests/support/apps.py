"""Making the app under test: its config, the database helpers, and a factory fixture's body.

Shared by tests/conftest.py and the suites whose tests need more than one app (other
settings, production mode): test files import these from here, never from a conftest.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from flask import Flask
from sqlalchemy import create_engine, text

from app import create_app
from app.core.extensions import db
from app.jobs import queue as analysis_queue

ROOT = Path(__file__).resolve().parents[2]
BOOOOKSCORE_SAMPLE = ROOT / "tests" / "fixtures" / "booookscore"
BOOOOKSCORE_TAXONOMY = ROOT / "config" / "taxonomies" / "booookscore.yaml"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def require_or_skip(reason: str) -> None:
    """Skip locally; fail in CI, where every suite must really run."""
    if IN_CI:
        pytest.fail(f"{reason} (CI=true: this is a failure, not a skip)")
    pytest.skip(reason)


def log_in_directly(client, researcher) -> None:
    """Log a test client in as `researcher` (Flask-Login's session set directly, fresh)."""
    with client.session_transaction() as session:
        session["_user_id"] = str(researcher.id)
        session["_fresh"] = True


def researcher_page(application: Flask, researcher_id: int, path: str = "/research/") -> str:
    """A page's text as researcher `researcher_id` sees it, from a new client of `application`
    (logged in directly, fresh); the page must answer 200."""
    client = application.test_client()
    with client.session_transaction() as session:
        session["_user_id"] = str(researcher_id)
        session["_fresh"] = True
    page = client.get(path)
    assert page.status_code == 200
    return page.text


def make_test_config(database_uri: str, **overrides) -> dict:
    """The app config used by integration tests."""
    config = {
        "APP_ENV": "testing",
        "SQLALCHEMY_DATABASE_URI": database_uri,
        "SECRET_KEY": "test-secret-key",
        "WTF_CSRF_ENABLED": True,
        # Analyses run in-process (app.jobs.queue), whatever QUEUE_URL the shell has.
        "QUEUE_URL": "inprocess",
    }
    if database_uri.startswith("sqlite"):
        config["SQLALCHEMY_ENGINE_OPTIONS"] = {"connect_args": {"timeout": 30}}
    config.update(overrides)
    return config


def dispose_engines() -> None:
    """Close the current app's pooled connections, on every engine (the main one and, on
    PostgreSQL, the autocommit engine of app.core.persistence)."""
    for engine in db.engines.values():
        engine.dispose()


def truncate_all(database_uri: str) -> None:
    """Empty every table of a migrated database (PostgreSQL), identities restarted."""
    engine = create_engine(database_uri)
    tables = ", ".join(
        f'"{t.name}"' for t in db.metadata.sorted_tables if t.name != "alembic_version"
    )
    with engine.begin() as conn:
        conn.execute(text(f"TRUNCATE {tables} RESTART IDENTITY CASCADE"))
    engine.dispose()


def app_in_context(database_uri: str, **overrides) -> Iterator[Flask]:
    """Body of a fixture: the app made with these config overrides, its context pushed; its
    connections closed afterwards."""
    application = create_app(make_test_config(database_uri, **overrides))
    with application.app_context():
        yield application
        analysis_queue.stop_background()  # nothing of this test writes into the next one's
        db.session.remove()
        dispose_engines()


def app_factory(build_config: Callable[..., dict]) -> Iterator[Callable[..., Flask]]:
    """Body of a fixture that makes apps: yields `factory(*args, **kwargs)`, an app made
    from `build_config(*args, **kwargs)`; closes every app's connections afterwards."""
    made: list[Flask] = []

    def factory(*args, **kwargs) -> Flask:
        application = create_app(build_config(*args, **kwargs))
        made.append(application)
        return application

    yield factory
    analysis_queue.stop_background()
    for application in made:
        with application.app_context():
            db.session.remove()
            dispose_engines()
