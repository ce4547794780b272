"""Researcher sessions end when they should: logout and `create-researcher --reset` end
every session cookie and remember-me cookie issued before (replayed, they get the login
page); the remember-me cookie is HttpOnly, SameSite=Lax, bounded, Secure in production."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime

import pytest

from config.settings import ProductionConfig

EMAIL = "researcher@example.org"
PASSWORD = "correct-horse-battery"
SESSION = "session"
REMEMBER = "remember_token"


def _open(client, path: str, **kwargs):
    """A request in its own app context, as in production: the test's app context would
    otherwise carry Flask-Login's user (in `g`) from one request to the next."""
    with client.application.app_context():
        return client.open(path, **kwargs)


def _csrf(client, path: str) -> str:
    html = _open(client, path).get_data(as_text=True)
    return re.search(r'<meta name="csrf-token" content="([^"]+)"', html).group(1)


def _log_in(client, password: str = PASSWORD):
    form = {"email": EMAIL, "password": password, "remember": "y"}
    form["csrf_token"] = _csrf(client, "/research/login")
    return _open(client, "/research/login", method="POST", data=form)


def _replay(app, name: str, value: str) -> int:
    """GET /research/ from a new browser holding only this cookie; the status (and 302
    must go to the login page)."""
    client = app.test_client()
    client.set_cookie(name, value)
    response = _open(client, "/research/")
    if response.status_code == 302:
        assert "/research/login" in response.headers["Location"]
    return response.status_code


def _logged_in_cookies(app, researcher) -> dict[str, str]:
    """Log in with "keep me logged in"; the session and remember-me cookies, checked to
    work on their own (so that the replays below can fail)."""
    client = app.test_client()
    assert _log_in(client).status_code == 302
    cookies = {name: client.get_cookie(name).value for name in (SESSION, REMEMBER)}
    for name, value in cookies.items():
        assert _replay(app, name, value) == 200, name
    return cookies


def test_logout_ends_every_session_and_remember_cookie(app, researcher):
    old = _logged_in_cookies(app, researcher)
    other_browser = _logged_in_cookies(app, researcher)
    client = app.test_client()
    client.set_cookie(SESSION, old[SESSION])
    token = _csrf(client, "/research/")
    logout = _open(client, "/research/logout", method="POST", data={"csrf_token": token})
    assert logout.status_code == 302
    for cookies in (old, other_browser):
        for name, value in cookies.items():
            assert _replay(app, name, value) == 302, name
    assert _log_in(app.test_client()).status_code == 302  # logging in again works


def test_password_reset_ends_every_session_and_remember_cookie(app, runner, researcher):
    old = _logged_in_cookies(app, researcher)
    result = runner.invoke(
        args=["create-researcher", EMAIL, "--password-stdin", "--reset"],
        input="a-brand-new-password\n",
    )
    assert result.exit_code == 0, result.output
    for name, value in old.items():
        assert _replay(app, name, value) == 302, name
    assert _log_in(app.test_client(), "a-brand-new-password").status_code == 302


def test_remember_cookie_is_lax_httponly_and_bounded(app, researcher):
    response = _log_in(app.test_client())
    header = next(h for h in response.headers.getlist("Set-Cookie") if h.startswith(f"{REMEMBER}="))
    assert "SameSite=Lax" in header
    assert "HttpOnly" in header
    expires = parsedate_to_datetime(re.search(r"Expires=([^;]+)", header).group(1))
    assert expires <= datetime.now(UTC) + timedelta(days=14, minutes=1)


def test_remember_cookie_settings_in_production(monkeypatch):
    monkeypatch.setenv("SECRET_KEY", "s" * 8 + "0123456789abcdefghijklmnopqrstuv")
    monkeypatch.delenv("REMEMBER_COOKIE_DAYS", raising=False)
    config = ProductionConfig()
    assert config.REMEMBER_COOKIE_SECURE is True
    assert config.REMEMBER_COOKIE_SAMESITE == "Lax"
    assert config.REMEMBER_COOKIE_DURATION.days == 14


@pytest.mark.parametrize("stale", ["1:7", "1:x", "x", "¹", "1:0:0"])
def test_the_user_loader_refuses_other_versions_and_junk(app, researcher, stale):
    from app.research.auth import load_researcher

    assert load_researcher(f"{researcher.id}:0") == researcher
    assert load_researcher(str(researcher.id)) == researcher  # cookies from before versions
    assert load_researcher(stale) is None
