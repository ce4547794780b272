"""The one request guard against unstorable text (app.rules.safe_text: NUL, lone surrogates).

It runs before every other hook and view, on the path, the query, cookies and form
fields (400 `bad_request`) and on every string of a JSON body, object keys included (422
`invalid_field` naming the field, as the worker API's own checks do), in the error
envelope for API clients and as an HTML page for pages, instead of the 500 that
PostgreSQL's refusal of U+0000 or a failed UTF-8 encoding used to give. A non-ASCII
X-CSRFToken header is refused here too (403 `csrf_failed`): no CSRF token has such
characters. A JSON body that is not UTF-8 (RFC 8259, section 8.1) is refused with 400
`bad_request`: Python's json also reads UTF-16 and UTF-32, whose bytes the NUL search
below cannot see into.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from flask import Flask, request

from app.core.errors import ApiError
from app.rules.safe_text import bad_strings, printable, text_problem

CSRF_HEADER = "X-CSRFToken"
FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")
# \u0000, or a \uD800-\uDFFF surrogate escape (paired or not: the walk decides).
SUSPECT_ESCAPE = re.compile(rb"\\u(?:0000|[dD][89a-fA-F])")


NOT_UTF8 = "The body is not valid UTF-8 JSON (send JSON encoded as UTF-8)."


def is_utf8(data: bytes) -> bool:
    """Whether these bytes are UTF-8 (ASCII is; UTF-16 and UTF-32 JSON never is)."""
    if data.isascii():
        return b"\x00" not in data  # ASCII text as UTF-16 or UTF-32 is full of NULs
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return b"\x00" not in data


def _pairs(where: str, items: Iterable[tuple[str, str]]) -> Iterator[tuple[str, str]]:
    for key, value in items:
        name = f"{where} '{printable(key[:60])}'"  # the name itself may be the bad text
        yield name, key
        yield name, value


def check_request() -> None:
    """Refuse a request carrying a NUL or a lone surrogate anywhere the app reads text."""
    req = request._get_current_object()  # one proxy lookup: this runs on every request
    csrf = req.headers.get(CSRF_HEADER)
    if csrf is not None and not csrf.isascii():
        raise ApiError(
            403,
            "csrf_failed",
            f"Missing or wrong {CSRF_HEADER} header. Reload the page and try again.",
        )
    sources: list[Iterable[tuple[str, str]]] = [[("path", req.path)]]
    if req.args:
        sources.append(_pairs("query parameter", req.args.items(multi=True)))
    if req.cookies:
        sources.append(_pairs("cookie", req.cookies.items(multi=True)))
    if req.mimetype in FORM_TYPES:
        sources.append(_pairs("form field", req.form.items(multi=True)))
    for source in sources:
        for where, text in source:
            problem = text_problem(text)
            if problem is not None:
                raise ApiError.bad_request(f"The {where} {problem}.", field=where)
    if not req.is_json:
        return
    data = req.get_data(cache=True)
    if not is_utf8(data):
        raise ApiError.bad_request(NOT_UTF8)
    # In valid JSON, a NUL or a lone surrogate can only come from a \u escape (raw ones
    # are a syntax error or invalid UTF-8): without a suspect escape, nothing to walk.
    if SUSPECT_ESCAPE.search(data):
        # Parsed once here: the view's request.get_json() reads Flask's cached result. A
        # malformed body (None here) is left to the view, which answers 400 as before.
        body = req.get_json(silent=True)
        found = next(bad_strings(body), None) if body is not None else None
        if found is not None:
            # 422 like any other field that breaks a rule (app.core.request_json.validation_error).
            field, problem = found
            raise ApiError.unprocessable(
                f"Field '{field or 'body'}': {problem}.", code="invalid_field", field=field
            )


def init_app(app: Flask) -> None:
    """Install the guard; register it before other extensions so that it runs first."""
    app.before_request(check_request)
