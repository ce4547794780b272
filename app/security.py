"""Security headers, and CSRF tokens for capability-token APIs that must work without cookies."""

from __future__ import annotations

import hashlib
import hmac

from flask import Flask, current_app, request

from app.errors import ApiError


def init_app(app: Flask) -> None:
    """Add the security headers to every response."""
    app.after_request(_add_security_headers)


def _add_security_headers(response):
    config = current_app.config
    csp = (
        "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
        "object-src 'none'; base-uri 'self'; "
        "form-action 'self' https://www.mturk.com https://workersandbox.mturk.com; "
        f"frame-ancestors {config['FRAME_ANCESTORS']}"
    )
    response.headers.setdefault("Content-Security-Policy", csp)
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    # Capability tokens live in URLs: never leak them to other origins.
    response.headers.setdefault("Referrer-Policy", "same-origin")
    response.headers.setdefault("Cross-Origin-Opener-Policy", "same-origin-allow-popups")
    if config.get("HSTS") and request.is_secure:
        response.headers.setdefault(
            "Strict-Transport-Security", "max-age=31536000; includeSubDomains"
        )
    return response


def capability_csrf_token(scope: str, token: str) -> str:
    """CSRF token bound to a capability token and SECRET_KEY: checkable without a cookie."""
    key = current_app.config["SECRET_KEY"].encode()
    return hmac.new(key, f"{scope}:{token}".encode(), hashlib.sha256).hexdigest()


def check_capability_csrf(scope: str, token: str, sent: str | None) -> bool:
    """True when `sent` is the CSRF token for this scope and capability token."""
    return bool(sent) and hmac.compare_digest(capability_csrf_token(scope, token), sent)


CSRF_HEADER = "X-CSRFToken"


def require_capability_csrf(scope: str, token: str) -> None:
    """A 403 envelope unless the request's X-CSRFToken header fits this capability token."""
    if not check_capability_csrf(scope, token, request.headers.get(CSRF_HEADER)):
        raise ApiError(
            403,
            "csrf_failed",
            f"Missing or wrong {CSRF_HEADER} header. Reload the page and try again.",
        )
