"""Researcher accounts: login requirement on every /research/ route, login, logout, CLI."""

from __future__ import annotations

import re

import pytest
from flask import url_for
from werkzeug.routing import IntegerConverter
from werkzeug.security import check_password_hash

from app.core.extensions import db
from app.models import Researcher
from app.research.auth import safe_next

EMAIL = "researcher@example.org"
PASSWORD = "correct-horse-battery"


def csrf_token(client, path: str = "/research/login") -> str:
    html = client.get(path).get_data(as_text=True)
    match = re.search(r'<meta name="csrf-token" content="([^"]+)"', html)
    assert match, f"no CSRF meta tag on {path}"
    return match.group(1)


def log_in(client, email=EMAIL, password=PASSWORD, next_url=None):
    token = csrf_token(client)
    path = "/research/login" + (f"?next={next_url}" if next_url else "")
    return client.post(path, data={"email": email, "password": password, "csrf_token": token})


def research_rules(app):
    rules = [
        rule
        for rule in app.url_map.iter_rules()
        if rule.rule.startswith("/research/") and rule.endpoint != "research.login"
    ]
    paths = []
    with app.test_request_context():
        for rule in rules:
            values = {
                name: 1 if isinstance(rule._converters[name], IntegerConverter) else "x"
                for name in rule.arguments
            }
            paths.append((rule, url_for(rule.endpoint, **values)))
    return paths


def test_every_research_route_needs_a_login(app, client):
    paths = research_rules(app)
    assert len(paths) >= 15  # the researcher's routes when this was written, login aside
    assert {rule.endpoint for rule, _ in paths} >= {
        "research.dashboard",
        "research.study_links",
        "research.taxonomy_preview",
        "research.document",
        "research.logout",
    }
    token = csrf_token(client)
    for rule, path in paths:
        wants_json = path.endswith(".json")
        if "GET" in rule.methods:
            response = client.get(path)
            if wants_json:
                assert response.status_code == 401, path
                assert response.get_json()["error"]["code"] == "unauthorized"
            else:
                assert response.status_code == 302, path
                assert response.headers["Location"].startswith("/research/login?next="), path
            as_json = client.get(path, headers={"Accept": "application/json"})
            assert as_json.status_code == 401, path
            assert as_json.get_json()["error"]["code"] == "unauthorized", path
        for method in sorted(rule.methods - {"GET", "HEAD", "OPTIONS"}):
            # With a valid CSRF token, so only the missing login can refuse it.
            response = client.open(
                path, method=method, data={"csrf_token": token}, headers={"X-CSRFToken": token}
            )
            assert response.status_code in (302, 401), (method, path)
            if response.status_code == 302:
                assert response.headers["Location"].startswith("/research/login"), path


def test_login_page_renders_a_csrf_protected_form(client):
    response = client.get("/research/login")
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    assert 'name="csrf_token"' in html
    assert 'type="password"' in html


def test_login_without_csrf_token_is_refused(client, researcher):
    response = client.post("/research/login", data={"email": EMAIL, "password": PASSWORD})
    assert response.status_code == 400
    assert client.get("/research/").status_code == 302


def test_login_with_wrong_password_or_unknown_email(client, researcher):
    for email, password in ((EMAIL, "wrong-password-1"), ("nobody@example.org", PASSWORD)):
        response = log_in(client, email, password)
        assert response.status_code == 401
        assert "Wrong e-mail or password." in response.get_data(as_text=True)
    assert client.get("/research/").status_code == 302


def test_login_then_dashboard_then_logout(client, researcher):
    response = log_in(client, EMAIL.upper(), PASSWORD)  # e-mail is case-insensitive
    assert response.status_code == 302
    assert response.headers["Location"] == "/research/"
    page = client.get("/research/")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    for link in (
        "/research/export/annotations.jsonl",
        "/research/export/annotations.csv",
        "/research/export/sessions.csv",
        "/research/rounds",
    ):
        assert f'href="{link}"' in html
    assert db.session.get(Researcher, researcher.id).last_login_at is not None

    # Logout is a POST with the CSRF token: a plain GET or a token-less POST does nothing.
    assert client.get("/research/logout").status_code == 405
    assert client.post("/research/logout").status_code == 400
    assert client.get("/research/").status_code == 200
    token = csrf_token(client, "/research/")
    response = client.post("/research/logout", data={"csrf_token": token})
    assert response.status_code == 302
    assert response.headers["Location"] == "/research/login"
    assert client.get("/research/").status_code == 302


