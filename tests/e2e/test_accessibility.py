"""Accessibility: axe-core (the engine browsers' accessibility tools use) finds no
violation on the pages workers, validators and researchers use, in Chromium, in the
states they meet (task open, an annotation being added, submitted, judged, dashboard)."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.support.annotate_page import open_task, seed_document, select_span
from tests.support.axe import violations
from tests.support.research_console import log_in
from tests.support.validator_round import seed_round

PARAGRAPHS = (
    "Zoë met 🚢 Łukasz at the harbour. Zoë smiled.",
    "The ship left at dawn. Łukasz waved at the ship.",
)


def test_the_annotator_page_in_each_state(page: Page, live_server):
    seed_document(live_server, "a11y", PARAGRAPHS)
    open_task(page, live_server, "a11y")
    seen = {"task opened": violations(page)}
    select_span(page, 0, PARAGRAPHS[0], 10, 16)
    expect(page.get_by_role("textbox", name="Selected span")).to_have_value("Łukasz")
    page.get_by_role("button", name="New person not introduced", exact=True).click()
    seen["adding an annotation"] = violations(page)
    page.get_by_role("button", name="Add", exact=True).click()
    expect(page.get_by_role("status")).to_have_text("Saved")
    seen["one annotation"] = violations(page)
    page.get_by_role("button", name="No more errors. Go to next paragraph").click()
    expect(page.locator(".js-progress")).to_have_text("Paragraph 2 of 2")
    seen["second paragraph, first as context"] = violations(page)
    page.get_by_role("button", name="Submit", exact=True).click()
    expect(page.get_by_role("button", name="Yes, submit")).to_be_focused()
    seen["asked to confirm Submit"] = violations(page)
    page.get_by_role("button", name="Yes, submit").click()
    expect(page.locator(".js-completion-code")).not_to_be_empty()
    seen["submitted"] = violations(page)
    token = page.url.rstrip("/").rsplit("/", 1)[-1]
    page.goto(f"{live_server.url}/s/{token}/complete")
    seen["completion page"] = violations(page)
    page.goto(f"{live_server.url}/annotate/a11y?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE")
    seen["MTurk preview"] = violations(page)
    assert not any(seen.values()), seen


@pytest.mark.parametrize(
    "path",
    ["/", "/annotate/no-such-document", "/s/no-such-token", "/start?annotator=a11y&sig=0"],
)
def test_other_worker_pages(page: Page, live_server, path):
    page.goto(f"{live_server.url}{path}")
    assert violations(page) == []


def test_the_validator_page_in_each_state(page: Page, live_server, tmp_path):
    seed_round(live_server, tmp_path)
    page.goto(f"{live_server.url}/validate/blind-1?annotator=a11y")
    progress = page.locator(".js-progress")
    expect(progress).to_have_text("Item 1 of 3")
    seen = {"first item": violations(page)}
    page.get_by_role("button", name="Disagree").click()
    expect(page.get_by_role("alert")).to_be_visible()
    seen["reason missing"] = violations(page)
    for expected in ("Item 1 of 3", "Item 2 of 3", "Item 3 of 3"):
        expect(progress).to_have_text(expected)
        page.get_by_role("button", name="Agree", exact=True).click()
    expect(page.locator(".js-code")).not_to_be_empty()
    seen["done"] = violations(page)
    assert not any(seen.values()), seen


def test_the_researcher_console(console, page: Page):
    page.goto(f"{console.url}/research/login")
    seen = {"login": violations(page)}
    log_in(page, console.url)
    seen["dashboard"] = violations(page)
    for path in (
        "/research/study",
        "/research/study?annotator=a11y",  # signed links shown
        "/research/study?annotator=%01x",  # the name refused
        "/research/taxonomy",
        "/research/rounds",
    ):
        page.goto(f"{console.url}{path}")
        expect(page.get_by_role("heading", level=1)).to_be_visible()
        seen[path] = violations(page)
    page.goto(console.url + "/research/")
    page.get_by_role("link", name="doc-00012").first.click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("doc-00012")
    seen["document page"] = violations(page)
    assert not any(seen.values()), seen
