"""Where a worker goes after Submit: pure rules for MTurk addresses (Prolific's, per
outcome, are in app.outcomes)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.identity import mturk_origin

MTURK_SUBMIT_PATH = "/mturk/externalSubmit"


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
    """{"submit_to", "assignment_id"} for an MTurk ExternalQuestion session, else None."""
    if platform != "mturk":
        return None
    assignment_id = params.get("assignment_id")
    submit_to = mturk_submit_url(params.get("turk_submit_to"))
    if not isinstance(assignment_id, str) or not assignment_id or submit_to is None:
        return None
    return {"submit_to": submit_to, "assignment_id": assignment_id}
