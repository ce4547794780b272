"""Researcher login is limited per account, not only per address: after 10 failed logins
of one account in 15 minutes, from any number of addresses, that account answers 429 for
15 minutes, right password or not; other accounts are not affected. The addresses come
from X-Forwarded-For behind one trusted proxy (TRUSTED_PROXIES=1), as behind nginx."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from tests.support.apps import app_factory, make_test_config
from tests.support.login import add_accounts, login_from

EMAIL = "researcher@example.org"
OTHER = "colleague@example.org"
PASSWORD = "correct-horse-battery"


@pytest.fixture
def make_app(database_uri) -> Iterator:
    def config(**overrides):
        return make_test_config(database_uri, TRUSTED_PROXIES=1, **overrides)

    yield from app_factory(config)


def test_ten_failures_from_ten_addresses_lock_the_account(make_app):
    app = make_app()
    add_accounts(app, (EMAIL, OTHER), PASSWORD)
    for n in range(10):
        response = login_from(app, f"203.0.113.{n + 1}", EMAIL.upper(), f"guess-{n}")
        assert response.status_code == 401, n
    # The eleventh attempt, from yet another address, with the right password.
    response = login_from(app, "198.51.100.7", EMAIL, PASSWORD)
    assert response.status_code == 429
    assert 14 * 60 < int(response.headers["Retry-After"]) <= 15 * 60
    assert "Too many attempts" in response.get_data(as_text=True)
    # Per account: another researcher logs in from the same addresses.
    assert login_from(app, "203.0.113.1", OTHER, PASSWORD).status_code == 302
    assert login_from(app, "198.51.100.7", OTHER, "wrong").status_code == 401


def test_an_unknown_email_locks_the_same_way(make_app):
    app = make_app()
    statuses = [
        login_from(app, f"192.0.2.{n}", "nobody@example.org", "x").status_code for n in range(11)
    ]
    assert statuses == [401] * 10 + [429]


def test_the_lock_ends_and_a_success_starts_the_count_afresh(make_app):
    app = make_app(LOGIN_ACCOUNT_LOCK_MINUTES=1 / 60)  # one second
    add_accounts(app, (EMAIL, OTHER), PASSWORD)
    for n in range(9):
        assert login_from(app, f"203.0.113.{n + 1}", EMAIL, "wrong").status_code == 401
    assert login_from(app, "203.0.113.50", EMAIL, PASSWORD).status_code == 302
    for n in range(9):  # nine more failures: the count started again at the success
        assert login_from(app, f"203.0.113.{n + 100}", EMAIL, "wrong").status_code == 401
    assert login_from(app, "203.0.113.51", EMAIL, "wrong").status_code == 401  # the tenth
    assert login_from(app, "203.0.113.52", EMAIL, PASSWORD).status_code == 429
    time.sleep(1.2)
    assert login_from(app, "203.0.113.53", EMAIL, PASSWORD).status_code == 302
