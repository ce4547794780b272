"""Where a worker goes after Submit: pure rules for MTurk addresses (Prolific's, per
outcome, are in app.outcomes)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

MTURK_SUBMIT_PATH = "/mturk/externalSubmit"


def mturk_submit_url(turk_submit_to: Any) -> str | None:
    """`<turkSubmitTo>/mturk/externalSubmit` when turkSubmitTo is an https://*.mturk.com origin.

    turkSubmitTo comes from the URL, so anyone can forge it: only MTurk's own origins
    (www.mturk.com, workersandbox.mturk.com) may receive the form, never another site.
    """
    if not isinstance(turk_submit_to, str):
        return None
    try:
        parts = urlsplit(turk_submit_to.strip())
        port = parts.port
    except ValueError:
        return None
    host = parts.hostname or ""
    if (
        parts.scheme != "https"
        or not host.endswith(".mturk.com")
        or parts.username is not None
        or parts.password is not None
        or port is not None
        or parts.path not in ("", "/")
        or parts.query
        or parts.fragment
    ):
        return None
    return f"https://{host}{MTURK_SUBMIT_PATH}"


def mturk_target(platform: str, params: Mapping[str, Any]) -> dict[str, str] | None:
    """{"submit_to", "assignment_id"} for an MTurk ExternalQuestion session, else None."""
    if platform != "mturk":
        return None
    assignment_id = params.get("assignment_id")
    submit_to = mturk_submit_url(params.get("turk_submit_to"))
    if not isinstance(assignment_id, str) or not assignment_id or submit_to is None:
        return None
    return {"submit_to": submit_to, "assignment_id": assignment_id}
