"""Browser helpers for the researcher console: an account, a login, a page-width check."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from app.core.extensions import db
from tests.support.accounts import add_account
from tests.support.annotate_page import resize

EMAIL = "lead@example.org"
PASSWORD = "a-long-enough-password"
WIDTHS = (360, 390, 768, 1280)


def add_researcher(live) -> None:
    """A researcher account on the live app: EMAIL / PASSWORD."""
    with live.app.app_context():
        add_account(EMAIL, PASSWORD)
        db.session.commit()
        db.session.remove()


def log_in(page: Page, base: str) -> None:
    """Log in through the form; ends on the dashboard."""
    page.goto(f"{base}/research/login")
    page.get_by_label("E-mail").fill(EMAIL)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page).to_have_url(re.compile(r"/research/$"))


def horizontal_overflow(page: Page) -> int:
    """How many CSS pixels the page is wider than the window (0: no sideways scroll)."""
    return page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )


def overflow_by_width(page: Page, height: int = 800) -> dict[int, int]:
    """horizontal_overflow at each of WIDTHS (the page is resized, not reloaded)."""
    found = {}
    for width in WIDTHS:
        resize(page, width, height)
        found[width] = horizontal_overflow(page)
    return found
