"""The crowd platforms' side of a study: Prolific and MTurk URL parameters, the links and
the ExternalQuestion a researcher pastes into them, where a worker is sent back to them
(Prolific's completion address, MTurk's externalSubmit form).

Pure rules, no app: app.crowd.identity reads the parameters into a worker's identity,
app.rules.outcomes builds each outcome's address, the study pages and the completion
answers use the rest.
"""

from __future__ import annotations

import hmac
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from markupsafe import escape

# --- Prolific ----------------------------------------------------------------------------

PROLIFIC_QUERY = (
    "PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
)
PROLIFIC_COMPLETE_URL = "https://app.prolific.com/submissions/complete?cc="
# (URL parameter, key stored in platform_params); PROLIFIC_PID is the identity itself.
PROLIFIC_PARAMS = (("STUDY_ID", "study_id"), ("SESSION_ID", "session_id"))


def prolific_study_url(start_url: str) -> str:
    """The URL to paste into Prolific: it replaces the {{%...%}} placeholders per worker."""
    return f"{start_url}?{PROLIFIC_QUERY}"


def prolific_code_url(code: str) -> str:
    """Prolific's completion address for one of the study's completion codes."""
    return f"{PROLIFIC_COMPLETE_URL}{code}"


# Prolific's submission (GET /api/v1/submissions/<SESSION_ID>/): the statuses of a
# participant still taking part. A submission in another (returned, timed out, done)
# opens nothing new.
PROLIFIC_OPEN_STATUSES = ("RESERVED", "ACTIVE")
VERIFIED, UNVERIFIED, REFUSED = "verified", "unverified", "refused"


@dataclass(frozen=True)
class Verification:
    """What Prolific's API said of an arrival: `verified`, `refused` (no such submission,
    or not this participant's in this study, or no longer open) or `unverified` (the API
    did not answer usably: the worker is let in and the session marked); `reason` says
    why, for the log."""

    result: str
    reason: str


def prolific_verification(
    status: int | None, body: Any, participant: str, study_id: str | None
) -> Verification:
    """The rule of issue 26: a 200 whose `participant` is the PROLIFIC_PID, whose
    `study_id` is the STUDY_ID and whose `status` is RESERVED or ACTIVE verifies the
    arrival; a 404 or a 200 that says otherwise refuses it; anything else (no answer in
    time: status None, a 5xx, a 200 that is not a submission, the API refusing our token)
    lets the worker in unverified."""
    if status == 404:
        return Verification(REFUSED, "no such submission")
    if status != 200:
        return Verification(UNVERIFIED, f"answer {status}" if status else "no answer")
    if not isinstance(body, Mapping) or not isinstance(body.get("participant"), str):
        return Verification(UNVERIFIED, "answer 200 without a submission")
    if not hmac.compare_digest(body["participant"], participant):
        return Verification(REFUSED, "another participant's submission")
    if body.get("study_id") != study_id:
        return Verification(REFUSED, "a submission in another study")
    if body.get("status") not in PROLIFIC_OPEN_STATUSES:
        return Verification(REFUSED, "a submission no longer open")
    return Verification(VERIFIED, "open submission of this participant in this study")


# --- placeholders -------------------------------------------------------------------------

# A study URL opened as it was written, not from the platform: Prolific's {{%PROLIFIC_PID%}}
# (or %PROLIFIC_PID% when the braces were lost), MTurk's and survey tools' ${workerId},
# {{workerId}}, [workerId]: never a worker's id.
_PLACEHOLDER = re.compile(r"\{\{|\}\}|\$\{|%[A-Za-z_]+%|^\{[A-Za-z_]+\}$|^\[[A-Za-z_]+\]$")


def is_placeholder(value: str) -> bool:
    """Whether a URL parameter's value is a platform's unexpanded placeholder."""
    return bool(_PLACEHOLDER.search(value))


# --- MTurk -------------------------------------------------------------------------------

MTURK_SCHEMA = (
    "http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2006-07-14/"
    "ExternalQuestion.xsd"
)
MTURK_PREVIEW = "ASSIGNMENT_ID_NOT_AVAILABLE"
MTURK_ORIGINS = ("https://www.mturk.com", "https://workersandbox.mturk.com")
MTURK_SUBMIT_PATH = "/mturk/externalSubmit"
# (URL parameter, key stored in platform_params); workerId is the identity itself.
MTURK_PARAMS = (
    ("assignmentId", "assignment_id"),
    ("hitId", "hit_id"),
    ("turkSubmitTo", "turk_submit_to"),
)
MTURK_ASSIGNMENT_KEYS = ("assignment_id", "hit_id", "turk_submit_to")


def mturk_external_question(start_url: str, frame_height: int = 0) -> str:
    """ExternalQuestion XML for an MTurk HIT; MTurk appends assignmentId, hitId, workerId
    and turkSubmitTo to the URL itself. FrameHeight 0 lets the task use the whole window."""
    return (
        f'<ExternalQuestion xmlns="{MTURK_SCHEMA}">\n'
        f"  <ExternalURL>{escape(start_url)}</ExternalURL>\n"
        f"  <FrameHeight>{frame_height}</FrameHeight>\n"
        "</ExternalQuestion>"
    )


def is_mturk_preview(args: Mapping[str, str]) -> bool:
    """MTurk shows a HIT preview with assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE."""
    return args.get("assignmentId") == MTURK_PREVIEW


def mturk_origin(value: str) -> str | None:
    """The MTurk origin turkSubmitTo names, when it is exactly one of MTURK_ORIGINS (a
    trailing "/" allowed); None for anything else, look-alikes included."""
    origin = value.removesuffix("/")
    return origin if origin in MTURK_ORIGINS else None


def mturk_submit_url(turk_submit_to: Any) -> str | None:
    """`<turkSubmitTo>/mturk/externalSubmit` when turkSubmitTo is exactly one of MTurk's
    origins (https://www.mturk.com, https://workersandbox.mturk.com; a trailing "/"
    allowed), else None.

    turkSubmitTo comes from the URL, so anyone can forge it: the form may go to MTurk only.
    An exact comparison, not a parse: look-alikes such as `https://evil.com\\.mturk.com`
    (browsers read the backslash as a slash), userinfo, ports or paths never pass."""
    if not isinstance(turk_submit_to, str):
        return None
    origin = mturk_origin(turk_submit_to)
    return None if origin is None else f"{origin}{MTURK_SUBMIT_PATH}"


def mturk_target(platform: str, params: Mapping[str, Any]) -> dict[str, str] | None:
    """{"submit_to", "assignment_id"} for an MTurk ExternalQuestion session, else None: the
    page posts its externalSubmit form there."""
    if platform != "mturk":
        return None
    assignment_id = params.get("assignment_id")
    submit_to = mturk_submit_url(params.get("turk_submit_to"))
    if not isinstance(assignment_id, str) or not assignment_id or submit_to is None:
        return None
    return {"submit_to": submit_to, "assignment_id": assignment_id}


# --- both --------------------------------------------------------------------------------


def platform_secret_matches(
    platform: str, params: Mapping[str, str], stored: Mapping[str, object]
) -> bool:
    """The platform's per-submission secret in the request equals the stored one: Prolific
    SESSION_ID and STUDY_ID (the PID is the identity itself), MTurk assignmentId."""
    if platform == "prolific":
        keys = ("study_id", "session_id")
    elif platform == "mturk":
        keys = ("assignment_id",)
    else:
        return False
    for key in keys:
        given, kept = params.get(key), stored.get(key)
        if not given or not isinstance(kept, str) or not hmac.compare_digest(given, kept):
            return False
    return True
