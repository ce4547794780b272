"""The rate limits' memory storage: the library's counting, without its expiry thread."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace

import limits.storage.memory
from limits import parse
from limits.storage import MemoryStorage, RedisStorage
from limits.strategies import FixedWindowRateLimiter

from app.rate_limits import SweptMemoryStorage, storage_for


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
