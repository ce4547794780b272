"""The worker API's write limit, checked on Flask-Limiter's own strategy and storage.

Flask-Limiter's before_request resolves, for every request, every limit that could apply
(application, default, blueprint and route limits, exemptions, dynamic limit strings).
Under the save benchmark that resolution was 10% of a worker's CPU, more than the save's
own SQL statement. The worker API has exactly one limit, per session token, on its
writes: this module checks it directly with the `limits` strategy Flask-Limiter built
(`limiter.limiter`, on RATELIMIT_STORAGE_URI: memory, or Redis when scaled out), and
tells Flask-Limiter to skip the blueprint (a request filter). Everything else (the login
form, the validators' writes) stays on Flask-Limiter's decorators.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from functools import lru_cache

from flask import Blueprint, current_app, request
from limits import RateLimitItem, parse_many
from werkzeug.exceptions import TooManyRequests

from app.extensions import limiter


@lru_cache(maxsize=16)
def _parsed(limit: str) -> tuple[RateLimitItem, ...]:
    return tuple(parse_many(limit))


def limit_writes(
    blueprint: Blueprint,
    config_key: str,
    scope: str,
    key: Callable[[], str],
    methods: frozenset[str] = frozenset({"POST", "PUT", "DELETE"}),
) -> None:
    """Limit the blueprint's requests with these methods to app.config[config_key]
    (Flask-Limiter syntax, e.g. "120 per minute") per `key()`; a 429 with Retry-After
    beyond it. Flask-Limiter itself skips the blueprint."""
    name = blueprint.name

    @limiter.request_filter
    def _checked_by_limit_writes() -> bool:
        return request.blueprint == name

    @blueprint.before_request
    def _limit() -> None:
        if request.method not in methods or not limiter.enabled:
            return
        identifiers = (scope, key())
        exceeded = [
            item
            for item in _parsed(current_app.config[config_key])
            if not limiter.limiter.hit(item, *identifiers)
        ]
        if exceeded:
            now = time.time()
            waits = [
                limiter.limiter.get_window_stats(item, *identifiers).reset_time - now
                for item in exceeded
            ]
            raise TooManyRequests(str(exceeded[0]), retry_after=max(1, math.ceil(max(waits))))
