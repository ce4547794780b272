"""Dead pooled connections (PostgreSQL restarted or failed over while they sat idle) are
replaced without the worker or validator seeing an error.

The pool does not ping connections before each use (a round trip per request); the first
statement on a dead connection fails, SQLAlchemy invalidates the pool, and the view runs
once more on a fresh connection (app.core.persistence.retry_on_disconnect).
"""

from __future__ import annotations

import re
import uuid

import psycopg2
import pytest

from app import create_app
from tests.resilience.conftest import PARAGRAPH
from tests.support.apps import make_test_config
from tests.support.worker_api import token_from


def terminate_other_backends(database_url: str) -> int:
    """Kill every other server process connected to this database; how many there were."""
    conn = psycopg2.connect(database_url.replace("postgresql+psycopg2://", "postgresql://"))
    conn.autocommit = True
    with conn.cursor() as cur:
        cur.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            " AND backend_type = 'client backend'"  # the app's, not autovacuum's
        )
        (killed,) = cur.fetchone()
    conn.close()
    return killed


@pytest.fixture
def app(pg_url):
    app = create_app(make_test_config(pg_url, ANNOTATE_WRITE_LIMIT="1000 per minute"))
    assert not app.config["SQLALCHEMY_ENGINE_OPTIONS"]["pool_pre_ping"], (
        "this test is about the retry without a pre-ping"
    )
    return app


def test_every_worker_call_survives_its_pooled_connection_dying(app, pg_url):
    client = app.test_client()
    opened = client.get("/annotate/fault-doc?annotator=reconnect")
    token = token_from(opened)
    page = client.get(f"/s/{token}").data
    csrf = re.search(rb'name="csrf-token" content="([^"]+)"', page).group(1).decode()
    headers = {"X-CSRFToken": csrf}
    annotation_id = str(uuid.uuid4())
    body = {
        "id": annotation_id,
        "category": "ungrammatical",
        "span": {"paragraph_id": 0, "start": 0, "end": 3, "text": PARAGRAPH[:3]},
        "paired_span": None,
        "comment": None,
    }
    api = f"/api/sessions/{token}"

    def save():
        return client.post(f"{api}/annotations", json=body, headers=headers)

    calls = [
        ("save", save, 201),
        ("replay", save, 200),
        (
            "move",
            lambda: client.put(f"{api}/position", json={"paragraph_id": 1}, headers=headers),
            200,
        ),
        ("state", lambda: client.get(api), 200),
        ("page", lambda: client.get(f"/s/{token}"), 200),
        (
            "remove",
            lambda: client.delete(f"{api}/annotations/{annotation_id}", headers=headers),
            204,
        ),
        ("submit", lambda: client.post(f"{api}/submit", json={}, headers=headers), 200),
        ("complete", lambda: client.get(f"/s/{token}/complete"), 200),
        ("resume", lambda: client.get("/annotate/fault-doc?annotator=reconnect"), 302),
    ]
    for name, call, expected in calls:
        assert terminate_other_backends(pg_url) >= 1, f"{name}: no pooled connection to kill"
        response = call()
        assert response.status_code == expected, (name, response.status_code, response.data)
    state = client.get(f"/api/sessions/{token}").get_json()
    assert state["status"] == "submitted"
    assert state["annotations"] == []  # saved once, then removed


def test_a_page_without_the_retry_is_a_503_once_then_recovers(app, pg_url):
    """Pages without the retry (the document list, the researcher console) answer 503
    "briefly unavailable" once, never a 500, and the next request is served."""
    app.config["APP_ENV"] = "development"  # the document list is shown in development only
    client = app.test_client()
    assert client.get("/").status_code == 200
    assert terminate_other_backends(pg_url) >= 1
    failed = client.get("/")
    assert failed.status_code == 503
    assert failed.headers["Retry-After"] == "2"
    assert client.get("/").status_code == 200
