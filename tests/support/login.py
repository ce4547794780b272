"""Researcher logins through the form from a given client address (X-Forwarded-For, for
apps behind one trusted proxy: TRUSTED_PROXIES=1)."""

from __future__ import annotations

import re

from flask import Flask

from app.core.extensions import db
from tests.support.accounts import add_account


def add_accounts(app: Flask, emails: tuple[str, ...], password: str) -> None:
    """Researcher accounts with this password."""
    with app.app_context():
        for email in emails:
            add_account(email, password)
        db.session.commit()
        db.session.remove()


def login_from(app: Flask, address: str, email: str, password: str):
    """One login attempt from a new browser at `address`; the response."""
    client = app.test_client()
    headers = {"X-Forwarded-For": address}
    with app.app_context():
        page = client.get("/research/login", headers=headers).get_data(as_text=True)
    csrf = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', page)[1]
    form = {"email": email, "password": password, "csrf_token": csrf}
    with app.app_context():
        return client.post("/research/login", data=form, headers=headers)
