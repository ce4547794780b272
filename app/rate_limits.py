"""Rate limits, on the `limits` library: per capability token on the worker's and the
validator's writes, per client address on the researchers' login and on the opens of
start links (`limit_opens`). Beyond a limit: a 429 with Retry-After (rendered by
app.errors).

Limits are strings in the library's syntax ("120 per minute", "10/minute; 100/hour"),
read from the app's config on every check (so a test or a deploy can change them). The
counters live in the storage RATELIMIT_STORAGE_URI names: `memory://` by default (each
process counts on its own), `redis://...` when several processes or machines must share
them (README, Deploying); the strategy is the library's fixed window. RATELIMIT_ENABLED
false turns every limit off.

A limit is checked only on the requests it applies to: a blueprint's before_request
(`limit_blueprint`) or one view (`rate_limited`). Flask-Limiter, which this app used
before, checks every request in three app-wide hooks (before, after and teardown), even
the requests a filter exempts; on the worker's save, which the whole study sends every
few seconds, those hooks were 0.13 ms of 0.7 ms of Python, more than the save's SQL.
The memory storage is the library's minus its expiry thread (SweptMemoryStorage).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Collection
from functools import lru_cache, wraps
from typing import ParamSpec, TypeVar

from flask import Blueprint, Flask, current_app, request
from limits import RateLimitItem, parse_many
from limits.storage import MemoryStorage, Storage, storage_from_string
from limits.strategies import FixedWindowRateLimiter
from werkzeug.exceptions import TooManyRequests

EXTENSION = "rate_limits"
WRITE_METHODS = frozenset({"POST", "PUT", "DELETE", "PATCH"})

P = ParamSpec("P")
T = TypeVar("T")


class RateLimiter:
    """The app's limit counters: `limiter.init_app(app)` builds the storage named by
    RATELIMIT_STORAGE_URI (one per app, so that tests' apps never share counters)."""

    def init_app(self, app: Flask) -> None:
        app.config.setdefault("RATELIMIT_ENABLED", True)
        app.config.setdefault("RATELIMIT_STORAGE_URI", "memory://")
        app.extensions[EXTENSION] = FixedWindowRateLimiter(
            storage_for(app.config["RATELIMIT_STORAGE_URI"])
        )


def storage_for(uri: str) -> Storage:
    """The `limits` storage this URI names; for memory://, SweptMemoryStorage."""
    if uri.split("://", 1)[0] == "memory":
        return SweptMemoryStorage(uri)
    return storage_from_string(uri)


class SweptMemoryStorage(MemoryStorage):
    """The library's memory storage without its expiry thread.

    MemoryStorage drops expired counters in a threading.Timer that every hit restarts
    when the last one has run (10 ms after it started): under a steady load, a new thread
    about every 10 ms in each process, whose start the request waits for (the new thread
    must get the GIL first). On bench.save_load that was 0.1-0.2 ms of CPU per request
    (the app's CPU per request 2.0-2.2x the baseline's with it, 1.5-1.9x without).
    Expired counters are already ignored when read (MemoryStorage.get); here the first
    hit at least a second after the last sweep drops them, in the request's own thread."""

    SWEEP_SECONDS = 1.0

    def __init__(self, uri: str | None = None, wrap_exceptions: bool = False, **options: str):
        super().__init__(uri, wrap_exceptions=wrap_exceptions, **options)
        self.timer.cancel()  # the one MemoryStorage started
        self.next_sweep = 0.0

    # MemoryStorage calls its private __schedule_expiry() on every hit: this replaces it
    # (tests/unit/test_rate_limits.py fails if a version of the library stops calling it).
    def _MemoryStorage__schedule_expiry(self) -> None:
        now = time.monotonic()
        if now >= self.next_sweep:
            self.next_sweep = now + self.SWEEP_SECONDS
            self._MemoryStorage__expire_events()  # type: ignore[attr-defined]


@lru_cache(maxsize=32)
def _parsed(limit: str) -> tuple[RateLimitItem, ...]:
    return tuple(parse_many(limit))


def check(config_key: str, scope: str, key: str) -> None:
    """Count this request against app.config[config_key] for (scope, key); raise a 429
    (TooManyRequests with retry_after: seconds until the window resets) beyond it."""
    app = current_app
    if not app.config["RATELIMIT_ENABLED"]:
        return
    strategy: FixedWindowRateLimiter = app.extensions[EXTENSION]
    exceeded = [
        item for item in _parsed(app.config[config_key]) if not strategy.hit(item, scope, key)
    ]
    if exceeded:
        now = time.time()
        waits = [strategy.get_window_stats(item, scope, key).reset_time - now for item in exceeded]
        raise TooManyRequests(str(exceeded[0]), retry_after=max(1, math.ceil(max(waits))))


def limit_blueprint(
    blueprint: Blueprint,
    config_key: str,
    scope: str,
    key: Callable[[], str],
    methods: Collection[str] = WRITE_METHODS,
) -> None:
    """Limit the blueprint's requests with these methods to app.config[config_key] per
    `key()` (e.g. the capability token in the URL)."""

    @blueprint.before_request
    def _rate_limit() -> None:
        if request.method in methods:
            check(config_key, scope, key())


def rate_limited(
    config_key: str,
    scope: str,
    key: Callable[[], str],
    methods: Collection[str] = WRITE_METHODS,
) -> Callable[[Callable[P, T]], Callable[P, T]]:
    """Decorate a view: its requests with these methods count against
    app.config[config_key] per `key()`."""

    def decorate(view: Callable[P, T]) -> Callable[P, T]:
        @wraps(view)
        def limited(*args: P.args, **kwargs: P.kwargs) -> T:
            if request.method in methods:
                check(config_key, scope, key())
            return view(*args, **kwargs)

        return limited

    return decorate


def url_token() -> str:
    """The capability token in the request's URL (`<token>`)."""
    return str((request.view_args or {}).get("token", ""))


def client_address() -> str:
    """The address the request came from (behind a load balancer: the balancer's)."""
    return request.remote_addr or "127.0.0.1"


def limit_opens(view: Callable[P, T]) -> Callable[P, T]:
    """Decorate a start link's view (/start, /annotate/<doc>, /validate/<round>): its GETs
    count against OPEN_RATE_LIMIT per client address, so that nobody can drain a study's
    places or grow its tables from one address."""
    # HEAD runs the same view (it would open a session too).
    return rate_limited("OPEN_RATE_LIMIT", "open", client_address, methods={"GET", "HEAD"})(view)
