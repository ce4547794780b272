"""Fixtures of the integration tests beyond tests/conftest.py's app, client and databases."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from flask import Flask

from tests.support.apps import app_factory, make_test_config, truncate_all
from tests.support.assignment import taxonomy_with


def _apps(database_uri: str, tmp_path: Path) -> Iterator[Callable[..., Flask]]:
    def config(config=None, **study) -> dict:
        overrides = dict(config or {})
        if study:
            overrides["TAXONOMY_PATH"] = taxonomy_with(tmp_path, **study)
        return make_test_config(database_uri, **overrides)

    yield from app_factory(config)


@pytest.fixture
def make_app(database_uri, tmp_path):
    """An app on the test database with the given study settings (and config overrides)."""
    yield from _apps(database_uri, tmp_path)


@pytest.fixture
def make_postgres_app(postgres_url, tmp_path):
    """make_app on PostgreSQL only, for what SQLite cannot do (row locks)."""
    truncate_all(postgres_url)
    yield from _apps(postgres_url, tmp_path)
