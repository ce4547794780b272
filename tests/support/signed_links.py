"""Signed annotator links computed as docs/contracts.md#signed-links defines them,
independently of app.crowd.identity, so that tests check the app against the published
definition."""

from __future__ import annotations

import hashlib
import hmac


def sign(key: str, target: str, name: str) -> str:
    """hex HMAC-SHA256(SECRET_KEY, TARGET + "\\n" + NAME)."""
    return hmac.new(key.encode(), f"{target}\n{name}".encode(), hashlib.sha256).hexdigest()
