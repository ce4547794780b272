"""Prolific's API, asked whether an arrival's SESSION_ID is the participant's open
submission in the study (issue 26 point 1, docs/identity.md).

With PROLIFIC_API_TOKEN set, a new Prolific arrival is checked with
`GET {PROLIFIC_API_URL}/api/v1/submissions/<SESSION_ID>/` and `Authorization: Token
<token>`, at most PROLIFIC_API_TIMEOUT seconds (3); app.rules.platforms.prolific_verification
reads the answer. The token never leaves this module, and nothing here logs an id: a
SESSION_ID is the participant's per-submission secret.
"""

from __future__ import annotations

import logging
from urllib.parse import quote

import requests
from flask import current_app

from app.rules.platforms import UNVERIFIED, Verification, prolific_verification
from app.studies import current_study

log = logging.getLogger(__name__)
SUBMISSION_PATH = "/api/v1/submissions/{}/"


def api_token() -> str | None:
    """The token arrivals are checked with: the current study's own (`studies.
    prolific_api_token`, app.studies), else PROLIFIC_API_TOKEN; None: not checked."""
    return current_study().prolific_api_token or current_app.config.get("PROLIFIC_API_TOKEN")


def api_enabled() -> bool:
    """Whether arrivals are checked with Prolific's API (a token is set for the study)."""
    return bool(api_token())


def check_submission(participant: str, study_id: str | None, submission: str) -> Verification:
    """What Prolific says of this submission (the arrival's SESSION_ID) for this
    participant (PROLIFIC_PID) in this study (STUDY_ID)."""
    config = current_app.config
    base = str(config.get("PROLIFIC_API_URL") or "https://api.prolific.com").rstrip("/")
    url = base + SUBMISSION_PATH.format(quote(submission, safe=""))
    timeout = float(config.get("PROLIFIC_API_TIMEOUT") or 3)
    try:
        response = requests.get(
            url,
            headers={"Authorization": f"Token {api_token()}"},
            timeout=timeout,
            allow_redirects=False,
        )
    except requests.RequestException as exc:  # timeouts and unreachable hosts alike
        log.warning(
            "Prolific's API did not answer (%s): arrival let in unverified", type(exc).__name__
        )
        return Verification(UNVERIFIED, "no answer")
    body = None
    if response.status_code == 200:
        try:
            body = response.json()
        except ValueError:
            body = None
    verification = prolific_verification(response.status_code, body, participant, study_id)
    if verification.result == UNVERIFIED:
        log.warning("Prolific's API: %s; arrival let in unverified", verification.reason)
    return verification
