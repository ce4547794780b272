"""The console's studies in Chromium (issue 30; docs/studies.md): a researcher creates a
study from the Studies page, opens it and closes it with the owner's buttons, and copies
its workers' link with the keyboard alone; the list and the overview are axe-clean and fit
the screen from 360 px to 1280 px."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from tests.support.annotate_page import resize
from tests.support.axe import violations
from tests.support.research import horizontal_overflow
from tests.support.research_console import log_in

SCREENSHOTS = "/tmp"
WIDTHS = (360, 390, 768, 1280)


def _fits_and_is_clean(page: Page, name: str) -> None:
    for width in WIDTHS:
        resize(page, width, 900)
        assert horizontal_overflow(page) == 0, (name, width)
        assert violations(page) == [], (name, width)
        if width != 360:
            page.screenshot(path=f"{SCREENSHOTS}/{name}-{width}.png", full_page=True)


def test_create_open_close_and_copy_the_link_by_keyboard(console, page: Page, context):
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=console.url)
    log_in(page, console.url)
    nav = page.get_by_role("navigation", name="Research console")
    nav.get_by_role("link", name="Studies").click()
    expect(page.get_by_role("heading", name="Studies", exact=True)).to_be_visible()
    expect(page.get_by_role("row", name=re.compile(r"^default"))).to_contain_text("editor")

    page.get_by_label("Slug").fill("e2e-pilot")
    page.get_by_label("Title").fill("Pilot in the browser")
    page.get_by_role("button", name="Create study").click()
    expect(page.get_by_role("heading", name="Pilot in the browser", level=1)).to_be_visible()
    expect(page).to_have_url(f"{console.url}/research/studies/e2e-pilot/")
    expect(page.get_by_role("heading", name="Status: draft")).to_be_visible()
    _fits_and_is_clean(page, "study-overview")

    page.get_by_role("button", name="Open the study").click()
    expect(page.get_by_role("heading", name="Status: open")).to_be_visible()
    page.get_by_role("button", name="Close the study").click()
    expect(page.get_by_role("heading", name="Status: closed")).to_be_visible()
    expect(page.get_by_role("status").filter(has_text="is closed")).to_be_visible()

    # The workers' link, copied with the keyboard: Tab from its field to its button.
    link = page.get_by_label("Entry link of e2e-pilot")
    expect(link).to_have_value(f"{console.url}/study/e2e-pilot/start")
    link.focus()
    page.keyboard.press("Tab")
    button = page.get_by_role("button", name="Copy Entry link of e2e-pilot")
    expect(button).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.get_by_role("status").filter(has_text="copied")).to_have_text(
        "Entry link of e2e-pilot copied to the clipboard."
    )
    assert page.evaluate("navigator.clipboard.readText()") == f"{console.url}/study/e2e-pilot/start"

    # The study's console pages say which study they show, and stay in it.
    page.get_by_role("link", name="Dashboard", exact=True).first.click()
    expect(page).to_have_url(f"{console.url}/research/studies/e2e-pilot/dashboard")
    expect(page.get_by_text("Pilot in the browser").first).to_be_visible()

    nav.get_by_role("link", name="Studies").click()
    expect(page.get_by_role("row", name=re.compile(r"^e2e-pilot"))).to_contain_text("closed")
    _fits_and_is_clean(page, "studies")
