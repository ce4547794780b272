"""Rate limits, on the `limits` library: per capability token on the worker's and the
validator's writes, per client address on the researchers' login, and per client network
(`client_network`: an IPv4 address, an IPv6 /64; app.crowd.networks) on the opens of start
links (`limit_opens`). Beyond a limit: a 429 with Retry-After (rendered by app.core.errors).
Lockouts (`check_lock`, `record_failure`): failures of one key (a researcher account)
counted in a moving window; the one that reaches the limit locks the key for a while,
whatever address the next attempt comes from.

Limits are strings in the library's syntax ("120 per minute", "10/minute; 100/hour"),
read from the app's config on every check (so a test or a deploy can change them). The
counters live in the storage RATELIMIT_STORAGE_URI names: `memory://` by default (each
process counts on its own), `redis://...` when several processes or machines must share
them (docs/deploying.md, "Scaling out"); the strategy is the library's fixed window.
RATELIMIT_ENABLED false turns every limit off.

When the shared storage does not answer (Redis down or unreachable), the limits fail open:
requests are served unlimited, one WARNING naming the storage says so (then at most one a
minute per process), and the storage is tried again every few seconds. A limit exists to
keep the app serving, so it must not be the thing that stops it.

A limit is checked only on the requests it applies to: a blueprint's before_request
(`limit_blueprint`) or one view (`rate_limited`). Flask-Limiter, which this app used
before, checks every request in three app-wide hooks (before, after and teardown), even
the requests a filter exempts; on the worker's save, which the whole study sends every
few seconds, those hooks were 0.13 ms of 0.7 ms of Python, more than the save's SQL.
The memory storage is the library's minus its expiry thread (SweptMemoryStorage).
"""

from __future__ import annotations

import ipaddress
import math
import time
from collections.abc import Callable, Collection
from functools import lru_cache, wraps
from typing import ParamSpec, TypeVar
from urllib.parse import urlsplit, urlunsplit

from flask import Blueprint, Flask, current_app, request
from limits import RateLimitItem, parse_many
from limits.errors import StorageError
from limits.storage import MemoryStorage, Storage, storage_from_string
from limits.strategies import FixedWindowRateLimiter, MovingWindowRateLimiter
from werkzeug.exceptions import TooManyRequests

EXTENSION = "rate_limits"
IPV6_PREFIX = 64  # one subscriber's prefix: app.crowd.networks
MOVING = "rate_limits_moving"  # the same storage, counted in a moving window (lockouts)
WRITE_METHODS = frozenset({"POST", "PUT", "DELETE", "PATCH"})

P = ParamSpec("P")
T = TypeVar("T")


class RateLimiter:
    """The app's limit counters: `limiter.init_app(app)` builds the storage named by
    RATELIMIT_STORAGE_URI (one per app, so that tests' apps never share counters)."""

    def init_app(self, app: Flask) -> None:
        app.config.setdefault("RATELIMIT_ENABLED", True)
        app.config.setdefault("RATELIMIT_STORAGE_URI", "memory://")
        storage = storage_for(app.config["RATELIMIT_STORAGE_URI"])
        app.extensions[EXTENSION] = FailOpenRateLimiter(storage)
        app.extensions[MOVING] = MovingWindowRateLimiter(storage)


# A request never waits long for a storage that does not answer (redis-py's default is to
# wait for ever); its errors reach check() as limits.errors.StorageError.
SHARED_STORAGE_OPTIONS = {"socket_connect_timeout": 0.5, "socket_timeout": 0.5}


def storage_for(uri: str) -> Storage:
    """The `limits` storage this URI names; for memory://, SweptMemoryStorage."""
    scheme = uri.split("://", 1)[0]
    if scheme == "memory":
        return SweptMemoryStorage(uri)
    options = SHARED_STORAGE_OPTIONS if scheme.startswith(("redis", "valkey")) else {}
    return storage_from_string(uri, wrap_exceptions=True, **options)


def storage_name(uri: str) -> str:
    """The storage URI without its credentials, for logs (redis://:secret@h -> redis://h)."""
    parts = urlsplit(uri)
    host = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


class FailOpenRateLimiter(FixedWindowRateLimiter):
    """The fixed-window strategy, with what to do when its storage fails: no limits for
    RETRY_SECONDS (no request pays a timeout meanwhile), then try again; a WARNING when
    that starts, at most one per LOG_SECONDS while it lasts, and one when it ends. The
    state is per process, and a race between threads only costs a duplicate line."""

    RETRY_SECONDS = 5.0
    LOG_SECONDS = 60.0

    def __init__(self, storage: Storage):
        super().__init__(storage)
        self.retry_at = 0.0  # time.monotonic() before which the storage is not tried
        self.down_since: float | None = None
        self.logged_at = 0.0

    def available(self) -> bool:
        """Whether to count this request (False while a failed storage rests)."""
        return self.down_since is None or time.monotonic() >= self.retry_at

    def failed(self, error: Exception) -> None:
        """The storage did not answer: limits off for RETRY_SECONDS; say so (not too often)."""
        now = time.monotonic()
        self.retry_at = now + self.RETRY_SECONDS
        if self.down_since is None or now - self.logged_at >= self.LOG_SECONDS:
            self.logged_at = now
            self.down_since = self.down_since or now
            current_app.logger.warning(
                "Rate limits OFF: their storage %s does not answer (%s: %s); requests are "
                "served without limits until it does (retried every %d s)",
                storage_name(str(current_app.config["RATELIMIT_STORAGE_URI"])),
                type(getattr(error, "storage_error", error)).__name__,
                getattr(error, "storage_error", error),
                self.RETRY_SECONDS,
            )

    def answered(self) -> None:
        """The storage answered: if it had failed, say the limits are back."""
        if self.down_since is not None:
            current_app.logger.warning(
                "Rate limits back ON: their storage %s answers again (off for %d s)",
                storage_name(str(current_app.config["RATELIMIT_STORAGE_URI"])),
                time.monotonic() - self.down_since,
            )
            self.down_since = None


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


