"""Opens (/start, /annotate/<doc>, /id=<doc>) are limited per client address behind the
real nginx with the shipped configurations, so that one address draining a study's places
does not lock out everyone else behind the same proxy, and a client cannot pick the
address it is counted under.

docker-compose shape (config/nginx/nginx.conf, TRUSTED_PROXIES=1): two clients with
really different source addresses (sockets bound to 127.0.0.1 and to 127.0.0.2, both
loopback on Linux) are counted apart, and a client's own X-Forwarded-For changes nothing:
nginx appends the address it saw and the app takes that last entry.

Heroku shape (config/nginx.conf.erb, gunicorn on a unix socket, TRUSTED_PROXIES=2): on
Heroku the router appends the client's address to X-Forwarded-For, then nginx appends the
router's. The router is simulated here: the test client sends the header exactly as the
router would forward it (`X-Forwarded-For: <client address>`, after anything the client
itself sent), from 127.0.0.1, which nginx then appends as the router's address. Two
router-forwarded clients are counted apart, and an entry a client put before the router's
does not change the address counted.

Counting nginx's address, or trusting one hop too many, makes these tests fail."""

from __future__ import annotations

import http.client
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.apps import require_or_skip
from tests.support.nginx import (
    compose_config,
    heroku_config,
    nginx_before,
    nginx_binary,
)
from tests.support.servers import free_port, start_gunicorn

GUNICORN = {
    "OPEN_RATE_LIMIT": "3 per minute",
    # One process: the default memory:// counters are per process (test_shared_limits.py
    # shows Redis sharing them between processes).
    "WEB_CONCURRENCY": "1",
    "SECRET_KEY": "open-limit-behind-nginx-secret-key-0123456789",
}
# The opens a client makes (the fault-doc document of tests/resilience/conftest.py): the
# limit counts all the open routes together. /start only once (client A's first): with one
# document, a later /start finds no place left (200, "No tasks left"), whatever the limit.
OPENS = ["/start", "/annotate/fault-doc", "/id=fault-doc", "/annotate/fault-doc"]
DIRECT = ["/annotate/fault-doc", "/id=fault-doc"] * 2
CLIENT_A, CLIENT_B = "127.0.0.1", "127.0.0.2"


def _require_nginx() -> None:
    if nginx_binary() is None:
        require_or_skip("nginx is not installed (scripts/ensure-services.sh installs it)")


@pytest.fixture
def compose_shape(pg_url, tmp_path: Path) -> Iterator[int]:
    """gunicorn on TCP behind config/nginx/nginx.conf, as in docker-compose; nginx's port."""
    yield from _compose(pg_url, tmp_path, **GUNICORN)


@pytest.fixture
def compose_shape_wide_limit(pg_url, tmp_path: Path) -> Iterator[int]:
    """compose_shape with room for many opens: what refuses is the cap per network."""
    yield from _compose(pg_url, tmp_path, **{**GUNICORN, "OPEN_RATE_LIMIT": "100 per minute"})


def _compose(pg_url, tmp_path: Path, **settings: str) -> Iterator[int]:
    _require_nginx()
    app_port, port = free_port(), free_port()
    app = start_gunicorn("app:create_app()", pg_url, app_port, TRUSTED_PROXIES="1", **settings)
    upstreams = [f"127.0.0.1:{app_port}"]
    with nginx_before(app, tmp_path, port, lambda: compose_config(tmp_path, port, upstreams)):
        yield port


@pytest.fixture
def heroku_shape(pg_url, tmp_path: Path) -> Iterator[int]:
    """gunicorn on a unix socket behind config/nginx.conf.erb, as on Heroku; nginx's port."""
    _require_nginx()
    socket_path = tmp_path / "nginx.socket"
    app = start_gunicorn(
        "app:create_app()", pg_url, None, socket_path=socket_path, TRUSTED_PROXIES="2", **GUNICORN
    )
    port = free_port()
    with nginx_before(app, tmp_path, port, lambda: heroku_config(tmp_path, port, socket_path)):
        yield port


