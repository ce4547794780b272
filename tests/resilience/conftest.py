"""Fixtures for tests against real servers on the run's PostgreSQL database."""

from __future__ import annotations

import pytest

from app import create_app
from app.imports.document_formats import DocumentInput
from app.imports.document_store import import_documents
from tests.support.apps import dispose_engines, make_test_config, truncate_all

PARAGRAPH = "Zoë 🚢 sailed from Skarvik at dawn, and the keeper watched the ship until noon."


@pytest.fixture
def pg_url(postgres_url):
    """The run's PostgreSQL database, emptied, with one document imported."""
    truncate_all(postgres_url)
    app = create_app(make_test_config(postgres_url))
    with app.app_context():
        import_documents([DocumentInput("fault-doc", "Faults", (PARAGRAPH, "Second paragraph."))])
        dispose_engines()
    return postgres_url
