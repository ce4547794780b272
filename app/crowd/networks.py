"""Client networks: the caps that keep one client from hoarding a study's places or a
validation round's items (docs/identity.md "Caps per client network").

A client network is an IPv4 address, or an IPv6 /64: one subscriber's prefix, in which a
host may take any of 2^64 addresses, so counting exact IPv6 addresses would give one
client unlimited keys (app.core.rate_limits.network_of). The address is `request.remote_addr`
after the TRUSTED_PROXIES ProxyFix (app.core.security): the X-Forwarded-For entry the
outermost trusted proxy appended.

- Opens of start links are rate-limited per network (app.core.rate_limits.limit_opens).
- A study's unsubmitted sessions per network are capped at the taxonomy's
  `study: max_open_per_network` (default 3): an *open* session is one with status active
  and activity within `abandon_after_minutes` (submitted, abandoned and ended sessions do
  not count). Signed annotator links (platform `direct`) are the researchers' own and are
  not capped.
- A validation round's live item reservations per network are capped at
  MAX_RESERVATIONS_PER_NETWORK (app.validation.assignment).

Sessions store the network as a keyed hash (`network_key`), never the address itself.
Beyond a cap the worker gets a page (or, for the APIs, the JSON envelope) that says so:
PlaceRefused.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

from flask import current_app, render_template
from sqlalchemy import String, bindparam, func, literal, or_, select
from sqlalchemy.sql.elements import ColumnElement

from app.core.errors import envelope, wants_json
from app.core.extensions import db
from app.core.rate_limits import client_network
from app.crowd.settings import study_settings
from app.models import AnnotationSession, utcnow
from app.rules.statuses import SessionStatus
from app.studies import current_study_id

MAX_RESERVATIONS_PER_NETWORK = 20
SESSIONS = AnnotationSession.__table__

# The bound parameters of `has_room`: the worker's network key (None: not capped), the
# cap and the oldest activity of a session that still counts as open.
NETWORK = bindparam("network", type_=String())
_CAP = bindparam("network_cap")
_OPEN_SINCE = bindparam("network_open_since", type_=SESSIONS.c.last_seen_at.type)


def network_key(network: str | None = None) -> str:
    """The network as sessions store it: a hash keyed with SECRET_KEY (32 hex digits), so
    that the database holds no address and equal networks compare equal."""
    key = hmac.new(
        str(current_app.config["SECRET_KEY"]).encode(), b"falte client network", hashlib.sha256
    ).digest()
    value = network if network is not None else client_network()
    return hmac.new(key, value.encode(), hashlib.sha256).hexdigest()[:32]


def capped_network(platform: str) -> str | None:
    """The network key a new session of a worker on this platform counts against; None for
    signed annotator links (`direct`), which the researchers hand out themselves."""
    return None if platform == "direct" else network_key()


# --- open sessions per network ----------------------------------------------------------


def has_room() -> ColumnElement[bool]:
    """SQL: the worker's network (the `network` parameter) has fewer open sessions than
    the cap, or is not capped (NULL). Execute with `room_params()`."""
    open_sessions = (
        select(func.count())
        .select_from(SESSIONS)
        .where(
            SESSIONS.c.study_id == bindparam("network_study"),
            SESSIONS.c.network == NETWORK,
            SESSIONS.c.status == SessionStatus.ACTIVE,
            SESSIONS.c.last_seen_at >= _OPEN_SINCE,
        )
        .scalar_subquery()
    )
    return or_(NETWORK.is_(None), open_sessions < _CAP)


def lock_network() -> ColumnElement[Any]:
    """PostgreSQL: the transaction-level advisory lock of the `network` parameter's
    network (one decision per network at a time); a bigint hash, shared by chance by
    another network now and then, which then waits a moment."""
    return func.pg_advisory_xact_lock(network_lock_key())


def network_lock_key() -> ColumnElement[Any]:
    """The advisory-lock key of the `network` parameter's network."""
    return func.hashtextextended(literal("network:") + NETWORK, 0)


def try_network_lock() -> ColumnElement[bool]:
    """SQL: take the network's advisory lock if free (PostgreSQL), else false: a first
    open that finds another in progress on its network takes the exact path instead."""
    return or_(NETWORK.is_(None), func.pg_try_advisory_xact_lock(network_lock_key()))


def room_params(network: str | None) -> dict[str, Any]:
    """The parameters of `has_room` for this network key (None: not capped)."""
    if network is None:  # the condition holds without a count: nothing to look up
        return {
            "network": None,
            "network_cap": 0,
            "network_open_since": utcnow(),
            "network_study": 0,
        }
    settings = study_settings()
    return {
        "network_study": current_study_id(),
        "network": network,
        "network_cap": settings.max_open_per_network,
        "network_open_since": settings.abandoned_before(),
    }


def take_network_room(network: str | None) -> None:
    """Inside the caller's transaction, before it inserts a session: wait for the
    network's lock (PostgreSQL; SQLite, for development, takes none) and refuse the
    session (PlaceRefused) when the network has no room left."""
    if network is None:
        return
    params = room_params(network)
    if db.session.get_bind().dialect.name == "postgresql":
        db.session.execute(select(lock_network()), params)
    if not db.session.scalar(select(has_room()), params):
        raise PlaceRefused.network_limit()


# --- refusals ---------------------------------------------------------------------------

# The JSON envelope's messages (API messages are English; the page says it translated).
TEXT = {
    "network_limit": (
        "Too many tasks are open from your network. Finish or submit one of them, "
        "or try again later."
    ),
    "reservation_limit": (
        "Too many items of this round are reserved from your network; one comes free "
        "within a few minutes."
    ),
    "start_link": (
        "This study starts from its study link on the platform that sent you: "
        "open that link to get your task."
    ),
    "document_retired": (
        "The researchers have retired this text: it takes no new tasks. "
        "Open your study link to get another one."
    ),
}
# errors/place_refused.html; the rest is API-only
PAGES = ("network_limit", "start_link", "document_retired")


class PlaceRefused(Exception):
    """A session or item this client may not take: `network_limit` (429: its network holds
    its cap of open sessions), `reservation_limit` (429: of a round's item reservations)
    `start_link` (403: the study hands out documents only through /start) or
    `document_retired` (410: the document takes no new sessions; app.studies.documents)."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(TEXT[reason])
        self.status = status
        self.reason = reason

    @classmethod
    def network_limit(cls) -> PlaceRefused:
        """429: the client's network holds its cap of the study's open sessions."""
        return cls(429, "network_limit")

    @classmethod
    def reservation_limit(cls) -> PlaceRefused:
        """429: the client's network holds MAX_RESERVATIONS_PER_NETWORK of the round's items."""
        return cls(429, "reservation_limit")

    @classmethod
    def start_link(cls) -> PlaceRefused:
        """403: an unsigned direct link to a document of a study entered through /start."""
        return cls(403, "start_link")

    @classmethod
    def document_retired(cls) -> PlaceRefused:
        """410: a new session on a retired document (an existing one still resumes)."""
        return cls(410, "document_retired")


def place_refusal(exc: PlaceRefused):
    """The page (or, for API clients, the JSON envelope) of a PlaceRefused; nothing the
    request began is kept."""
    db.session.rollback()
    headers = {"Cache-Control": "no-store"}
    if wants_json() or exc.reason not in PAGES:
        response, status = envelope(exc.status, exc.reason, TEXT[exc.reason])
        return response, status, headers
    page = render_template("errors/place_refused.html", status=exc.status, reason=exc.reason)
    return page, exc.status, headers
