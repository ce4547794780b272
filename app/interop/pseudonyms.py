"""Pseudonyms for the ids of people in published data: a keyed hash (HMAC-SHA256).

Worker ids (``prolific:5f3c...``), platform session and assignment ids and validator ids
are replaced by ``anon-`` and the first 16 hex digits (64 bits) of HMAC-SHA256 over the
id, keyed with a key derived from the app's secret. The same id always gets the same
pseudonym under the same secret, so a published dataset still joins annotations to
sessions and judgments, and a later export of the same study agrees with an earlier one;
without the key, nobody can test a guessed id against a pseudonym (a plain hash of a
Prolific id could be checked by anyone who knows the id). 64 bits keep collisions out
of reach for any study (about 1 in 10^10 for a million ids).

The key is derived (HMAC of a fixed label under the secret), never the secret itself:
the secret also signs worker links (docs/identity.md), and a pseudonym must never be
mistaken for, or help forge, a signature. `Pseudonyms(secret, keep_ids=True)` keeps ids
as they are (``--keep-ids``). W3C creators (app.interop.w3c), brat folders
(app.interop.brat) and the Hugging Face dataset (app.interop.dataset_card) share it.
"""

from __future__ import annotations

import hashlib
import hmac

PREFIX = "anon-"
HEX_DIGITS = 16
KEY_LABEL = b"falte-annotate pseudonym key v1"


def derive_key(secret: str | bytes) -> bytes:
    """The pseudonym key: HMAC-SHA256(secret, KEY_LABEL). The secret must not be empty."""
    raw = secret.encode("utf-8") if isinstance(secret, str) else secret
    if not raw:
        raise ValueError("a pseudonym key needs a secret (SECRET_KEY is empty)")
    return hmac.new(raw, KEY_LABEL, hashlib.sha256).digest()


def pseudonym(value: str, key: bytes) -> str:
    """`value`'s pseudonym under a derived `key`: PREFIX + 16 hex digits of its HMAC."""
    digest = hmac.new(key, value.encode("utf-8"), hashlib.sha256).hexdigest()
    return PREFIX + digest[:HEX_DIGITS]


class Pseudonyms:
    """Replaces ids by their pseudonyms (or keeps them, `keep_ids`); None stays None."""

    def __init__(self, secret: str | bytes | None, keep_ids: bool = False) -> None:
        self.keep_ids = keep_ids
        self._key = None if keep_ids else derive_key(secret or b"")

    def __call__(self, value: str | None) -> str | None:
        """The pseudonym of one id."""
        if value is None or self._key is None:
            return value
        return pseudonym(value, self._key)