class Client:
    """One browser: its socket bound to `source`, its own Prolific id per open (so every
    open is a new worker's, which only the address limit can refuse)."""

    def __init__(self, port: int, source: str, name: str):
        self.port, self.source, self.name, self.count = port, source, name, 0

    def open(self, path: str, forwarded_for: str | None = None) -> http.client.HTTPResponse:
        """GET `path` through nginx (with this X-Forwarded-For header, if any)."""
        self.count += 1
        connection = http.client.HTTPConnection(
            "127.0.0.1", self.port, timeout=10, source_address=(self.source, 0)
        )
        headers = {"X-Forwarded-For": forwarded_for} if forwarded_for else {}
        try:
            query = f"PROLIFIC_PID={self.name}-{self.count}"
            connection.request("GET", f"{path}?{query}", None, headers)
            response = connection.getresponse()
            response.read()
            return response
        finally:
            connection.close()

    def statuses(self, paths: list[str], forwarded_for: str | None = None) -> list[int]:
        """The status of each open, in order."""
        return [self.open(path, forwarded_for).status for path in paths]


def _assert_refused(response: http.client.HTTPResponse) -> None:
    assert response.status == 429, response.status
    assert 1 <= int(response.headers["Retry-After"]) <= 60


def test_compose_two_source_addresses_are_limited_separately(compose_shape):
    a = Client(compose_shape, CLIENT_A, "a")
    b = Client(compose_shape, CLIENT_B, "b")
    opened = [a.open(path) for path in OPENS[:3]]
    assert [r.status for r in opened] == [302] * 3
    assert all(r.headers["Location"].startswith("/s/") for r in opened)
    # B's opens are B's own: A's three do not count against them (nginx's address would).
    assert b.statuses(DIRECT[:1]) == [302]
    _assert_refused(a.open(OPENS[3]))
    # A names another client in its own header: nginx appends A's address after it, and
    # the app (one trusted proxy) counts that last entry, so A is still refused.
    _assert_refused(a.open(DIRECT[0], forwarded_for="203.0.113.9"))
    _assert_refused(a.open(DIRECT[1], forwarded_for=f"203.0.113.9, {CLIENT_B}"))
    # B is limited too, at its own fourth open.
    assert b.statuses(DIRECT[1:4]) == [302, 302, 429]


def test_heroku_two_router_forwarded_clients_are_limited_separately(heroku_shape):
    # Both simulated router connections come from 127.0.0.1; the header names the client.
    router = Client(heroku_shape, CLIENT_A, "r")
    a, b = "198.51.100.1", "198.51.100.2"
    assert router.statuses(OPENS[:3], forwarded_for=a) == [302] * 3
    assert router.statuses(DIRECT[:1], forwarded_for=b) == [302]
    _assert_refused(router.open(OPENS[3], forwarded_for=a))
    # A's own header put before the router's entry (the router appends after it): still A.
    _assert_refused(router.open(DIRECT[0], forwarded_for=f"{b}, {a}"))
    _assert_refused(router.open(DIRECT[1], forwarded_for=f"203.0.113.9, {a}"))
    # B naming A first is still counted as B (not refused as A is).
    assert router.statuses(DIRECT[1:2], forwarded_for=f"{a}, {b}") == [302]
    assert router.statuses(DIRECT[2:4], forwarded_for=b) == [302, 429]


def test_compose_the_cap_of_open_sessions_counts_the_address_nginx_saw(compose_shape_wide_limit):
    """Three open sessions per client network (`study: max_open_per_network`, issue 26):
    A's fourth new session is refused whatever its own X-Forwarded-For says; B's are not
    counted with A's."""
    a = Client(compose_shape_wide_limit, CLIENT_A, "cap-a")
    b = Client(compose_shape_wide_limit, CLIENT_B, "cap-b")
    assert a.statuses(DIRECT[:3]) == [302] * 3
    refused = a.open(DIRECT[3], forwarded_for="203.0.113.9")
    assert refused.status == 429 and "Retry-After" not in refused.headers  # not the rate limit
    assert a.statuses(DIRECT[:1], forwarded_for=f"203.0.113.9, {CLIENT_B}") == [429]
    assert b.statuses(DIRECT[:3]) == [302] * 3