@pytest.mark.parametrize(
    ("next_url", "expected"),
    [
        ("/research/study", "/research/study"),
        ("https://evil.example/", "/research/"),
        ("//evil.example/", "/research/"),
        ("/\\evil.example", "/research/"),
    ],
)
def test_login_follows_only_local_next(client, researcher, next_url, expected):
    response = log_in(client, next_url=next_url)
    assert response.status_code == 302
    assert response.headers["Location"] == expected


def test_safe_next_rules():
    assert safe_next("/research/?page=2") == "/research/?page=2"
    for bad in (None, "", "research/", "//x.org", "/\\x.org", "http://x.org/", "/a\nb", "/" * 3000):
        assert safe_next(bad) is None


def test_login_is_rate_limited(client, researcher):
    token = csrf_token(client)
    statuses = [
        client.post(
            "/research/login",
            data={"email": EMAIL, "password": "wrong-password-1", "csrf_token": token},
        ).status_code
        for _ in range(11)
    ]
    assert statuses[:10] == [401] * 10
    assert statuses[10] == 429
    # Viewing the form is not limited.
    assert client.get("/research/login").status_code == 200


# --- flask create-researcher -------------------------------------------------------------


def stored(email: str) -> Researcher | None:
    db.session.expire_all()
    return db.session.scalars(db.select(Researcher).filter_by(email=email)).first()


def test_create_researcher_from_stdin(runner):
    result = runner.invoke(
        args=["create-researcher", "New@Example.org", "--password-stdin"],
        input="a-long-password\n",
    )
    assert result.exit_code == 0, result.output
    assert "Created researcher new@example.org" in result.output
    account = stored("new@example.org")
    assert account is not None
    assert account.password_hash != "a-long-password"
    assert check_password_hash(account.password_hash, "a-long-password")


def test_create_researcher_prompts_twice(runner):
    result = runner.invoke(
        args=["create-researcher", "p@example.org"], input="a-long-password\na-long-password\n"
    )
    assert result.exit_code == 0, result.output
    assert "Repeat the password" in result.output
    assert check_password_hash(stored("p@example.org").password_hash, "a-long-password")


def test_create_researcher_refuses_mismatch_short_password_and_bad_email(runner):
    mismatch = runner.invoke(
        args=["create-researcher", "m@example.org"], input="a-long-password\nanother-one-1\n"
    )
    assert mismatch.exit_code != 0
    assert "do not match" in mismatch.output
    short = runner.invoke(
        args=["create-researcher", "s@example.org", "--password-stdin"], input="short\n"
    )
    assert short.exit_code == 1
    assert "at least 10 characters" in short.output
    bad = runner.invoke(
        args=["create-researcher", "not-an-email", "--password-stdin"], input="a-long-password\n"
    )
    assert bad.exit_code == 2
    assert "not an e-mail address" in bad.output
    assert stored("m@example.org") is None
    assert stored("s@example.org") is None


def test_create_researcher_existing_email_and_reset(runner, researcher):
    again = runner.invoke(
        args=["create-researcher", EMAIL, "--password-stdin"], input="another-password\n"
    )
    assert again.exit_code == 1
    assert "already exists" in again.output
    assert check_password_hash(stored(EMAIL).password_hash, PASSWORD)

    reset = runner.invoke(
        args=["create-researcher", EMAIL, "--password-stdin", "--reset"],
        input="another-password\n",
    )
    assert reset.exit_code == 0, reset.output
    assert check_password_hash(stored(EMAIL).password_hash, "another-password")

    unknown = runner.invoke(
        args=["create-researcher", "ghost@example.org", "--password-stdin", "--reset"],
        input="another-password\n",
    )
    assert unknown.exit_code == 1
    assert "nothing to reset" in unknown.output


def test_create_researcher_has_help(runner):
    result = runner.invoke(args=["create-researcher", "--help"])
    assert result.exit_code == 0
    assert "--password-stdin" in result.output
    assert "--reset" in result.output
