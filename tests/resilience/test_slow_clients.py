"""Slow clients cannot stop the server: 64 connections sending a login body at one byte a
second leave /healthz answering within a second behind the real nginx with the shipped
configuration (Heroku's shape: config/nginx.conf.erb, gunicorn on a unix socket). Without
nginx the same attack holds every gunicorn thread and /healthz stops answering, which is
what the proxy is for (and what makes the first test able to fail)."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator

import pytest
import requests

from tests.support.apps import require_or_skip
from tests.support.nginx import heroku_config, nginx_before, nginx_binary
from tests.support.servers import free_port, start_gunicorn, stop

SLOW_CLIENTS = 64
BODY_BYTES = 600  # never all sent: the attack lasts as long as the test
# One process of four threads: the attack needs only a few connections to hold them all.
GUNICORN = {"WEB_CONCURRENCY": "1", "GUNICORN_THREADS": "4"}


class SlowLogins:
    """Connections that each send a login request's headers, then its form body at one
    byte a second, from one thread."""

    def __init__(self, port: int, count: int):
        head = (
            "POST /research/login HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            "Content-Type: application/x-www-form-urlencoded\r\n"
            f"Content-Length: {BODY_BYTES}\r\n\r\n"
        ).encode()
        self.sockets = []
        for _ in range(count):
            conn = socket.create_connection(("127.0.0.1", port), timeout=5)
            conn.sendall(head)
            self.sockets.append(conn)
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._drip, daemon=True)
        self.thread.start()

    def _drip(self) -> None:
        while not self.stopped.wait(1.0):
            for conn in self.sockets:
                with contextlib.suppress(OSError):
                    conn.send(b"e")

    def still_open(self) -> int:
        """How many connections got no answer and were not closed (still being read)."""
        waiting = 0
        for conn in self.sockets:
            conn.setblocking(False)
            try:
                conn.recv(1)  # an answer, or b"" if closed: not waiting
            except BlockingIOError:
                waiting += 1
            except OSError:
                pass
        return waiting

    def close(self) -> None:
        self.stopped.set()
        self.thread.join()
        for conn in self.sockets:
            conn.close()


def healthz_seconds(url: str, tries: int, timeout: float) -> list[float]:
    """How long each of `tries` GET /healthz took (`timeout` when it did not answer)."""
    times = []
    for _ in range(tries):
        started = time.monotonic()
        try:
            response = requests.get(f"{url}/healthz", timeout=timeout)
            assert response.status_code == 200, response.text
            times.append(time.monotonic() - started)
        except requests.exceptions.Timeout:
            times.append(timeout)
        time.sleep(0.2)
    return times


@pytest.fixture
def nginx_in_front(pg_url, tmp_path) -> Iterator[tuple[str, int]]:
    """The Heroku shape: gunicorn on a unix socket, nginx with config/nginx.conf.erb."""
    if nginx_binary() is None:
        require_or_skip("nginx is not installed (scripts/ensure-services.sh installs it)")
    socket_path = tmp_path / "nginx.socket"
    app = start_gunicorn("app:create_app()", pg_url, None, socket_path=socket_path, **GUNICORN)
    port = free_port()
    with nginx_before(app, tmp_path, port, lambda: heroku_config(tmp_path, port, socket_path)):
        yield f"http://127.0.0.1:{port}", port


@pytest.fixture
def gunicorn_alone(pg_url) -> Iterator[tuple[str, int]]:
    port = free_port()
    app = start_gunicorn("app:create_app()", pg_url, port, **GUNICORN)
    yield f"http://127.0.0.1:{port}", port
    stop(app)


def test_healthz_answers_within_a_second_behind_nginx_during_slow_logins(nginx_in_front):
    url, port = nginx_in_front
    attack = SlowLogins(port, SLOW_CLIENTS)
    try:
        time.sleep(2)  # every connection has its headers in and is sending its body
        times = healthz_seconds(url, tries=10, timeout=3)
        assert attack.still_open() == SLOW_CLIENTS  # the attack was on all along
    finally:
        attack.close()
    print(f"/healthz behind nginx under {SLOW_CLIENTS} slow clients: max {max(times):.3f} s")
    assert max(times) < 1.0, times


def test_without_nginx_the_same_attack_stops_healthz(gunicorn_alone):
    url, port = gunicorn_alone
    assert max(healthz_seconds(url, tries=2, timeout=3)) < 1.0  # fine before the attack
    attack = SlowLogins(port, SLOW_CLIENTS)
    try:
        time.sleep(2)
        times = healthz_seconds(url, tries=2, timeout=3)
    finally:
        attack.close()
    print(f"/healthz from gunicorn alone under {SLOW_CLIENTS} slow clients: {times} s")
    assert min(times) >= 1.0, times
