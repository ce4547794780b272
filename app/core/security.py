"""Security headers, and CSRF tokens for capability-token APIs that must work without cookies."""

from __future__ import annotations

import hashlib
import hmac
from functools import lru_cache

from flask import Flask, Request, current_app, request
from flask.sessions import SecureCookieSessionInterface, SessionMixin
from werkzeug.middleware.proxy_fix import ProxyFix

from app.core.errors import ApiError


def init_app(app: Flask) -> None:
    """Add the security headers to every response; no cookie session for the JSON APIs;
    behind TRUSTED_PROXIES proxies (Heroku's router: 1), the client's address is the one
    they put in X-Forwarded-For (the login's rate limit counts per address). With none
    (the default) the header is ignored: a client could write anything in it."""
    app.after_request(_add_security_headers)
    app.session_interface = CookielessApiSessionInterface()
    proxies = int(app.config.get("TRUSTED_PROXIES") or 0)
    if proxies > 0:
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=proxies)


class CookielessApiSessionInterface(SecureCookieSessionInterface):
    """Flask's signed-cookie session, except under /api/: the worker and validator APIs
    work by capability token and must not depend on a cookie (a crowd platform's iframe
    may block it), so their requests get Flask's null session (reads find nothing, a
    write raises) and no Set-Cookie; nor do they pay for verifying one."""

    def open_session(self, app: Flask, request: Request) -> SessionMixin | None:
        if request.path.startswith("/api/"):
            return self.make_null_session(app)
        return super().open_session(app, request)


# The pages crowd platforms show in an iframe (MTurk's ExternalQuestion): the worker's
# and the validator's. Every other page (the researcher console above all, where a
# framing site could trick a click) may not be framed at all.
FRAMEABLE_BLUEPRINTS = frozenset({"annotate", "assignment", "surveys", "training", "validation"})


def _frame_ancestors(config) -> str:
    """FRAME_ANCESTORS on worker and validator pages, 'none' everywhere else."""
    if request.blueprint in FRAMEABLE_BLUEPRINTS:
        return config["FRAME_ANCESTORS"]
    return "'none'"


def _add_security_headers(response):
    config = current_app.config
    headers = response.headers
    for name, value in _security_headers(_frame_ancestors(config)):
        if name not in headers:  # a view may set its own
            headers[name] = value
    if config.get("HSTS") and request.is_secure and "Strict-Transport-Security" not in headers:
        headers["Strict-Transport-Security"] = "max-age=31536000; includeSubDomains"
    return response


@lru_cache(maxsize=8)
def _security_headers(frame_ancestors: str) -> tuple[tuple[str, str], ...]:
    """The headers every response carries, built once per FRAME_ANCESTORS setting."""
    csp = (
        "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
        "object-src 'none'; base-uri 'self'; "
        "form-action 'self' https://www.mturk.com https://workersandbox.mturk.com; "
        f"frame-ancestors {frame_ancestors}"
    )
    return (
        ("Content-Security-Policy", csp),
        ("X-Content-Type-Options", "nosniff"),
        # Capability tokens live in URLs: never leak them to other origins.
        ("Referrer-Policy", "same-origin"),
        ("Cross-Origin-Opener-Policy", "same-origin-allow-popups"),
    )


def capability_csrf_token(scope: str, token: str) -> str:
    """CSRF token bound to a capability token and SECRET_KEY: checkable without a cookie."""
    key = current_app.config["SECRET_KEY"].encode()
    return hmac.new(key, f"{scope}:{token}".encode(), hashlib.sha256).hexdigest()


def check_capability_csrf(scope: str, token: str, sent: str | None) -> bool:
    """True when `sent` is the CSRF token for this scope and capability token."""
    # As bytes: compare_digest raises TypeError on a str with non-ASCII characters.
    return bool(sent) and hmac.compare_digest(
        capability_csrf_token(scope, token).encode(), sent.encode("utf-8", "surrogatepass")
    )


CSRF_HEADER = "X-CSRFToken"


def require_capability_csrf(scope: str, token: str) -> None:
    """A 403 envelope unless the request's X-CSRFToken header fits this capability token."""
    if not check_capability_csrf(scope, token, request.headers.get(CSRF_HEADER)):
        raise ApiError(
            403,
            "csrf_failed",
            f"Missing or wrong {CSRF_HEADER} header. Reload the page and try again.",
        )
