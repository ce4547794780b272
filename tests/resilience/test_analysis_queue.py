"""The analysis queue on real engines (issue 31 point 1): two app servers on one
PostgreSQL ask for every document's gamma at once, again and again, and one real RQ
worker (`flask analysis-worker`, a subprocess) on a real redis-server computes each key
exactly once; both servers then read the same values. A work horse killed in the middle
of a job is retried, and the retry stores the result. The dashboard says when no worker
has been seen. The Analyses page on two real gunicorn servers: an analysis asked for on
both at once is computed once by the worker, and both show it."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import redis
import requests
from rq import Queue

from app import create_app
from app.core.extensions import db
from app.jobs.queue import QUEUE_NAME
from app.models import AnalysisResult
from tests.support.accounts import add_account
from tests.support.adjudication import seed_adjudication_document, seed_document
from tests.support.apps import dispose_engines, make_test_config, require_or_skip, truncate_all
from tests.support.login import add_accounts
from tests.support.redis import redis_binary, start_redis, stop_redis
from tests.support.servers import ROOT, free_port, start_gunicorn, stop

SECOND = ["Clara left the farm in May. She came back in June.", "Then it snowed."]
SECOND_MARKS = [
    ("ann-1", "new-person", (0, 0, 5), None, None),
    ("ann-2", "new-person", (0, 0, 5), None, None),
    ("ann-3", "new-person", (0, 0, 11), None, None),
    ("ann-1", "abrupt-transition", (1, 0, 15), None, None),
]
# Many overlapping, shifted spans of two annotators: seconds of gamma (over a small limit).
HOSTILE = [
    (name, "new-person", (0, i, i + 40), None, None)
    for name in ("fake-1", "fake-2")
    for i in range(40)
]
HOSTILE_TEXT = ["x" * 120]
PASSWORD = "a long test password"


@pytest.fixture
def redis_url() -> Iterator[str]:
    if redis_binary() is None:
        require_or_skip("redis-server is not installed (scripts/ensure-services.sh installs it)")
    port = free_port()
    process = start_redis(port)
    yield f"redis://127.0.0.1:{port}/0"
    stop_redis(process)


def _seed(postgres_url: str, *documents: tuple) -> int:
    """Empty the run's database, seed these documents and a researcher; the researcher's id."""
    truncate_all(postgres_url)
    app = create_app(make_test_config(postgres_url))
    with app.app_context():
        for external_id, paragraphs, marks, annotators in documents:
            if external_id is None:
                seed_adjudication_document()
            else:
                seed_document(external_id, paragraphs, marks, annotators=annotators)
        researcher = add_account("r@example.org", password_hash="x")
        db.session.commit()
        researcher_id = researcher.id
        db.session.remove()
        dispose_engines()
    return researcher_id


def _server(postgres_url: str, redis_url: str, **settings):
    return create_app(make_test_config(postgres_url, QUEUE_URL=redis_url, **settings))


def _dashboard(server, researcher_id: int) -> str:
    client = server.test_client()
    with client.session_transaction() as session:
        session["_user_id"] = str(researcher_id)
        session["_fresh"] = True
    page = client.get("/research/")
    assert page.status_code == 200
    return page.text


def _worker(postgres_url: str, redis_url: str, log: Path, **env: str) -> subprocess.Popen:
    with log.open("w") as stream:  # the process has its own copy of the descriptor
        return subprocess.Popen(
            [sys.executable, "-m", "flask", "--app", "app", "analysis-worker"],
            cwd=ROOT,
            env={
                **os.environ,
                "APP_ENV": "development",
                "DATABASE_URL": postgres_url,
                "QUEUE_URL": redis_url,
                **env,
            },
            stdout=stream,
            stderr=subprocess.STDOUT,
        )


def _rows(server, kind: str | None = None) -> list[tuple]:
    with server.app_context():
        query = db.select(AnalysisResult.key, AnalysisResult.status, AnalysisResult.attempts)
        if kind is not None:
            query = query.where(AnalysisResult.kind == kind)
        rows = db.session.execute(query).all()
        db.session.remove()
        return sorted(tuple(row) for row in rows)


def _wait_for(condition, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {seconds} s: {what}")
        time.sleep(0.2)


def _gamma_cell(page: str) -> str:
    return re.search(r'<tr data-figure="gamma">.*?</tr>', page, re.S).group(0)


@pytest.mark.timeout(240)
def test_two_servers_and_one_worker_compute_each_key_once(postgres_url, redis_url, tmp_path):
    researcher = _seed(
        postgres_url,
        (None, None, None, None),
        ("second", SECOND, SECOND_MARKS, ("ann-1", "ann-2", "ann-3")),
    )
    servers = [_server(postgres_url, redis_url), _server(postgres_url, redis_url)]
    # Both servers, four page loads each at once: two keys, two rows, two jobs.
    with ThreadPoolExecutor(8) as pool:
        pages = list(pool.map(lambda n: _dashboard(servers[n % 2], researcher), range(8)))
    assert all("γ is being computed for 2 documents" in page for page in pages)
    assert "No analysis worker has been seen for 5 minutes" in pages[0]
    rows = _rows(servers[0])
    assert [(status, attempts) for _, status, attempts in rows] == [("pending", 0)] * 2
    client = redis.Redis.from_url(redis_url)
    assert Queue(QUEUE_NAME, connection=client).count == 2

    log = tmp_path / "worker.log"
    worker = _worker(postgres_url, redis_url, log)
    loading = threading.Event()

    def keep_loading(server) -> None:  # the servers keep asking while the worker computes
        while not loading.is_set():
            _dashboard(server, researcher)

    try:
        with ThreadPoolExecutor(2) as pool:
            futures = [pool.submit(keep_loading, server) for server in servers]
            try:
                _wait_for(
                    lambda: all(status == "done" for _, status, _ in _rows(servers[0])),
                    180,
                    "both documents' gamma computed",
                )
            finally:
                loading.set()
            for future in futures:
                future.result()
        pages = [_dashboard(server, researcher) for server in servers]
        assert "No analysis worker" not in pages[0]  # its heartbeat is fresh
    finally:
        stop(worker)
    assert [attempts for _, _, attempts in _rows(servers[0])] == [1, 1]
    computed = re.findall(r"analysis gamma [0-9a-f]{12} computed \(done\)", log.read_text())
    assert len(computed) == 2, log.read_text()
    assert "being computed" not in pages[0] and "being computed" not in pages[1]
    assert _gamma_cell(pages[0]) == _gamma_cell(pages[1])  # one value, read by both
    assert Queue(QUEUE_NAME, connection=client).count == 0
    for server in servers:
        with server.app_context():
            dispose_engines()


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(child) for child in path.read_text().split()] if path.exists() else []


@pytest.mark.timeout(240)
def test_a_job_whose_work_horse_dies_is_retried_and_its_result_stored(
    postgres_url, redis_url, tmp_path
):
    researcher = _seed(postgres_url, ("hostile", HOSTILE_TEXT, HOSTILE, ("fake-1", "fake-2")))
    limit = {"ANALYSIS_TIME_LIMIT": 3}
    server = _server(postgres_url, redis_url, **limit)
    assert "γ is being computed for 1 document" in _dashboard(server, researcher)
    log = tmp_path / "worker.log"
    worker = _worker(postgres_url, redis_url, log, ANALYSIS_TIME_LIMIT="3")
    try:
        _wait_for(lambda: _rows(server)[0][1] == "running", 60, "the job started")
        [horse] = _children(worker.pid)  # RQ's work horse: the job's own process
        os.kill(horse, signal.SIGKILL)
        _wait_for(lambda: _rows(server)[0][1] == "skipped", 60, "the retry stored its result")
    finally:
        stop(worker)
    [(_, status, attempts)] = _rows(server)
    assert (status, attempts) == ("skipped", 2)  # the killed run, then the retry
    text = log.read_text()
    assert "Work-horse terminated unexpectedly" in text, text
    assert len(re.findall(r"analysis gamma [0-9a-f]{12} computed \(skipped\)", text)) == 1
    page = _dashboard(server, researcher)
    assert "skipped" in page and "being computed" not in page
    with server.app_context():
        dispose_engines()


def _log_in(browser: requests.Session, server: str) -> None:
    page = browser.get(f"{server}/research/login").text
    csrf = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', page)[1]
    form = {"email": "lead@example.org", "password": PASSWORD, "csrf_token": csrf}
    answer = browser.post(f"{server}/research/login", data=form, allow_redirects=False)
    assert answer.status_code in (302, 303), answer.text[:500]


@pytest.mark.timeout(240)
def test_two_gunicorn_servers_and_one_worker_compute_an_analysis_once(
    postgres_url, redis_url, tmp_path
):
    """The Analyses page on two real servers: asked for on both at once, again and again,
    the recall estimate is one pending row and one job; the worker computes it once and
    both servers show the same result."""
    _seed(postgres_url, ("second", SECOND, SECOND_MARKS, ("ann-1", "ann-2", "ann-3")))
    inspector = _server(postgres_url, redis_url)
    add_accounts(inspector, ("lead@example.org",), PASSWORD)
    ports = [free_port(), free_port()]
    servers = [
        start_gunicorn(
            "app:create_app()", postgres_url, port, WEB_CONCURRENCY="1", QUEUE_URL=redis_url
        )
        for port in ports
    ]
    worker = None
    try:
        a, b = (f"http://127.0.0.1:{port}" for port in ports)
        browser = requests.Session()
        _log_in(browser, a)
        token = re.search(
            r'name="csrf_token" value="([^"]+)"', browser.get(f"{b}/research/analyses").text
        )[1]

        def ask(server: str) -> str:
            answer = browser.post(
                f"{server}/research/analyses",
                data={"csrf_token": token, "analysis": "recall"},
                allow_redirects=False,
            )
            assert answer.status_code == 303, answer.text[:500]
            return answer.headers["Location"]

        with ThreadPoolExecutor(8) as pool:
            addresses = set(pool.map(ask, [a, b] * 4))
        [address] = addresses  # one key, whichever server answered
        key = re.search(r"recall=([0-9a-f]{64})", address)[1]
        assert [
            (status, attempts) for _, status, attempts in _rows(inspector, "recall_estimate")
        ] == [("pending", 0)]
        assert Queue(QUEUE_NAME, connection=redis.Redis.from_url(redis_url)).count == 1
        waiting = browser.get(f"{a}{address}").text
        assert 'data-analysis-pending="recall"' in waiting
        assert 'data-analysis-queue="silent"' in waiting  # no worker seen yet
        dashboard = browser.get(f"{b}/research/").text  # says what waits, of every kind
        assert re.search(r"Analyses waiting: .*recall_estimate 1 queued", dashboard)

        log = tmp_path / "worker.log"
        worker = _worker(postgres_url, redis_url, log)
        asking = threading.Event()

        def keep_asking(server: str) -> None:  # both servers keep asking meanwhile
            while not asking.is_set():
                ask(server)
                browser.get(f"{server}{address}")

        with ThreadPoolExecutor(2) as pool:
            futures = [pool.submit(keep_asking, server) for server in (a, b)]
            try:
                _wait_for(
                    lambda: _rows(inspector, "recall_estimate")[0][1] == "done",
                    120,
                    "the recall estimate computed",
                )
            finally:
                asking.set()
            for future in futures:
                future.result()
        assert [
            (status, attempts) for _, status, attempts in _rows(inspector, "recall_estimate")
        ] == [("done", 1)]
        text = log.read_text()
        assert len(re.findall(r"analysis recall_estimate [0-9a-f]{12} computed", text)) == 1, text
        tables = []
        for server in (a, b):
            status = browser.get(f"{server}/research/analyses/status?recall={key}").json()
            assert status["ready"] is True
            page = browser.get(f"{server}{address}").text
            assert 'data-analysis-done="recall"' in page and "being computed" not in page
            tables.append(re.search(r"<table.*?</table>", page, re.S).group(0))
        assert tables[0] == tables[1]  # one value, read by both
        with inspector.app_context():
            dispose_engines()
    finally:
        if worker is not None:
            stop(worker)
        for server in servers:
            stop(server)
