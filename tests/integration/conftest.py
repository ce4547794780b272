"""Fixtures of the integration tests beyond tests/conftest.py's app, client and databases."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from flask import Flask

from app import create_app
from app.extensions import db
from tests.conftest import _truncate_all, dispose_engines, make_test_config
from tests.support.assignment import taxonomy_with

AppFactory = Callable[..., Flask]


def _apps(database_uri: str, tmp_path: Path) -> Iterator[AppFactory]:
    made = []

    def factory(config=None, **study):
        overrides = dict(config or {})
        if study:
            overrides["TAXONOMY_PATH"] = taxonomy_with(tmp_path, **study)
        application = create_app(make_test_config(database_uri, **overrides))
        made.append(application)
        return application

    yield factory
    for application in made:
        with application.app_context():
            db.session.remove()
            dispose_engines()


@pytest.fixture
def make_app(database_uri, tmp_path):
    """An app on the test database with the given study settings (and config overrides)."""
    yield from _apps(database_uri, tmp_path)


@pytest.fixture
def make_postgres_app(postgres_url, tmp_path):
    """make_app on PostgreSQL only, for what SQLite cannot do (row locks)."""
    _truncate_all(postgres_url)
    yield from _apps(postgres_url, tmp_path)
