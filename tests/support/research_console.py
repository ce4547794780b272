"""The researcher console in a browser: the test account and logging in with it."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

EMAIL = "lead@example.org"
PASSWORD = "a-long-enough-password"


def log_in(page: Page, base: str) -> None:
    page.goto(f"{base}/research/")
    expect(page).to_have_url(re.compile(r"/research/login\?next=/research/"))
    page.get_by_label("E-mail").fill(EMAIL)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Study dashboard")).to_be_visible()
