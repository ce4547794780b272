"""Who is working: a crowd worker or validator identified by URL parameters.

Prolific sends PROLIFIC_PID, STUDY_ID, SESSION_ID; MTurk sends workerId, assignmentId,
hitId, turkSubmitTo; a direct link may carry `annotator`; with none of them the worker is
anonymous and remembered by a cookie (the only cookie the worker flow uses: everything
after the redirect to /s/<token> works without cookies, e.g. in a third-party iframe).
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field

from flask import Response, current_app
from werkzeug.datastructures import MultiDict

from app.errors import ApiError
from app.models import Annotator
from app.persistence import get_or_create

ANON_COOKIE = "falte_anon"
MTURK_PREVIEW = "ASSIGNMENT_ID_NOT_AVAILABLE"
MAX_ID_LENGTH = 200
_PRINTABLE = re.compile(r"^[^\x00-\x1f\x7f]+$")

# (URL parameter, key stored in platform_params)
PROLIFIC_PARAMS = (("STUDY_ID", "study_id"), ("SESSION_ID", "session_id"))
MTURK_PARAMS = (
    ("assignmentId", "assignment_id"),
    ("hitId", "hit_id"),
    ("turkSubmitTo", "turk_submit_to"),
)


@dataclass(frozen=True)
class WorkerIdentity:
    """A worker's platform, their id on it, and the platform's extra parameters."""

    platform: str  # prolific | mturk | direct | anonymous
    external_id: str
    params: dict[str, str] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """platform:external_id, as exports show it."""
        return f"{self.platform}:{self.external_id}"


def _clean(name: str, value: str | None) -> str | None:
    if value is None:
        return None
    value = value.strip()
    if not value:
        return None
    if len(value) > MAX_ID_LENGTH or not _PRINTABLE.match(value):
        raise ApiError.bad_request(
            f"URL parameter {name} must be 1-{MAX_ID_LENGTH} printable characters.",
            field=name,
        )
    return value


def _params(args: MultiDict, names: tuple[tuple[str, str], ...]) -> dict[str, str]:
    cleaned = {key: _clean(arg, args.get(arg)) for arg, key in names}
    return {key: value for key, value in cleaned.items() if value is not None}


def is_mturk_preview(args: MultiDict) -> bool:
    """MTurk shows a HIT preview with assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE."""
    return args.get("assignmentId") == MTURK_PREVIEW


def identity_from_args(args: MultiDict, anonymous_id: str | None) -> WorkerIdentity | None:
    """The identity the URL parameters name; None for an anonymous worker without cookie."""
    if prolific_pid := _clean("PROLIFIC_PID", args.get("PROLIFIC_PID")):
        return WorkerIdentity("prolific", prolific_pid, _params(args, PROLIFIC_PARAMS))
    if worker_id := _clean("workerId", args.get("workerId")):
        return WorkerIdentity("mturk", worker_id, _params(args, MTURK_PARAMS))
    if annotator := _clean("annotator", args.get("annotator")):
        return WorkerIdentity("direct", annotator)
    if anonymous_id and re.fullmatch(r"[A-Za-z0-9_-]{16,64}", anonymous_id):
        return WorkerIdentity("anonymous", anonymous_id)
    return None


def new_anonymous_identity() -> WorkerIdentity:
    """A fresh anonymous worker; the caller sets ANON_COOKIE to its external_id."""
    return WorkerIdentity("anonymous", secrets.token_urlsafe(18))


def get_or_create_annotator(identity: WorkerIdentity) -> Annotator:
    """The Annotator row for this identity, created if new (safe under concurrent arrivals)."""
    annotator, _ = get_or_create(
        Annotator, platform=identity.platform, external_id=identity.external_id
    )
    return annotator


ANON_COOKIE_MAX_AGE = 365 * 24 * 3600


def request_identity(args: MultiDict, cookies: Mapping[str, str]) -> tuple[WorkerIdentity, bool]:
    """The identity a start link names; a new anonymous one (and True) when it names none."""
    identity = identity_from_args(args, cookies.get(ANON_COOKIE))
    if identity is None:
        return new_anonymous_identity(), True
    return identity, False


def remember_anonymous(response: Response, identity: WorkerIdentity) -> Response:
    """Set the cookie that brings an anonymous worker back to their sessions."""
    response.set_cookie(
        ANON_COOKIE,
        identity.external_id,
        max_age=ANON_COOKIE_MAX_AGE,
        httponly=True,
        samesite="Lax",
        secure=bool(current_app.config.get("SESSION_COOKIE_SECURE")),
    )
    return response
