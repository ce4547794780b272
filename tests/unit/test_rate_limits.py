"""The rate limits' memory storage (the library's counting, without its expiry thread), and
what happens when a shared storage does not answer."""

from __future__ import annotations

import socket
import threading
import time
from types import SimpleNamespace

import limits.storage.memory
import pytest
from limits import parse
from limits.errors import StorageError
from limits.storage import MemoryStorage, RedisStorage
from limits.strategies import FixedWindowRateLimiter
from werkzeug.exceptions import TooManyRequests

from app import create_app
from app.core.rate_limits import (
    EXTENSION,
    FailOpenRateLimiter,
    SweptMemoryStorage,
    check,
    storage_for,
    storage_name,
)
from tests.support.apps import make_test_config


def test_memory_uri_gets_the_swept_storage():
    assert isinstance(storage_for("memory://"), SweptMemoryStorage)
    assert isinstance(storage_for("redis://127.0.0.1:6390/0"), RedisStorage)


def test_counts_like_the_library_without_starting_threads(monkeypatch):
    storage = SweptMemoryStorage()
    started = []

    class RecordingTimer(threading.Timer):
        def start(self):
            started.append(self)
            super().start()

    monkeypatch.setattr(limits.storage.memory.threading, "Timer", RecordingTimer)
    ours = FixedWindowRateLimiter(storage)
    theirs = FixedWindowRateLimiter(MemoryStorage())
    item = parse("5 per minute")
    for key in ("a", "b"):
        assert [ours.hit(item, "s", key) for _ in range(7)] == [True] * 5 + [False] * 2
        assert [theirs.hit(item, "s", key) for _ in range(7)] == [True] * 5 + [False] * 2
    assert ours.get_window_stats(item, "s", "a").remaining == 0
    # The library's own storage restarts its expiry timer when hit; ours never does.
    assert started and all(timer.function.__self__ is not storage for timer in started)


def test_expired_counters_are_swept_by_a_later_hit(monkeypatch):
    storage = SweptMemoryStorage()
    strategy = FixedWindowRateLimiter(storage)
    item = parse("1 per second")
    assert strategy.hit(item, "s", "old")
    assert not strategy.hit(item, "s", "old")
    now = time.time()
    clock = SimpleNamespace(time=lambda: now + 5)
    monkeypatch.setattr(limits.storage.memory, "time", clock)
    storage.next_sweep = 0.0  # a second has passed since the last sweep
    assert strategy.hit(item, "s", "new")
    assert [key for key in storage.storage if "old" in key] == []
    assert [key for key in storage.expirations if "old" in key] == []
    # Before the next sweep is due, nothing is swept (reads still ignore what expired).
    assert strategy.hit(item, "s", "old")
    clock.time = lambda: now + 10
    assert strategy.hit(item, "s", "again")
    assert any("old" in key for key in storage.storage)
    assert strategy.hit(item, "s", "old")  # expired: counted afresh


def test_unreachable_shared_storage_turns_limits_off_with_one_warning(caplog):
    """Redis down: requests are served (no 429, no 500), one WARNING names the storage
    (without its password), and the next requests neither retry it nor log again."""
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]  # nothing listens there once closed
    uri = f"redis://:s3cret@127.0.0.1:{port}/0"
    assert storage_name(uri) == f"redis://127.0.0.1:{port}/0"
    app = create_app(
        make_test_config("sqlite://", RATELIMIT_STORAGE_URI=uri, LOGIN_RATE_LIMIT="1 per minute")
    )
    with caplog.at_level("WARNING", logger=app.logger.name):
        for _ in range(5):
            with app.test_request_context("/research/login", method="POST"):
                check("LOGIN_RATE_LIMIT", "login", "203.0.113.9")
    warnings = [r.getMessage() for r in caplog.records if "Rate limits" in r.getMessage()]
    assert len(warnings) == 1, warnings
    assert f"redis://127.0.0.1:{port}/0" in warnings[0] and "OFF" in warnings[0]
    assert "s3cret" not in warnings[0]
    limiter = app.extensions[EXTENSION]
    assert isinstance(limiter, FailOpenRateLimiter) and not limiter.available()


def test_storage_that_answers_again_turns_limits_back_on(caplog):
    app = create_app(make_test_config("sqlite://", LOGIN_RATE_LIMIT="1 per minute"))
    limiter = app.extensions[EXTENSION]
    with app.test_request_context("/research/login", method="POST"):
        limiter.failed(StorageError(ConnectionError("refused")))
        limiter.retry_at = 0.0  # the rest is over
        with caplog.at_level("WARNING", logger=app.logger.name):
            check("LOGIN_RATE_LIMIT", "login", "a")
            with pytest.raises(TooManyRequests):
                check("LOGIN_RATE_LIMIT", "login", "a")
    assert any("back ON" in r.getMessage() for r in caplog.records)
    assert limiter.available()
