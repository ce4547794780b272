"""The login requirement on /research/: every researcher page needs a logged-in researcher
but the login page itself. Anonymous browsers are redirected to the login page; JSON
clients get 401 in the error envelope.

A leaf, so that each blueprint under /research (the console's, adjudication's) puts
`require_researcher` before every one of its endpoints without importing another
feature's routes (app.research.auth holds the login itself).
"""

from __future__ import annotations

from flask import redirect, request, url_for
from flask_login import current_user

from app.core.errors import envelope, wants_json

PUBLIC_ENDPOINTS = frozenset({"research.login"})


def unauthorized():
    """JSON clients get 401 in the error envelope; browsers go to the login page."""
    if wants_json():
        return envelope(401, "unauthorized", "Log in as a researcher first.")
    return redirect(url_for("research.login", next=request.full_path.rstrip("?")))


def require_researcher():
    """Every research page but the login page needs a logged-in researcher."""
    if request.endpoint in PUBLIC_ENDPOINTS or current_user.is_authenticated:
        return None
    return unauthorized()
