"""gunicorn's access log without capability tokens: a worker's `/s/<token>` link (or a
validator's `/v/<token>`) is all it takes to change their work, so the log that an
operator, a log drain or a support ticket sees has `/s/<redacted>` instead."""

from __future__ import annotations

import re

from gunicorn.glogging import Logger, SafeAtoms

REDACTED = "<redacted>"

# The token is the path segment after these prefixes; the path starts the string, follows
# a space (the request line "GET /s/... HTTP/1.1") or a scheme and host (a Referer or a
# Location header).
_TOKEN_IN_PATH = re.compile(
    r"(?P<before>^|\s|//[^/\s]*)(?P<prefix>/(?:s|v|api/sessions|api/validators)/)[^/?#\s]+"
)


def redact_tokens(text: str) -> str:
    """`text` with the token of every worker or validator path in it replaced by
    <redacted> (`/s/abc/complete?x=1` -> `/s/<redacted>/complete?x=1`)."""
    if "/" not in text:
        return text
    return _TOKEN_IN_PATH.sub(rf"\g<before>\g<prefix>{REDACTED}", text)


class RedactedAtoms(SafeAtoms):
    """gunicorn's access-log atoms, each redacted when the log format reads it (so only
    the few the format names pay for it)."""

    def __getitem__(self, key: str):
        value = super().__getitem__(key)
        return redact_tokens(value) if isinstance(value, str) else value


class RedactingLogger(Logger):
    """gunicorn's logger whose access log never shows a capability token
    (gunicorn.conf.py: logger_class)."""

    atoms_wrapper_class = RedactedAtoms
