"""Reading a JSON-lines file one record at a time, naming each line in what it reports."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any


def json_object_lines(
    text: str, prefix: str, not_object: str = "must be a JSON object"
) -> Iterator[tuple[str, dict[str, Any] | str]]:
    """(where, record) for each non-blank line, `where` = prefix + line number; the record
    is the problem as text when the line is not JSON or not a JSON object."""
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{prefix}{number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            yield where, f"not valid JSON ({exc.msg})"
            continue
        yield where, record if isinstance(record, dict) else not_object
