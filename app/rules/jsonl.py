"""JSON Lines, written and read so that any text survives: one record a line.

JSON allows U+2028 (line separator), U+2029 (paragraph separator) and U+0085 (next line)
raw inside a string, but Python's `str.splitlines()` (and many other readers) ends a line
at each of them, so a comment holding one split its record in two. Every JSONL writer of
the app escapes them (`escape_line_breaks`: \u2028, \u2029, \u0085, which any JSON
reader turns back into the same characters), and every reader splits on "\n" only
(`json_lines`), as the JSON Lines format says (https://jsonlines.org: "\n" is the line
separator; a "\r" before it is JSON whitespace).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

# The characters splitlines() ends a line at that JSON leaves raw in a string (the others,
# \n \r \v \f \x1c-\x1e, are control characters that JSON always escapes).
LINE_BREAKS = ("\u2028", "\u2029", "\x85")
_LINE_BREAK = re.compile("[\u2028\u2029\x85]")


def _escaped(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def escape_line_breaks(line: str) -> str:
    """JSON text with U+2028, U+2029 and U+0085 written as \\u escapes (only inside JSON
    strings can they occur, where the escape means the same character)."""
    if _LINE_BREAK.search(line) is None:  # the usual case: one scan, no copy
        return line
    return _LINE_BREAK.sub(_escaped, line)


def json_line(record: Any) -> str:
    """One record as a JSON line (no newline), UTF-8 text kept, line breaks escaped."""
    return escape_line_breaks(json.dumps(record, ensure_ascii=False))


def json_lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, line) of a JSON Lines text, split on "\n" only."""
    return enumerate(text.split("\n"), 1)


def json_object_lines(
    text: str, prefix: str, not_object: str = "must be a JSON object"
) -> Iterator[tuple[str, dict[str, Any] | str]]:
    """(where, record) for each non-blank line, `where` = prefix + line number; the record
    is the problem as text when the line is not JSON or not a JSON object."""
    for number, line in json_lines(text):
        if not line.strip():
            continue
        where = f"{prefix}{number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            yield where, f"not valid JSON ({exc.msg})"
            continue
        yield where, record if isinstance(record, dict) else not_object
