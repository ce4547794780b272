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


# The same characters in UTF-8, by their first byte, and their escapes: UTF-8 is
# self-synchronising, so these byte sequences occur in valid UTF-8 text only as those
# characters.
def _utf8_line_breaks() -> dict[bytes, tuple[tuple[bytes, bytes], ...]]:
    table: dict[bytes, tuple[tuple[bytes, bytes], ...]] = {}
    for character in LINE_BREAKS:
        raw = character.encode()
        table[raw[:1]] = (*table.get(raw[:1], ()), (raw, f"\\u{ord(character):04x}".encode()))
    return table


_UTF8_LINE_BREAKS = _utf8_line_breaks()


def escape_line_breaks_utf8(data: bytes) -> bytes:
    """escape_line_breaks on UTF-8 bytes (whole JSON lines, one or many): for text that
    never becomes str, as PostgreSQL's COPY output (app.exports.postgres_copy). Text
    without their first bytes (0xE2, 0xC2) costs a memchr each."""
    for first, sequences in _UTF8_LINE_BREAKS.items():
        if first in data:
            for raw, escaped in sequences:
                if raw in data:
                    data = data.replace(raw, escaped)
    return data


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
