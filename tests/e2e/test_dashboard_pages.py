"""The dashboard's documents table in Chromium (issue 31): pages and sorted columns by
keyboard, axe-clean, and its look at three widths."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from app.core.extensions import db
from app.taxonomy import current_taxonomy
from tests.support.axe import violations
from tests.support.research_console import log_in
from tests.support.synthetic_study import seed_study

SCREENSHOTS = "/tmp"


def test_pages_and_sorts_by_keyboard(console, page: Page):
    with console.app.app_context():  # 12 + 60 documents: two pages of 50
        seed_study(60, 2, 2, categories=current_taxonomy().keys, tag="more-", seed=5)
        db.session.remove()
    log_in(page, console.url)
    documents = page.get_by_role("region", name="Documents")
    pages = documents.get_by_role("navigation", name="Documents pages", exact=True)
    expect(pages.get_by_role("link", name="Page 1")).to_have_attribute("aria-current", "page")
    rows = documents.locator("tbody tr")
    expect(rows).to_have_count(50)
    assert violations(page) == []

    pages.get_by_role("link", name="Next page").focus()
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"/research/\?page=2$"))
    expect(pages.get_by_role("link", name="Page 2")).to_have_attribute("aria-current", "page")
    expect(rows).to_have_count(22)
    expect(documents.get_by_text("Documents 51–72 of 72")).to_be_visible()

    header = documents.get_by_role("columnheader", name=re.compile("^Submitted"))
    expect(header).not_to_have_attribute("aria-sort", re.compile("."))
    header.get_by_role("link").focus()
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"\?sort=submitted$"))  # back to page 1
    expect(header).to_have_attribute("aria-sort", "ascending")
    header.get_by_role("link").focus()
    page.keyboard.press("Enter")
    expect(header).to_have_attribute("aria-sort", "descending")
    expect(page).to_have_url(re.compile(r"\?sort=-submitted$"))
    submitted = [int(t) for t in rows.locator("td:nth-child(3)").all_inner_texts()]
    assert submitted == sorted(submitted, reverse=True)
    assert violations(page) == []

    page.get_by_label("Show").select_option("checks")
    page.get_by_label("Document id contains").fill("doc-0000")
    page.get_by_label("Document id contains").press("Enter")
    expect(rows).to_have_count(1)
    expect(rows.first.get_by_role("link")).to_have_text("doc-00001")
    assert violations(page) == []

    page.goto(f"{console.url}/research/?sort=nonsense")
    expect(page.get_by_text(re.compile("Ignored: sort must be one of"))).to_be_visible()
    page.goto(f"{console.url}/research/?page=2")
    for width in (390, 768, 1280):
        page.set_viewport_size({"width": width, "height": 900})
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, (width, overflow)
        documents.screenshot(path=f"{SCREENSHOTS}/dashboard-documents-{width}.png")
        page.screenshot(path=f"{SCREENSHOTS}/dashboard-{width}.png", full_page=True)
