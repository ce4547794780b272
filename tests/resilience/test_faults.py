"""Fault injection against real servers: no acknowledged save is lost or duplicated when
gunicorn workers are killed, PostgreSQL restarts, or the database fails during Submit.

The clients here behave like static/js/lib/sync-queue.mjs's retry queue: a save is retried with
the same client UUID on connection errors, 5xx and 429 until the server acknowledges it.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator

import pytest
from sqlalchemy import create_engine, text

from app.core.extensions import db
from app.imports.document_formats import DocumentInput
from app.imports.document_store import import_documents
from tests.resilience.conftest import PARAGRAPH
from tests.support.apps import require_or_skip
from tests.support.servers import free_port, start_gunicorn, stop, worker_pids
from tests.support.worker_api import token_from

MIN_SAVES_PER_CLIENT = 10
SINGLETONS = ("ungrammatical", "new-person", "missing-info", "abrupt-transition")
WORKERS = 2
CLIENTS = 6


@pytest.fixture
def server(pg_url):
    """gunicorn (2 workers x 4 threads) serving the app on the run's PostgreSQL."""
    port = free_port()
    process = start_gunicorn(
        "app:create_app()",
        pg_url,
        port,
        WEB_CONCURRENCY=str(WORKERS),
        # The bursts save without pause for seconds: far above a worker's rate limit.
        FLASK_ANNOTATE_WRITE_LIMIT="100000 per minute",
    )
    yield port, process
    stop(process)


class RetryingClient:
    """One worker's browser: opens a session, then saves with retries like sync-queue.mjs."""

    def __init__(self, port: int, name: str) -> None:
        self.port = port
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        status, headers, _ = self._request("GET", f"/annotate/fault-doc?annotator={name}")
        assert status == 302
        self.token = headers["Location"].rsplit("/", 1)[-1]
        _, _, page = self._request("GET", f"/s/{self.token}")
        self.csrf = re.search(rb'name="csrf-token" content="([^"]+)"', page).group(1).decode()
        self.acknowledged: set[str] = set()
        self.attempted = 0
        self.retries = 0

    def _request(self, method, path, body=None, headers=None):
        self.conn.request(method, path, body=body, headers=headers or {})
        response = self.conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()

    def save(self, annotation_id: str, span: tuple[int, int, str], deadline: float) -> None:
        """POST until acknowledged (201/200); 4xx other than 429 is a test failure."""
        start, end, category = span
        body = json.dumps(
            {
                "id": annotation_id,
                "category": category,
                "span": {
                    "paragraph_id": 0,
                    "start": start,
                    "end": end,
                    "text": PARAGRAPH[start:end],
                },
                "paired_span": None,
                "comment": None,
            }
        )
        headers = {"Content-Type": "application/json", "X-CSRFToken": self.csrf}
        delay = 0.05
        while time.monotonic() < deadline:
            try:
                status, _, data = self._request(
                    "POST", f"/api/sessions/{self.token}/annotations", body, headers
                )
            except (OSError, http.client.HTTPException):
                status, data = 0, b""
                self.conn.close()
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
            if status in (200, 201):
                self.acknowledged.add(annotation_id)
                return
            assert status == 0 or status >= 500 or status == 429, (status, data)
            self.retries += 1
            time.sleep(delay)
            delay = min(delay * 2, 1.0)
        raise AssertionError(f"save {annotation_id} never acknowledged")


def unique_spans() -> Iterator[tuple[int, int, str]]:
    """(start, end, category) of paragraph 0, never the same twice: an exact duplicate of a
    live annotation under a new id is refused (422 duplicate_annotation)."""
    edges = [i for i, ch in enumerate(PARAGRAPH) if not ch.isspace()]
    for category in SINGLETONS:
        for length in range(12, 0, -1):
            for start in edges:
                end = start + length
                if end <= len(PARAGRAPH) and not PARAGRAPH[end - 1].isspace():
                    yield start, end, category


def burst(port: int, fault, label: str) -> list[RetryingClient]:
    """CLIENTS clients save without pause before, during and after `fault()` strikes;
    each save is retried until acknowledged, then the next one starts."""
    clients = [RetryingClient(port, f"{label}-{i}") for i in range(CLIENTS)]
    deadline = time.monotonic() + 90
    stop = threading.Event()
    errors: list[BaseException] = []

    def run(client: RetryingClient) -> None:
        try:
            n = 0
            spans = unique_spans()
            while not stop.is_set() or n < MIN_SAVES_PER_CLIENT:
                client.attempted += 1
                client.save(str(uuid.uuid4()), next(spans), deadline)
                n += 1
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(c,)) for c in clients]
    for thread in threads:
        thread.start()
    time.sleep(0.3)
    fault()
    time.sleep(1.0)  # keep saving after the fault too
    stop.set()
    for thread in threads:
        thread.join()
    for client in clients:
        client.conn.close()
    assert not errors, errors
    return clients


