"""The severity step in Chromium (issue 18 point 4): a worker picks a severity after the
category, by mouse and by keyboard, among those the category offers; axe finds nothing;
a taxonomy without severities shows no such step."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.support.annotate_page import open_task, seed_document, select_span, stored_annotations
from tests.support.axe import violations
from tests.support.live_server import LiveServer
from tests.support.severities import severity_taxonomy

PARAGRAPHS = (
    "Zoë met 🚢 Łukasz at the harbour. Zoë smiled.",
    "The ship left at dawn. Łukasz waved at the ship.",
)


@pytest.fixture
def severity_server(live_app, tmp_path) -> LiveServer:
    """The app with the severity taxonomy (minor 1 / q, major 5 / w; ungrammatical: minor)."""
    live = live_app(taxonomy=severity_taxonomy(tmp_path))
    seed_document(live, "sev", PARAGRAPHS)
    return live


def test_a_worker_picks_a_severity_with_the_mouse(page: Page, severity_server):
    open_task(page, severity_server, "sev")
    step = page.get_by_role("group", name="Choose the severity")
    minor = step.get_by_role("button", name="Minor (1)", exact=True)
    major = step.get_by_role("button", name="Major (5)", exact=True)
    add = page.get_by_role("button", name="Add", exact=True)
    expect(minor).to_be_visible()
    expect(major).to_be_visible()

    select_span(page, 0, PARAGRAPHS[0], 10, 16)
    page.get_by_role("button", name="Ungrammatical", exact=True).click()
    expect(major).to_be_hidden()  # ungrammatical offers only minor
    expect(add).to_be_disabled()  # a severity is still missing
    minor.click()
    expect(minor).to_have_attribute("aria-pressed", "true")
    assert not violations(page)
    add.click()
    expect(page.get_by_role("status")).to_have_text("Saved")
    row = page.locator(".js-annotation-row")
    expect(row).to_contain_text("Severity: Minor")

    # A category offering both: choosing it shows Major again; the chosen one is reset.
    select_span(page, 0, PARAGRAPHS[0], 0, 3)
    page.get_by_role("button", name="New person not introduced", exact=True).click()
    expect(major).to_be_visible()
    expect(minor).to_have_attribute("aria-pressed", "false")
    major.click()
    add.click()
    expect(page.get_by_role("status")).to_have_text("Saved")
    stored = sorted(
        (a.span_text, a.category, a.severity) for a in stored_annotations(severity_server)
    )
    assert stored == [("Zoë", "new-person", "major"), ("Łukasz", "ungrammatical", "minor")]

    page.reload()
    expect(page.locator(".js-annotation-row")).to_have_count(2)
    expect(page.locator(".previous__severity")).to_have_text(["Severity: Major", "Severity: Minor"])
    assert not violations(page)


def test_a_worker_picks_a_severity_by_keyboard(page: Page, severity_server):
    open_task(page, severity_server, "sev")
    current = page.locator(".js-current-body")
    current.focus()
    for key in ["ArrowRight"] * 3 + ["Enter"]:
        page.keyboard.press(key)
    expect(page.get_by_role("textbox", name="Selected span")).to_have_value("Łukasz")
    page.keyboard.press("1")  # New person not introduced
    page.keyboard.press("Enter")  # not complete yet: no severity, nothing is added
    expect(page.locator(".js-annotation-row")).to_have_count(0)
    page.keyboard.press("w")  # Major
    major = page.get_by_role("button", name="Major (5)", exact=True)
    expect(major).to_have_attribute("aria-pressed", "true")
    page.keyboard.press("Enter")
    expect(page.get_by_role("status")).to_have_text("Saved")
    [row] = stored_annotations(severity_server)
    assert (row.span_text, row.category, row.severity) == ("Łukasz", "new-person", "major")

    # Typing the key into the comment is text, not a choice.
    current.focus()
    for key in ["ArrowRight", "Enter", "1", "q"]:
        page.keyboard.press(key)
    minor = page.get_by_role("button", name="Minor (1)", exact=True)
    expect(minor).to_have_attribute("aria-pressed", "true")
    comment = page.get_by_role("textbox", name="Other comments / feedback (optional)")
    comment.fill("")
    comment.press("w")
    expect(comment).to_have_value("w")
    expect(minor).to_have_attribute("aria-pressed", "true")


def test_a_taxonomy_without_severities_has_no_severity_step(page: Page, live_server):
    seed_document(live_server, "plain", PARAGRAPHS)
    open_task(page, live_server, "plain")
    expect(page.get_by_role("group", name="Choose the severity")).to_have_count(0)
    expect(page.locator(".js-severity")).to_have_count(0)
    select_span(page, 0, PARAGRAPHS[0], 10, 16)
    page.get_by_role("button", name="Ungrammatical", exact=True).click()
    page.keyboard.press("w")  # no severity keys: nothing happens
    page.get_by_role("button", name="Add", exact=True).click()
    expect(page.get_by_role("status")).to_have_text("Saved")
    [row] = stored_annotations(live_server)
    assert row.severity is None
    expect(page.locator(".previous__severity")).to_have_count(0)
