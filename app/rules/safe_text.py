"""Text that cannot be stored: NUL characters and lone surrogates. Pure: no app, no I/O.

PostgreSQL refuses U+0000 in text columns, and a lone surrogate (the JSON escape
`"\\ud800"` without its pair) is not Unicode at all: it cannot be encoded as UTF-8, stored
or shown. Both used to end in a 500 or a traceback. The request guard (app.core.text_guard)
and the importers (documents, validation items, judgments) apply this one rule.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from app.rules.jsonl import json_lines

NUL = "\x00"
# A JSON string literal; and a quick test for escapes that may decode to bad text.
_STRING_LITERAL = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_SUSPECT_ESCAPE = re.compile(r"\\u(?:0000|[dD][89a-fA-F])")


def text_problem(text: str) -> str | None:
    """What makes `text` unstorable (a NUL character, a lone surrogate), or None."""
    if NUL in text:
        return "contains a NUL character (U+0000), which cannot be stored"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "contains a lone surrogate (e.g. \\ud800), which is not valid Unicode"
    return None


def strings(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """Every string of a JSON-like value (object keys included) with its path, such as
    `span.text` or `items[2]`, in document order."""
    # Iterative: a value nested thousands deep must not hit the recursion limit.
    stack: list[tuple[str, Any]] = [(path, value)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, str):
            yield path, value
        elif isinstance(value, dict):
            children: list[tuple[str, Any]] = []
            for key, item in value.items():
                key_text = str(key)
                child = f"{path}.{key_text}" if path else key_text
                children += [(child, key_text), (child, item)]
            stack.extend(reversed(children))
        elif isinstance(value, list):
            stack.extend(reversed([(f"{path}[{i}]", item) for i, item in enumerate(value)]))


def printable(text: str) -> str:
    """`text` with NUL and lone surrogates written as escapes, safe to print or show."""
    if text_problem(text) is None:
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8").replace(NUL, "\\x00")


def bad_strings(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """(path, problem) for each string of a JSON-like value that text_problem refuses;
    the path is printable (app.rules.safe_text.printable) even when a key is the bad string."""
    for where, text in strings(value, path):
        problem = text_problem(text)
        if problem is not None:
            yield printable(where), problem


def json_text_problems(text: str) -> list[tuple[int, str, str]]:
    """(line, field, problem) for each string of a JSON or JSON-lines file that decodes to
    bad text (a `\\u0000` escape, a lone `\\ud800`); [] for a clean file.

    Lines come from the string literals in the text; fields from the parsed value (the
    n-th bad literal is the n-th bad string: both are in document order)."""
    if not _SUSPECT_ESCAPE.search(text):
        return []
    found: list[tuple[int, str]] = []
    for match in _STRING_LITERAL.finditer(text):
        literal = match.group()
        if not _SUSPECT_ESCAPE.search(literal):
            continue
        try:
            problem = text_problem(json.loads(literal))
        except ValueError:
            continue  # not a real literal (e.g. inside a malformed line): parsing reports it
        if problem is not None:
            found.append((text.count("\n", 0, match.start()) + 1, problem))
    fields = [field for field, _ in _bad_fields(text)]
    if len(fields) != len(found):
        fields = [""] * len(found)  # e.g. a repeated key hid a value: the line still says
    pairs = zip(found, fields, strict=True)
    return [(line, field or "text", problem) for (line, problem), field in pairs]


def _bad_fields(text: str) -> Iterator[tuple[str, str]]:
    try:
        yield from bad_strings(json.loads(text))
        return
    except ValueError:
        pass
    for _number, line in json_lines(text):
        try:
            value = json.loads(line)
        except ValueError:
            continue
        yield from bad_strings(value)
