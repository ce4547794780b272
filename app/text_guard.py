"""The one request guard against unstorable text (app.safe_text: NUL, lone surrogates).

It runs before every other hook and view, on the path, the query, cookies and form
fields (400 `bad_request`) and on every string of a JSON body, object keys included (422
`invalid_field` naming the field, as the worker API's own checks do), in the error
envelope for API clients and as an HTML page for pages, instead of the 500 that
PostgreSQL's refusal of U+0000 or a failed UTF-8 encoding used to give. A non-ASCII
X-CSRFToken header is refused here too (403 `csrf_failed`): no CSRF token has such
characters.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from flask import Flask, request

from app.errors import ApiError
from app.safe_text import bad_strings, printable, text_problem

CSRF_HEADER = "X-CSRFToken"


def _pairs(where: str, items: Iterable[tuple[str, str]]) -> Iterator[tuple[str, str]]:
    for key, value in items:
        name = f"{where} '{printable(key[:60])}'"  # the name itself may be the bad text
        yield name, key
        yield name, value


def check_request() -> None:
    """Refuse a request carrying a NUL or a lone surrogate anywhere the app reads text."""
    csrf = request.headers.get(CSRF_HEADER)
    if csrf is not None and not csrf.isascii():
        raise ApiError(
            403,
            "csrf_failed",
            f"Missing or wrong {CSRF_HEADER} header. Reload the page and try again.",
        )
    sources: list[Iterable[tuple[str, str]]] = [
        [("path", request.path)],
        _pairs("query parameter", request.args.items(multi=True)),
        _pairs("cookie", request.cookies.items(multi=True)),
    ]
    if request.mimetype in ("application/x-www-form-urlencoded", "multipart/form-data"):
        sources.append(_pairs("form field", request.form.items(multi=True)))
    for source in sources:
        for where, text in source:
            problem = text_problem(text)
            if problem is not None:
                raise ApiError.bad_request(f"The {where} {problem}.", field=where)
    if request.is_json:
        # Parsed once here: the view's request.get_json() reads Flask's cached result. A
        # malformed body (None here) is left to the view, which answers 400 as before.
        body = request.get_json(silent=True)
        found = next(bad_strings(body), None) if body is not None else None
        if found is not None:
            # 422 like any other field that breaks a rule (app.annotate.schemas' envelope).
            field, problem = found
            raise ApiError.unprocessable(
                f"Field '{field or 'body'}': {problem}.", code="invalid_field", field=field
            )


def init_app(app: Flask) -> None:
    """Install the guard; register it before other extensions so that it runs first."""
    app.before_request(check_request)
