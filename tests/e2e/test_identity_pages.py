"""In Chromium: the pages of issue 26 points 1-2 and issue 27 point 6. A placeholder link,
another study's link and another submission of a bound participant each get a page that
says what happened and what to do, axe-clean and readable from 390 px; the researcher
allows the conflict from the dashboard by keyboard. Screenshots in SCREENSHOTS."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from app.core.extensions import db
from tests.support.accounts import add_account
from tests.support.axe import violations
from tests.support.identity import CONTACT, import_study, study_taxonomy
from tests.support.live_server import LiveServer
from tests.support.research_console import EMAIL, PASSWORD, log_in

SCREENSHOTS = Path(os.environ.get("SCREENSHOTS") or tempfile.mkdtemp(prefix="falte-identity-"))
VICTIM = "PROLIFIC_PID=victim-pid&STUDY_ID=study-1&SESSION_ID=real-submission"
JUNK = "PROLIFIC_PID=victim-pid&STUDY_ID=study-1&SESSION_ID=junk-submission"
TEMPLATE = "PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"


@pytest.fixture
def study(live_app, tmp_path) -> LiveServer:
    """A Prolific study (consent, training, codes, its Prolific id and contact) with a
    researcher account, on SQLite."""
    live = live_app(taxonomy=study_taxonomy(tmp_path))
    with live.app.app_context():
        import_study(live.app, tmp_path)
        add_account(EMAIL, PASSWORD)
        db.session.commit()
        db.session.remove()
    return live


def look_at(page: Page, name: str) -> list[str]:
    """axe's findings, no horizontal scrolling from 390 px, and screenshots."""
    found = violations(page)
    for width, height in ((390, 844), (768, 1024), (1280, 800)):
        page.set_viewport_size({"width": width, "height": height})
        page.screenshot(path=str(SCREENSHOTS / f"{name}-{width}.png"), full_page=True)
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, (name, width, overflow)
    page.set_viewport_size({"width": 1280, "height": 800})
    return found


def test_the_refusal_pages_explain_and_are_accessible(page: Page, study):
    seen = {}
    page.goto(f"{study.url}/start?{TEMPLATE}")
    expect(page.get_by_role("heading", name="This link has not been filled in")).to_be_visible()
    expect(page.get_by_text("PROLIFIC_PID", exact=True)).to_be_visible()
    seen["placeholder"] = look_at(page, "refused-placeholder")

    page.goto(f"{study.url}/start?PROLIFIC_PID=p-9&STUDY_ID=other&SESSION_ID=s-9")
    expect(page.get_by_role("heading", name="This link belongs to another study")).to_be_visible()
    seen["wrong study"] = look_at(page, "refused-wrong-study")

    page.goto(f"{study.url}/start?{VICTIM}")
    expect(page).to_have_url(f"{study.url}/s/" + page.url.split("/s/", 1)[1])
    other = page.context.browser.new_page()
    other.goto(f"{study.url}/start?{JUNK}")
    heading = "Your Prolific ID already has a submission in this study"
    expect(other.get_by_role("heading", name=heading)).to_be_visible()
    expect(other.get_by_role("link", name=CONTACT)).to_have_attribute("href", f"mailto:{CONTACT}")
    seen["conflict"] = look_at(other, "refused-conflict")
    other.close()
    assert not any(seen.values()), seen


def test_a_researcher_allows_a_conflict_from_the_dashboard(page: Page, study):
    page.goto(f"{study.url}/start?{VICTIM}")
    refused = page.context.browser.new_page()
    refused.goto(f"{study.url}/start?{JUNK}")
    expect(refused.get_by_role("heading", name="Your Prolific ID already has")).to_be_visible()
    log_in(page, study.url)
    section = page.get_by_role("region", name="Identity conflicts")
    expect(section).to_contain_text("real-submission")
    expect(section).to_contain_text("junk-submission")
    seen = {"dashboard": look_at(page, "dashboard-conflicts")}
    allow = section.get_by_role("button", name="Allow submission junk-submission")
    allow.focus()
    page.keyboard.press("Enter")
    expect(page.get_by_role("status")).to_contain_text("Allowed: submission junk-submission")
    expect(section).to_contain_text("Allowed")
    refused.goto(f"{study.url}/start?{JUNK}")
    expect(refused.get_by_role("heading", name="Consent to take part")).to_be_visible()
    refused.close()
    assert not any(seen.values()), seen