def assert_stored_exactly_once(database_url: str, clients: list[RetryingClient]) -> None:
    engine = create_engine(database_url)
    with engine.connect() as conn:
        rows = conn.execute(
            text(
                "SELECT s.token, a.client_id FROM annotations a "
                "JOIN annotation_sessions s ON s.id = a.session_id"
            )
        ).all()
    engine.dispose()
    stored = [(token, cid) for token, cid in rows]
    assert len(stored) == len(set(stored)), "an annotation was stored twice"
    expected = {(c.token, cid) for c in clients for cid in c.acknowledged}
    attempted = sum(c.attempted for c in clients)
    assert attempted >= CLIENTS * MIN_SAVES_PER_CLIENT
    assert len(expected) == attempted, "a retried save never landed"
    assert set(stored) == expected


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_worker_killed_during_burst_loses_nothing(server, pg_url, sig):
    port, process = server
    deadline = time.monotonic() + 20
    while len(worker_pids(process.pid)) < WORKERS and time.monotonic() < deadline:
        time.sleep(0.1)  # the master forks its workers after it starts listening
    victims = worker_pids(process.pid)
    assert len(victims) == WORKERS, victims

    def kill_workers():
        for pid in victims:
            os.kill(pid, sig)
            time.sleep(0.2)

    clients = burst(port, kill_workers, f"kill-{sig.name}")
    assert_stored_exactly_once(pg_url, clients)

    # A SIGTERMed worker finishes its requests first (graceful_timeout): wait for it.
    def replaced() -> bool:
        workers = set(worker_pids(process.pid))
        return workers.isdisjoint(victims) and len(workers) == WORKERS

    deadline = time.monotonic() + 30
    while not replaced() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert replaced(), f"workers were not replaced: {worker_pids(process.pid)} vs {victims}"


def test_postgres_restart_during_burst_loses_nothing(server, pg_url):
    cluster = os.environ.get("TEST_PG_CLUSTER")
    if not cluster:
        require_or_skip("TEST_PG_CLUSTER not set: only a cluster `make test` started is restarted")
    version, name = cluster.split()

    def restart_postgres():
        subprocess.run(
            ["pg_ctlcluster", "--skip-systemctl-redirect", version, name, "restart", "-m", "fast"],
            check=True,
            capture_output=True,
        )

    port, _ = server
    clients = burst(port, restart_postgres, "pg-restart")
    assert_stored_exactly_once(pg_url, clients)
    assert sum(c.retries for c in clients) > 0, "the restart did not interrupt any save"


def test_database_error_during_submit_leaves_no_partial_state(app, client):
    """Submit is one UPDATE (app.annotate.writes.submit). A database error in it answers
    no completion code and leaves the session as it was."""
    from sqlalchemy import event
    from sqlalchemy.exc import OperationalError

    from app.models import AnnotationSession

    import_documents([DocumentInput("submit-doc", None, ("Only paragraph.",))])
    response = client.get("/annotate/submit-doc?annotator=w1")
    token = token_from(response)
    csrf = re.search(
        r'name="csrf-token" content="([^"]+)"', client.get(f"/s/{token}").get_data(as_text=True)
    ).group(1)
    headers = {"X-CSRFToken": csrf}
    calls = {"n": 0}

    def failing_submit(conn, cursor, statement, parameters, context, executemany):
        # Submit's UPDATE (on PostgreSQL behind the activity CTE) is the one that sets
        # submitted_at; the activity write of SQLite, a statement of its own, does not.
        if "UPDATE annotation_sessions" in statement and "submitted_at=" in statement:
            calls["n"] += 1
            raise OperationalError(statement, parameters, Exception("No space left on device"))

    engines = list(db.engines.values())
    for engine in engines:
        event.listen(engine, "before_cursor_execute", failing_submit)
    try:
        failed = client.post(f"/api/sessions/{token}/submit", json={}, headers=headers)
    finally:
        for engine in engines:
            event.remove(engine, "before_cursor_execute", failing_submit)

    assert calls["n"] == 1
    assert failed.status_code == 503
    assert "completion_code" not in failed.get_data(as_text=True)
    db.session.expire_all()
    stored = db.session.scalars(db.select(AnnotationSession).filter_by(token=token)).one()
    assert stored.status == "active" and stored.submitted_at is None

    retried = client.post(f"/api/sessions/{token}/submit", json={}, headers=headers)
    assert retried.status_code == 200
    assert retried.get_json()["completion_code"] == stored.completion_code
