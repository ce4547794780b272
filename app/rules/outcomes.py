"""How a worker's part in a study ends (the outcome) and where each outcome sends them.

Pure rules, no app: the taxonomy checks its `study.completion` values with
`completion_target` (and `completion_url`), Submit asks `session_outcome`, and every
completion page and API answer builds its address with `completion_address`.

Prolific fixes completion codes per study and per outcome (a code such as "completed" or
"screened out", each with its own action), so a worker is sent to
`https://app.prolific.com/submissions/complete?cc=<the outcome's code>`. The first-wave
`completion_url` stays: with `{code}` it sends the session's own code (Prolific then asks
for manual review), without `{code}` it is one fixed URL for every outcome. The app's
own per-session code is always exported; a worker sees it only where the study has no
platform code (`shown_code`): a worker who pastes it into Prolific instead of the
outcome's code lands in manual review.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from app.rules.platforms import PROLIFIC_COMPLETE_URL, prolific_code_url

OUTCOMES = ("completed", "failed_training", "failed_checks", "no_consent")
# Outcomes final for the worker in the study: every later session of theirs ends with the
# same one (app.crowd.sessions.worker_failure), whatever document or visit.
FINAL_FAILURES = ("failed_training", "failed_checks")
ATTENTION_CHECK_MODES = ("flag", "fail")  # flag: shown on the dashboard; fail: also the outcome
CODE_PLACEHOLDER = "{code}"  # replaced by the session's own completion code
# Prolific completion codes go unencoded into `cc=`: letters, digits, '-' and '_' only.
COMPLETION_CODE_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

# Where an outcome's address came from, as /research/study shows it.
FROM_CONFIG = "COMPLETION_URL (environment)"
FROM_COMPLETION = "study.completion"
FROM_COMPLETION_URL = "study.completion_url"
FROM_NOWHERE = "none"


def session_outcome(
    *,
    consented: bool = True,
    passed_training: bool = True,
    failed_checks: bool = False,
    attention_checks: str = "flag",
) -> str:
    """The outcome that ends a session: no_consent, failed_training, failed_checks, completed.

    The first step a worker did not get through decides: declining consent, then failing
    training; after the task, attention checks decide only when the study says
    `attention_checks: fail` (`failed_checks` is app.rules.metrics.attention_flagged,
    the dashboard's rule); otherwise the worker completed the study.
    """
    if not consented:
        return "no_consent"
    if not passed_training:
        return "failed_training"
    if failed_checks and attention_checks == "fail":
        return "failed_checks"
    return "completed"


@dataclass(frozen=True)
class CompletionTarget:
    """Where one outcome sends a worker: a URL (`{code}` = the session's own code) or None."""

    outcome: str
    url: str | None
    source: str  # FROM_CONFIG | FROM_COMPLETION | FROM_COMPLETION_URL | FROM_NOWHERE

    @property
    def prolific_code(self) -> str | None:
        """The fixed Prolific completion code this outcome sends, if it sends one."""
        if (
            not self.url
            or self.sends_session_code
            or not self.url.startswith(PROLIFIC_COMPLETE_URL)
        ):
            return None
        return self.url.removeprefix(PROLIFIC_COMPLETE_URL) or None

    @property
    def sends_session_code(self) -> bool:
        """True when the worker's own per-session code goes into the URL (manual review
        on Prolific), False for a fixed URL."""
        return self.url is not None and CODE_PLACEHOLDER in self.url


def completion_targets(
    per_outcome: Mapping[str, str], completion_url: str | None, override: str | None = None
) -> tuple[CompletionTarget, ...]:
    """The address of every outcome, in OUTCOMES order.

    `override` (the COMPLETION_URL setting) wins for every outcome; then the taxonomy's
    `study.completion` entry for the outcome (already a full URL); then its first-wave
    `study.completion_url`; else none (the worker sees the app's completion page).
    """
    targets = []
    for outcome in OUTCOMES:
        if override:
            target = CompletionTarget(outcome, override, FROM_CONFIG)
        elif per_outcome.get(outcome):
            target = CompletionTarget(outcome, per_outcome[outcome], FROM_COMPLETION)
        elif completion_url:
            target = CompletionTarget(outcome, completion_url, FROM_COMPLETION_URL)
        else:
            target = CompletionTarget(outcome, None, FROM_NOWHERE)
        targets.append(target)
    return tuple(targets)


def shown_code(template: str | None, session_code: str | None) -> str | None:
    """The completion code a worker sees where the study ends, by the outcome's address:
    the outcome's fixed Prolific code (`...complete?cc=C1A2B3C4`); the session's own code
    where that is what the platform gets (`{code}` in the URL) or where the study names no
    address; None for any other fixed URL (the redirect alone completes the study).
    `session_code` None: the worker has not earned the session's code (ended before the
    task), so only a platform code is shown."""
    if not template or CODE_PLACEHOLDER in template:
        return session_code
    return CompletionTarget("", template, FROM_COMPLETION).prolific_code


def completion_address(template: str | None, code: str) -> str | None:
    """The address to send a worker to: `template` with {code} replaced by the session's
    own code (a fixed URL as it is); None without a template or for anything but http(s)
    (COMPLETION_URL comes from the environment unchecked: never hand a worker javascript:)."""
    if not template:
        return None
    address = template.replace(CODE_PLACEHOLDER, code)
    try:
        parts = urlsplit(address)
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    return address


# --- the taxonomy's values (app.taxonomy reports each ValueError at its line) -----------


def _url(value: str, schemes: tuple[str, ...], message: str) -> str:
    """A URL with one of these schemes and a host, `{code}` its only braces, no spaces."""
    if any(ch.isspace() or not ch.isprintable() for ch in value):
        raise ValueError(f"{message}, without spaces, got {value!r}")
    filled = value.replace(CODE_PLACEHOLDER, "CODE")
    if "{" in filled or "}" in filled:
        raise ValueError(f"{message}, with no braces other than {CODE_PLACEHOLDER}, got {value!r}")
    try:
        parts = urlsplit(filled)
        scheme, host = parts.scheme, parts.hostname
    except ValueError:  # an unclosed IPv6 bracket, say
        scheme, host = "", None
    if scheme not in schemes or not host:
        raise ValueError(f"{message}, got {value!r}")
    return value


def completion_url(value: Any) -> str:
    """The first-wave `study.completion_url`: an http(s) URL, `{code}` optional."""
    message = "must be an http(s) URL ({code} is replaced by the session's own code)"
    if not isinstance(value, str):
        raise ValueError(f"{message}, got {value!r}")
    return _url(value.strip(), ("http", "https"), message)


def completion_target(value: Any) -> str:
    """A Prolific completion code (sent as Prolific's completion URL) or a full https URL."""
    message = (
        "must be a Prolific completion code (letters, digits, '-' and '_', at most 64) "
        "or a full https:// URL"
    )
    if isinstance(value, int | float):  # bool too
        # YAML reads 0123 or 1e5 as numbers: the code would not be the one Prolific shows.
        raise ValueError(f"{message}; write a code made of digits in quotes, got {value!r}")
    if not isinstance(value, str):
        raise ValueError(f"{message}, got {value!r}")
    value = value.strip()
    if "://" in value or value.lower().startswith(("http:", "https:")):
        return _url(value, ("https",), "must be a full https:// URL")
    if not COMPLETION_CODE_RE.match(value):
        raise ValueError(f"{message}, got {value!r}")
    return prolific_code_url(value)
