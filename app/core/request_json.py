"""Reading a JSON API request body: one set of answers for every JSON endpoint."""

from __future__ import annotations

import json
from typing import Any

from flask import request
from werkzeug.exceptions import BadRequest

from app.core.errors import ApiError
from app.core.text_guard import NOT_UTF8, is_utf8


def json_object(*, optional: bool = False) -> dict[str, Any]:
    """The body as a JSON object: 415 when not JSON, 400 when malformed or not an object.

    With `optional`, an empty body is an empty object (e.g. POST /submit)."""
    if optional and not request.get_data(cache=True):
        return {}
    if not request.is_json:
        raise ApiError.unsupported_media_type()
    if not is_utf8(request.get_data(cache=True)):  # json.loads would read UTF-16 and -32
        raise ApiError.bad_request(NOT_UTF8)
    try:
        body = request.get_json()
    except BadRequest:
        raise ApiError.bad_request("The body is not valid JSON.") from None
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ApiError.bad_request(NOT_UTF8) from None
    if not isinstance(body, dict):
        raise ApiError.bad_request("The body must be a JSON object.")
    return body
