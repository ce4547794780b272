"""Issue 27's "done when", in Chromium: one whole Prolific study at 1280x800 ends on the
study's own completion code with one session for the SESSION_ID; a phone sees the
desktop notice before consent."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.support.study_day import WORKER, serving_study_day

DESKTOP_NOTICE = "This task needs a desktop or laptop browser with a mouse"


@pytest.fixture
def study(tmp_path, sqlite_template):
    with serving_study_day(tmp_path, sqlite_template) as live:
        yield live


def test_a_phone_sees_the_desktop_notice_before_consent(playwright, browser, study):
    """Issue 27.7: phones found out only after consent and the survey."""
    context = browser.new_context(**playwright.devices["iPhone 13"])
    try:
        phone = context.new_page()
        phone.goto(f"{study.url}/start?{WORKER}")
        expect(phone.get_by_role("heading", name="Consent to take part")).to_be_visible()
        expect(phone.get_by_text(DESKTOP_NOTICE)).to_be_visible()
    finally:
        context.close()


def test_a_desktop_sees_no_notice_on_consent(page: Page, study):
    page.goto(f"{study.url}/start?{WORKER}")
    expect(page.get_by_role("heading", name="Consent to take part")).to_be_visible()
    expect(page.get_by_text(DESKTOP_NOTICE)).to_be_hidden()
