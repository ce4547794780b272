"""Limits that hold across processes: two gunicorn servers behind one nginx (the
docker-compose shape: config/nginx/nginx.conf with both as its upstream) count one
token's writes, and one address's logins, once for both through a real Redis (and one
account's failed logins lock it on every app); with the
default memory storage each server counts alone and the limit lets twice as much
through. When Redis stops, the app keeps serving with the limits off and says so in its
log."""

from __future__ import annotations

import itertools
import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests

from app import create_app
from tests.resilience.conftest import PARAGRAPH
from tests.support.apps import dispose_engines, make_test_config, require_or_skip
from tests.support.login import add_accounts, login_from
from tests.support.nginx import access_log, compose_config, nginx_binary, start_nginx, stop_nginx
from tests.support.redis import redis_binary, start_redis, stop_redis
from tests.support.servers import error_log_text, free_port, start_gunicorn, stop
from tests.support.worker_api import token_from

LIMITS = {
    "ANNOTATE_WRITE_LIMIT": "10 per minute",
    "LOGIN_RATE_LIMIT": "3 per minute",
    "TRUSTED_PROXIES": "1",  # as in docker-compose: nginx's address is not the client's
    "SECRET_KEY": "shared-limits-test-secret-key-0123456789",
    "WEB_CONCURRENCY": "1",
}


@dataclass
class Cluster:
    url: str
    servers: list
    access_logs: list[Path]
    nginx: object


@contextmanager
def two_servers_behind_nginx(pg_url: str, tmp_path: Path, storage_uri: str) -> Iterator[Cluster]:
    """Two gunicorn servers (one process each) on one database, nginx in front of both."""
    if nginx_binary() is None:
        require_or_skip("nginx is not installed (scripts/ensure-services.sh installs it)")
    ports = [free_port(), free_port()]
    logs = [tmp_path / f"access-{n}.log" for n in range(2)]
    servers = []
    try:
        for port, log in zip(ports, logs, strict=True):
            servers.append(
                start_gunicorn(
                    "app:create_app()",
                    pg_url,
                    port,
                    access_log=str(log),
                    RATELIMIT_STORAGE_URI=storage_uri,
                    **LIMITS,
                )
            )
        port = free_port()
        upstreams = [f"127.0.0.1:{p}" for p in ports]
        nginx = start_nginx(tmp_path, compose_config(tmp_path, port, upstreams), port)
    except Exception:
        for server in servers:
            stop(server)
        raise
    try:
        yield Cluster(f"http://127.0.0.1:{port}", servers, logs, nginx)
    finally:
        stop_nginx(nginx)
        for server in servers:
            stop(server)


@pytest.fixture
def redis_port() -> Iterator[tuple[int, object]]:
    if redis_binary() is None:
        require_or_skip("redis-server is not installed (scripts/ensure-services.sh installs it)")
    port = free_port()
    process = start_redis(port)
    yield port, process
    stop_redis(process)


def _session(browser: requests.Session, url: str) -> tuple[str, dict[str, str]]:
    """A worker's session opened through nginx: its token and its API's CSRF header."""
    opened = browser.get(f"{url}/annotate/fault-doc?annotator=sharer", allow_redirects=False)
    assert opened.status_code == 302, opened.text
    token = token_from(opened)
    page = browser.get(f"{url}/s/{token}").text
    return token, {"X-CSRFToken": re.search(r'name="csrf-token" content="([^"]+)"', page)[1]}


_SAVES = itertools.count()  # each save another span: a duplicate under a new id is a 422


def _save(browser: requests.Session, url: str, token: str, headers: dict) -> requests.Response:
    n = next(_SAVES)
    start, end = n // 10, n // 10 + 2 + n % 10
    body = {
        "id": str(uuid.uuid4()),
        "category": "ungrammatical",
        "span": {"paragraph_id": 0, "start": start, "end": end, "text": PARAGRAPH[start:end]},
        "paired_span": None,
        "comment": "",
    }
    return browser.post(f"{url}/api/sessions/{token}/annotations", json=body, headers=headers)


def _failed_logins(browser: requests.Session, url: str, count: int) -> list[int]:
    page = browser.get(f"{url}/research/login").text
    csrf = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', page)[1]
    form = {"email": "a@b.c", "password": "wrong-password", "csrf_token": csrf}
    return [browser.post(f"{url}/research/login", data=form).status_code for _ in range(count)]


def _posts(log: Path) -> int:
    return log.read_text().count("POST /api/sessions/<redacted>/annotations")


def test_limits_count_once_across_two_servers_through_redis(pg_url, tmp_path, redis_port):
    port, redis_process = redis_port
    storage = f"redis://127.0.0.1:{port}/0"
    with two_servers_behind_nginx(pg_url, tmp_path, storage) as cluster:
        with requests.Session() as browser:
            token, headers = _session(browser, cluster.url)
            statuses = [_save(browser, cluster.url, token, headers).status_code for _ in range(11)]
            assert statuses == [201] * 10 + [429], statuses
            assert all(_posts(log) >= 5 for log in cluster.access_logs)  # both servers saved
            assert _failed_logins(browser, cluster.url, 4) == [401, 401, 401, 429]

            # Redis goes away: the app serves on, limits off, and says so.
            before = [_posts(log) for log in cluster.access_logs]
            stop_redis(redis_process)
            statuses = [_save(browser, cluster.url, token, headers).status_code for _ in range(4)]
            assert statuses == [201] * 4, statuses
        for server, log, saves in zip(cluster.servers, cluster.access_logs, before, strict=True):
            assert _posts(log) > saves  # each server answered after Redis stopped
            assert re.search(
                rf"WARNING.*Rate limits OFF: their storage {re.escape(storage)} does not answer",
                error_log_text(server),
            ), error_log_text(server)[-2000:]
        # Neither log shows the token: gunicorn's (app/core/gunicorn_logging.py) nor nginx's.
        gunicorn_logs = "".join(log.read_text() for log in cluster.access_logs)
        for text in (gunicorn_logs, access_log(cluster.nginx)):
            assert "GET /s/<redacted> HTTP/1." in text, text
            assert token not in text


def test_with_per_process_counters_the_limit_lets_twice_as_much_through(pg_url, tmp_path):
    """The default memory:// storage behind the same nginx: what Redis is for."""
    with (
        two_servers_behind_nginx(pg_url, tmp_path, "memory://") as cluster,
        requests.Session() as browser,
    ):
        token, headers = _session(browser, cluster.url)
        statuses = [_save(browser, cluster.url, token, headers).status_code for _ in range(11)]
        assert statuses == [201] * 11, statuses
        assert _failed_logins(browser, cluster.url, 4) == [401] * 4


def test_an_account_locked_on_one_app_is_locked_on_another(pg_url, redis_port):
    port, _ = redis_port
    apps = [
        create_app(
            make_test_config(
                pg_url, TRUSTED_PROXIES=1, RATELIMIT_STORAGE_URI=f"redis://127.0.0.1:{port}/0"
            )
        )
        for _ in range(2)
    ]
    add_accounts(apps[0], ("lead@example.org",), "a-long-enough-password")
    for n in range(10):
        response = login_from(apps[n % 2], f"203.0.113.{n}", "lead@example.org", "wrong")
        assert response.status_code == 401, n
    for app in apps:
        response = login_from(app, "198.51.100.1", "lead@example.org", "a-long-enough-password")
        assert response.status_code == 429
        with app.app_context():
            dispose_engines()
