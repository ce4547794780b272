"""One error envelope: {"error": {"code", "message", "details"}} for API clients, HTML for pages."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flask import Flask, jsonify, render_template, request
from flask_babel import gettext
from sqlalchemy.exc import DisconnectionError, OperationalError
from werkzeug.exceptions import HTTPException

from app.core.extensions import db
from app.core.gunicorn_logging import redact_tokens
from app.core.i18n import N_


class ProblemsError(Exception):
    """Refused input, nothing written: `problems` lists every one; str() one per line."""

    def __init__(self, problems: Sequence[object]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(str(problem) for problem in self.problems))


class ApiError(Exception):
    """An error with an HTTP status, a machine code and a message a person can act on."""

    def __init__(
        self, status: int, code: str, message: str, details: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = details or {}

    @classmethod
    def bad_request(cls, message: str, **details: Any) -> ApiError:
        """400: the request is malformed (not JSON, wrong shape)."""
        return cls(400, "bad_request", message, details)

    @classmethod
    def not_found(cls, message: str, **details: Any) -> ApiError:
        """404: no such resource for this capability."""
        return cls(404, "not_found", message, details)

    @classmethod
    def conflict(cls, message: str, **details: Any) -> ApiError:
        """409: the request contradicts what is stored."""
        return cls(409, "conflict", message, details)

    @classmethod
    def unprocessable(cls, message: str, code: str = "invalid", **details: Any) -> ApiError:
        """422: well-formed but breaks a rule (span, category, progress)."""
        return cls(422, code, message, details)

    @classmethod
    def unsupported_media_type(cls) -> ApiError:
        """415: the body is not JSON."""
        return cls(415, "unsupported_media_type", "Send the body as application/json.")

    def to_response(self):
        """The JSON envelope with this error's status."""
        return envelope(self.status, self.code, self.message, self.details)


def envelope(status: int, code: str, message: str, details: dict[str, Any] | None = None):
    """Build the JSON error response."""
    body = {"error": {"code": code, "message": message, "details": details or {}}}
    return jsonify(body), status


def wants_json() -> bool:
    """API paths and clients that prefer JSON get the envelope; browsers get a page."""
    if request.path.startswith("/api/") or request.path.endswith(".json"):
        return True
    best = request.accept_mimetypes.best_match(["application/json", "text/html"])
    return (
        best == "application/json"
        and request.accept_mimetypes[best] > request.accept_mimetypes["text/html"]
    )


def _http_code_name(exc: HTTPException) -> str:
    return (exc.name or "error").lower().replace(" ", "_").replace("'", "")


def register(app: Flask) -> None:
    """Install the handlers for ApiError, HTTP errors and unexpected exceptions."""

    @app.errorhandler(ApiError)
    def handle_api_error(exc: ApiError):
        # A refused request stores nothing more, and ends the transaction it began (it
        # may have been an autocommit one: see app.annotate.writes).
        db.session.rollback()
        if wants_json():
            return exc.to_response()
        return _page(exc.status, exc.message)

    @app.errorhandler(HTTPException)
    def handle_http_error(exc: HTTPException):
        if wants_json():
            details = {"limit": str(exc.description)} if exc.code == 429 else None
            message = (
                "Too many requests; wait a moment and try again."
                if exc.code == 429
                else exc.description or ""
            )
            response, status = envelope(exc.code or 500, _http_code_name(exc), message, details)
            if exc.code == 405 and exc.valid_methods:
                response.headers["Allow"] = ", ".join(exc.valid_methods)
            if exc.code == 429:
                response.headers["Retry-After"] = _retry_after(exc)
            return response, status
        if exc.code == 429:
            seconds = _retry_after(exc)
            message = gettext(
                "Too many attempts; try again in %(seconds)s seconds.", seconds=seconds
            )
            page, status = _page(429, message)
            return page, status, {"Retry-After": seconds}
        return _page(exc.code or 500, exc.description or exc.name)

    @app.errorhandler(OperationalError)
    @app.errorhandler(DisconnectionError)
    def handle_database_unavailable(exc: Exception):
        # The database restarted or is unreachable: nothing was stored, and the client's
        # retry queue will send the same (idempotent) request again.
        db.session.rollback()
        app.logger.warning("Database unavailable on %s %s: %s", request.method, _logged_path(), exc)
        message = N_("The database is briefly unavailable; your change will be retried.")
        if wants_json():
            response, status = envelope(503, "database_unavailable", message)
        else:
            response, status = _page(503, message)
        response = app.make_response((response, status))
        response.headers["Retry-After"] = "2"
        return response

    @app.errorhandler(Exception)
    def handle_unexpected(exc: Exception):
        app.logger.exception("Unhandled error on %s %s", request.method, _logged_path())
        message = N_("Something went wrong on our side. Your saved work is safe; try again.")
        if wants_json():
            return envelope(500, "internal_error", message)
        return _page(500, message)


def _retry_after(exc: HTTPException) -> str:
    """Seconds until the exceeded rate-limit window resets (at least 1), as
    app.core.rate_limits put it on the exception."""
    retry_after = getattr(exc, "retry_after", None)
    return str(max(1, retry_after if isinstance(retry_after, int) else 1))


def _page(status: int, message: str):
    # In the page's language when the message is in the catalogue (app.core.i18n), else as it is.
    page = render_template("errors/error.html", status=status, message=gettext(message))
    return page, status


def _logged_path() -> str:
    """The request path as a log line may show it: capability tokens redacted, and quoted
    with escapes (repr) so that a decoded newline in a URL cannot forge a log line."""
    return repr(redact_tokens(request.path))