def _reachable_limiter() -> FailOpenRateLimiter | None:
    """The app's limiter, or None when limits are off (RATELIMIT_ENABLED false) or its
    storage is down (fail open: the request goes through)."""
    if not current_app.config["RATELIMIT_ENABLED"]:
        return None
    strategy: FailOpenRateLimiter = current_app.extensions[EXTENSION]
    return strategy if strategy.available() else None


def check(config_key: str, scope: str, key: str) -> None:
    """Count this request against app.config[config_key] for (scope, key); raise a 429
    (TooManyRequests with retry_after: seconds until the window resets) beyond it."""
    app = current_app
    strategy = _reachable_limiter()
    if strategy is None:
        return
    try:
        exceeded = [
            item for item in _parsed(app.config[config_key]) if not strategy.hit(item, scope, key)
        ]
        now = time.time()
        waits = [strategy.get_window_stats(item, scope, key).reset_time - now for item in exceeded]
    except StorageError as error:
        strategy.failed(error)
        return
    strategy.answered()
    if exceeded:
        raise TooManyRequests(str(exceeded[0]), retry_after=max(1, math.ceil(max(waits))))


def _lock_key(scope: str, key: str) -> str:
    return f"lock/{scope}/{key}"


def check_lock(scope: str, key: str) -> None:
    """Raise a 429 (TooManyRequests with retry_after) while record_failure's lock on
    (scope, key) lasts."""
    strategy = _reachable_limiter()
    if strategy is None:
        return
    try:
        locked = strategy.storage.get(_lock_key(scope, key))
        left = strategy.storage.get_expiry(_lock_key(scope, key)) - time.time() if locked else 0
    except StorageError as error:
        strategy.failed(error)
        return
    strategy.answered()
    if locked:
        raise TooManyRequests("locked", retry_after=max(1, math.ceil(left)))


def record_failure(config_key: str, lock_config_key: str, scope: str, key: str) -> None:
    """Count one failure of (scope, key) against app.config[config_key] ("10 per 15
    minutes", a moving window); the failure that reaches it locks (scope, key) for
    app.config[lock_config_key] minutes (check_lock) and starts the count afresh."""
    app = current_app
    strategy = _reachable_limiter()
    if strategy is None:
        return
    moving: MovingWindowRateLimiter = app.extensions[MOVING]
    try:
        for item in _parsed(app.config[config_key]):
            moving.hit(item, scope, key)
            if moving.get_window_stats(item, scope, key).remaining <= 0:
                # Whole seconds: Redis expires keys by the second.
                seconds = max(1, math.ceil(60 * float(app.config[lock_config_key])))
                strategy.storage.incr(_lock_key(scope, key), seconds)
                moving.clear(item, scope, key)
    except StorageError as error:
        strategy.failed(error)
        return
    strategy.answered()


def forget_failures(config_key: str, scope: str, key: str) -> None:
    """Start the failures of (scope, key) afresh (after a success)."""
    app = current_app
    strategy = _reachable_limiter()
    if strategy is None:
        return
    try:
        for item in _parsed(app.config[config_key]):
            app.extensions[MOVING].clear(item, scope, key)
    except StorageError as error:
        strategy.failed(error)


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
    """The client's address: the TCP peer's, or behind TRUSTED_PROXIES proxies (werkzeug's
    ProxyFix) the X-Forwarded-For entry the outermost trusted proxy appended."""
    return request.remote_addr or "127.0.0.1"


def network_of(address: str) -> str:
    """The network an address counts for: an IPv4 address itself (also written as an
    IPv4-mapped IPv6 address), an IPv6 address's /64; anything else as it is."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network(f"{ip}/{IPV6_PREFIX}", strict=False))
    return str(ip)


def client_network() -> str:
    """The network of this request's client: its address's (`network_of`)."""
    return network_of(client_address())


def limit_opens(view: Callable[P, T]) -> Callable[P, T]:
    """Decorate a start link's view (/start, /annotate/<doc>, /validate/<round>): its GETs
    count against OPEN_RATE_LIMIT per client network (an IPv4 address, an IPv6 /64:
    app.crowd.networks), so that nobody can drain a study's places or grow its tables from one
    address, nor from the 2^64 addresses of one IPv6 subscriber."""
    # HEAD runs the same view (it would open a session too).
    return rate_limited("OPEN_RATE_LIMIT", "open", client_network, methods={"GET", "HEAD"})(view)
