"""Reading a JSON API request body: one set of answers for every JSON endpoint, and for a
body that breaks its pydantic model (validation_error)."""

from __future__ import annotations

import json
from typing import Any

from flask import request
from pydantic import ValidationError
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


def _field_name(location: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in location) or "body"


def validation_error(exc: ValidationError) -> ApiError:
    """Turn pydantic's errors into one 422 envelope naming the first field at fault."""
    errors = [
        {"field": _field_name(error["loc"]), "type": error["type"], "message": error["msg"]}
        for error in exc.errors(include_url=False, include_context=False, include_input=False)
    ]
    first = errors[0]
    if first["type"] == "extra_forbidden":
        code, message = "unknown_field", f"Unknown field {first['field']!r}: remove it."
    elif first["type"] == "missing":
        code, message = "missing_field", f"Field {first['field']!r} is required."
    else:
        code = "invalid_field"
        message = f"Field {first['field']!r}: {first['message'].removeprefix('Value error, ')}."
    return ApiError.unprocessable(message, code=code, field=first["field"], errors=errors)
