"""Who is working, and what lets them back into a session (docs/contracts.md, section 1).

A start link names the worker: Prolific sends PROLIFIC_PID, STUDY_ID, SESSION_ID; MTurk
sends workerId, assignmentId, hitId, turkSubmitTo; a direct link carries `annotator`
(signed with `&sig=`); with none of them the worker is anonymous, remembered by a cookie.

These ids are public (a worker id shows in many places), so naming one only opens a
*new* session. Resuming an existing one needs something only that worker has:
- the browser that opened it: the signed cookie OPENED_COOKIE lists the sessions this
  browser opened or resumed;
- the platform's per-submission secret: Prolific's SESSION_ID with the PROLIFIC_PID and
  STUDY_ID stored on the session; MTurk's assignmentId of the assignment that opened it;
- a signed annotator link, `&sig=` = hex HMAC-SHA256(SECRET_KEY, TARGET + "\\n" + NAME),
  TARGET the document id, `start` or `round:<name>` (unsigned names: only where the app
  config UNSIGNED_ANNOTATOR_LINKS allows them, development and testing);
- for an anonymous worker, the anonymous cookie itself (a secret id the app signed).
Everything after the redirect to /s/<token> works without cookies (a third-party iframe).

A session belongs to the assignment that opened it: a request with another assignmentId
is another assignment, never proof, and never changes the stored assignmentId or
turkSubmitTo (the same browser still resumes the work; it is submitted to that first
assignment). On a resume, parameters the session lacks are added, stored ones never change.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlencode

from flask import Flask, Response, current_app, render_template, request
from werkzeug.datastructures import MultiDict

from app.core.errors import ApiError
from app.core.extensions import db
from app.core.persistence import get_or_create
from app.models import Annotator
from app.rules.platforms import (
    MTURK_ASSIGNMENT_KEYS,
    MTURK_PARAMS,
    PROLIFIC_PARAMS,
    is_placeholder,
    mturk_origin,
    platform_secret_matches,
)
from app.studies import DEFAULT_SLUG, current_study
from app.taxonomy import current_taxonomy

ANON_COOKIE = "falte_anon"
OPENED_COOKIE = "falte_opened"
COOKIE_MAX_AGE = 365 * 24 * 3600
ANON_COOKIE_MAX_AGE = COOKIE_MAX_AGE
MAX_OPENED = 100  # sessions one browser is remembered for (the cookie stays < 1 kB)
MAX_ID_LENGTH = 200
_PRINTABLE = re.compile(r"^[^\x00-\x1f\x7f]+$")
_SESSION_REF = re.compile(r"^[av][0-9]{1,18}$")
_EMAIL = re.compile(r"[^@\s<>\"'()]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")
# Where a platform's per-submission id is kept in platform_params.
SUBMISSION_KEYS = {"prolific": "session_id", "mturk": "assignment_id"}


@dataclass(frozen=True)
class WorkerIdentity:
    """A worker's platform, their id on it, the platform's extra parameters, and what the
    request proves: `owner` (a signed link or the anonymous cookie: any of this worker's
    sessions on the link's target) and `opened` (the sessions this browser opened)."""

    platform: str  # prolific | mturk | direct | anonymous
    external_id: str
    params: dict[str, str] = field(default_factory=dict)
    owner: bool = False
    opened: frozenset[str] = frozenset()
    # What Prolific's API said of this arrival (app.crowd.submissions): verified | unverified;
    # None when it was not asked. Stored on the session the arrival opens.
    verification: str | None = None

    @property
    def label(self) -> str:
        """platform:external_id, as exports show it."""
        return f"{self.platform}:{self.external_id}"

    @property
    def submission(self) -> str | None:
        """The platform submission this arrival belongs to: Prolific's SESSION_ID, MTurk's
        assignmentId; None for other workers or when the link has none. One submission is
        one session (app.crowd.submissions)."""
        key = SUBMISSION_KEYS.get(self.platform)
        return self.params.get(key) if key else None

    def may_resume(self, kind: str, session_id: int, stored: Mapping[str, object]) -> bool:
        """Whether this request may resume the worker's existing session (kind "a" for an
        annotation session, "v" for a validation session) with these stored parameters."""
        if self.owner or session_ref(kind, session_id) in self.opened:
            return True
        return platform_secret_matches(self.platform, self.params, stored)

    def resumed_params(self, stored: Mapping[str, object] | None) -> dict[str, object]:
        """The session's parameters after this resume: stored values never change; ones it
        lacks are added (MTurk's assignment keys only while it has no assignment)."""
        stored = dict(stored or {})
        added = dict(self.params)
        if self.platform == "mturk" and stored.get("assignment_id"):
            for key in MTURK_ASSIGNMENT_KEYS:
                added.pop(key, None)
        return {**added, **stored}


def session_ref(kind: str, session_id: int) -> str:
    """How OPENED_COOKIE names a session: "a12" (annotation), "v3" (validation)."""
    return f"{kind}{session_id}"


# --- refusals ---------------------------------------------------------------------------


class OpenRefused(Exception):
    """A start link that opens nothing: the page says why and how to get back to the task
    (never which session the link pointed at)."""

    def __init__(self, status: int, reason: str, field: str | None = None) -> None:
        super().__init__(reason)
        self.status = status
        # resume | study_link | unsigned | bad_signature | placeholder | conflict |
        # not_verified | wrong_study | not_ready
        self.reason = reason
        self.field = field  # the URL parameter a placeholder was found in

    @classmethod
    def resume(cls) -> OpenRefused:
        """403: the session exists and the request proves nothing of its worker."""
        return cls(403, "resume")

    @classmethod
    def study_link(cls) -> OpenRefused:
        """400: no platform id, signed link or cookie where anonymous workers are off."""
        return cls(400, "study_link")

    @classmethod
    def unsigned(cls) -> OpenRefused:
        """403: an annotator name without a signature where names must be signed."""
        return cls(403, "unsigned")

    @classmethod
    def bad_signature(cls) -> OpenRefused:
        """403: an annotator link whose signature is not this app's for this target."""
        return cls(403, "bad_signature")

    @classmethod
    def placeholder(cls, field: str) -> OpenRefused:
        """400: a parameter is still the platform's placeholder (the study URL was opened
        as written, not from the platform)."""
        return cls(400, "placeholder", field)

    @classmethod
    def conflict(cls) -> OpenRefused:
        """409: this Prolific participant is bound to another submission in the study."""
        return cls(409, "conflict")

    @classmethod
    def not_verified(cls) -> OpenRefused:
        """403: Prolific's API says the submission is not this participant's open one."""
        return cls(403, "not_verified")

    @classmethod
    def wrong_study(cls) -> OpenRefused:
        """403: a Prolific arrival with another STUDY_ID than the study's, or none."""
        return cls(403, "wrong_study")

    @classmethod
    def not_ready(cls) -> OpenRefused:
        """503: production without the Prolific study id a Prolific arrival is checked by."""
        return cls(503, "not_ready")


def refusal_page(exc: OpenRefused):
    """The HTML page for an OpenRefused (nothing the request began is kept)."""
    db.session.rollback()
    contact = current_taxonomy().study.contact
    page = render_template(
        "errors/open_refused.html",
        status=exc.status,
        reason=exc.reason,
        field=exc.field,
        contact=contact,
        contact_email=contact if contact and _EMAIL.fullmatch(contact) else None,
    )
    return page, exc.status, {"Cache-Control": "no-store"}


# --- signatures -------------------------------------------------------------------------


def _key() -> bytes:
    return str(current_app.config["SECRET_KEY"]).encode()


def annotator_signature(target: str, name: str) -> str:
    """hex HMAC-SHA256(SECRET_KEY, TARGET + "\\n" + NAME): the `sig` of a direct link.

    TARGET names the current study (app.studies) too: `<slug>/<target>` in every study
    but the default one, whose links keep the form they had before studies were rows. A
    document id holds no `/`, so no link of one study is a link of another."""
    study = current_study().slug
    scoped = target if study == DEFAULT_SLUG else f"{study}/{target}"
    return hmac.new(_key(), f"{scoped}\n{name}".encode(), hashlib.sha256).hexdigest()


def signed_annotator_query(target: str, name: str) -> str:
    """`annotator=NAME&sig=...`, URL-encoded, for a link to TARGET."""
    return urlencode({"annotator": name, "sig": annotator_signature(target, name)})


def signed_link(url: str, target: str, name: str) -> str:
    """The start link `url` (to TARGET) signed for annotator NAME."""
    return f"{url}?{signed_annotator_query(target, name)}"


def annotator_name_option(ctx: object, param: object, value: str | None) -> str | None:
    """A click callback: --annotator NAME cleaned as links carry it, or a usage error."""
    if value is None:
        return None
    try:
        return clean_annotator_name(value)
    except ApiError as exc:
        import click

        raise click.BadParameter(exc.message) from None


def _cookie_signature(purpose: str, value: str) -> str:
    # A key of its own (derived from SECRET_KEY) keeps cookie signatures apart from
    # annotator links' whatever the document ids and names are.
    key = hmac.new(_key(), b"falte cookie signing", hashlib.sha256).digest()
    return hmac.new(key, f"{purpose}\n{value}".encode(), hashlib.sha256).hexdigest()


def _signed(purpose: str, value: str) -> str:
    return f"{value}~{_cookie_signature(purpose, value)}"


def _unsigned(purpose: str, cookie: str | None) -> str | None:
    value, _, signature = (cookie or "").rpartition("~")
    if not value or not hmac.compare_digest(signature, _cookie_signature(purpose, value)):
        return None
    return value


# --- reading a start link ---------------------------------------------------------------


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
    if is_placeholder(value):
        raise OpenRefused.placeholder(name)
    return value


def clean_annotator_name(value: str) -> str:
    """An annotator name as links carry it (stripped); ApiError when it cannot be one."""
    name = value.strip()
    if not name or len(name) > MAX_ID_LENGTH or not _PRINTABLE.match(name):
        raise ApiError.bad_request(
            f"An annotator name must be 1-{MAX_ID_LENGTH} printable characters.",
            field="annotator",
        )
    return name


def _params(args: MultiDict, names: tuple[tuple[str, str], ...]) -> dict[str, str]:
    cleaned = {key: _clean(arg, args.get(arg)) for arg, key in names}
    return {key: value for key, value in cleaned.items() if value is not None}


def _mturk_params(args: MultiDict) -> dict[str, str]:
    params = _params(args, MTURK_PARAMS)
    if "turk_submit_to" in params:
        origin = mturk_origin(params["turk_submit_to"])
        if origin is None:
            raise ApiError.bad_request(
                "URL parameter turkSubmitTo must be https://www.mturk.com or "
                "https://workersandbox.mturk.com: open the task from its HIT on MTurk.",
                field="turkSubmitTo",
            )
        params["turk_submit_to"] = origin
    return params


def _opened(cookies: Mapping[str, str]) -> frozenset[str]:
    value = _unsigned("opened", cookies.get(OPENED_COOKIE))
    refs = (value or "").split(".")
    return frozenset(ref for ref in refs if _SESSION_REF.match(ref))


def _anonymous_id(cookies: Mapping[str, str]) -> str | None:
    value = _unsigned("anonymous", cookies.get(ANON_COOKIE))
    if value and re.fullmatch(r"[A-Za-z0-9_-]{16,64}", value):
        return value
    return None


def anonymous_allowed(app: Flask) -> bool:
    """Whether a link without any identity makes a new anonymous worker: ANONYMOUS_WORKERS
    (development, testing) or the taxonomy's `study: anonymous: true`."""
    return bool(app.config.get("ANONYMOUS_WORKERS")) or current_taxonomy().study.anonymous


def _check_signature(name: str, args: MultiDict, target: str) -> None:
    """OpenRefused unless the link's `sig` signs (target, name), or it has none and
    unsigned names are allowed (UNSIGNED_ANNOTATOR_LINKS: development and testing)."""
    signature = args.get("sig")
    if signature is None:
        if not current_app.config.get("UNSIGNED_ANNOTATOR_LINKS"):
            raise OpenRefused.unsigned()
    elif not hmac.compare_digest(
        signature.strip().lower().encode(), annotator_signature(target, name).encode()
    ):
        raise OpenRefused.bad_signature()


def identity_from_args(
    args: MultiDict, cookies: Mapping[str, str], target: str
) -> WorkerIdentity | None:
    """The identity a start link to `target` names (None: it names none), with what the
    request proves; OpenRefused for an annotator link that is not valid here."""
    opened = _opened(cookies)
    if prolific_pid := _clean("PROLIFIC_PID", args.get("PROLIFIC_PID")):
        params = _params(args, PROLIFIC_PARAMS)
        return WorkerIdentity("prolific", prolific_pid, params, opened=opened)
    if worker_id := _clean("workerId", args.get("workerId")):
        return WorkerIdentity("mturk", worker_id, _mturk_params(args), opened=opened)
    if annotator := _clean("annotator", args.get("annotator")):
        _check_signature(annotator, args, target)
        return WorkerIdentity("direct", annotator, owner=True, opened=opened)
    if anonymous_id := _anonymous_id(cookies):
        return WorkerIdentity("anonymous", anonymous_id, owner=True, opened=opened)
    return None


def new_anonymous_identity() -> WorkerIdentity:
    """A fresh anonymous worker; the caller sets ANON_COOKIE (remember_anonymous)."""
    return WorkerIdentity("anonymous", secrets.token_urlsafe(18), owner=True)


def get_or_create_annotator(identity: WorkerIdentity) -> Annotator:
    """The Annotator row for this identity, created if new (safe under concurrent arrivals)."""
    annotator, _ = get_or_create(
        Annotator, platform=identity.platform, external_id=identity.external_id
    )
    return annotator


def request_identity(target: str) -> tuple[WorkerIdentity, bool]:
    """The identity of this request's start link to `target`; a new anonymous one (and
    True) when it names none and anonymous workers are allowed, else OpenRefused."""
    identity = identity_from_args(request.args, request.cookies, target)
    if identity is not None:
        return identity, False
    if not anonymous_allowed(current_app):
        raise OpenRefused.study_link()
    return new_anonymous_identity(), True


# --- cookies ----------------------------------------------------------------------------


def _set_cookie(response: Response, name: str, value: str) -> None:
    response.set_cookie(
        name,
        value,
        max_age=COOKIE_MAX_AGE,
        httponly=True,
        samesite="Lax",
        secure=bool(current_app.config.get("SESSION_COOKIE_SECURE")),
    )


def remember_anonymous(response: Response, identity: WorkerIdentity) -> Response:
    """Set the cookie that brings an anonymous worker back to their sessions."""
    _set_cookie(response, ANON_COOKIE, _signed("anonymous", identity.external_id))
    return response


def remember_opened(response: Response, kind: str, session_id: int) -> Response:
    """Add the session to this browser's OPENED_COOKIE (unchanged: no Set-Cookie)."""
    ref = session_ref(kind, session_id)
    value = _unsigned("opened", request.cookies.get(OPENED_COOKIE)) or ""
    refs = [r for r in value.split(".") if _SESSION_REF.match(r)]
    if ref in refs:
        return response
    refs = [*refs, ref][-MAX_OPENED:]
    _set_cookie(response, OPENED_COOKIE, _signed("opened", ".".join(refs)))
    return response


def opened_response(
    response: Response, identity: WorkerIdentity, anonymous: bool, kind: str, session_id: int
) -> Response:
    """The redirect to an opened session, with the cookies that bring this browser back."""
    if anonymous:
        remember_anonymous(response, identity)
    return remember_opened(response, kind, session_id)
