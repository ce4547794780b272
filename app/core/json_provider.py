"""JSON parsing that answers hostile nesting with 400, not a RecursionError (500)."""

from __future__ import annotations

from typing import Any

from flask.json.provider import DefaultJSONProvider


class SafeJSONProvider(DefaultJSONProvider):
    """Flask's JSON provider; a body nested past Python's recursion limit is a ValueError,
    which Flask turns into 400 Bad Request like any other malformed JSON."""

    def loads(self, s: str | bytes, **kwargs: Any) -> Any:
        """Parse JSON; too deep nesting raises ValueError."""
        try:
            return super().loads(s, **kwargs)
        except RecursionError:
            raise ValueError("JSON is nested too deeply") from None
