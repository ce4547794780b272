"""The researcher console in Chromium: login, dashboard with its charts, study links, logout."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from app.taxonomy import current_taxonomy
from tests.support.research_console import EMAIL, log_in

SCREENSHOTS = "/tmp"


def test_login_dashboard_and_chart(console, page: Page):
    log_in(page, console.url)
    chart = page.get_by_role("img", name="Annotations per error category (all sessions)")
    expect(chart).to_be_visible()
    box = chart.bounding_box()
    assert box and box["width"] > 200 and box["height"] > 100
    # Each category is a bar with a real width, coloured by the taxonomy.
    bars = chart.locator("rect.chart__bar")
    expect(bars).to_have_count(len(current_taxonomy_keys(console)))
    widths = [float(bars.nth(i).get_attribute("width")) for i in range(bars.count())]
    assert max(widths) > 100
    expect(page.get_by_role("img", name=re.compile("Errors per sentence"))).to_be_visible()
    documents = page.get_by_role("region", name="Documents")
    expect(documents.get_by_role("link", name="doc-00012")).to_be_visible()
    page.get_by_text("Downloads").click()  # a <details> menu in the header
    expect(page.get_by_role("link", name="annotations.jsonl")).to_have_attribute(
        "href", "/research/export/annotations.jsonl"
    )
    page.screenshot(path=f"{SCREENSHOTS}/research-dashboard.png", full_page=True)

    documents.get_by_role("link", name="doc-00001").click()
    expect(page.get_by_role("heading", name=re.compile("doc-00001"))).to_be_visible()
    expect(page.get_by_role("img", name=re.compile("in doc-00001"))).to_be_visible()
    page.screenshot(path=f"{SCREENSHOTS}/research-document.png", full_page=True)


def current_taxonomy_keys(live) -> tuple[str, ...]:
    with live.app.app_context():
        return current_taxonomy().keys


def test_study_links_copy_and_logout(console, page: Page, context):
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=console.url)
    log_in(page, console.url)
    nav = page.get_by_role("navigation", name="Research console")
    nav.get_by_role("link", name="Study links").click()
    field = page.get_by_label("Study URL for Prolific")
    expect(field).to_have_value(
        f"{console.url}/start?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}"
        "&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
    )
    page.get_by_role("button", name="Copy Study URL for Prolific").click()
    expect(page.get_by_role("status").filter(has_text="copied")).to_have_text(
        "Study URL for Prolific copied to the clipboard."
    )
    assert page.evaluate("navigator.clipboard.readText()") == field.input_value()
    xml = page.get_by_label("ExternalQuestion XML")
    expect(xml).to_have_value(re.compile(r"<ExternalURL>.*/start</ExternalURL>"))
    page.screenshot(path=f"{SCREENSHOTS}/research-study.png", full_page=True)

    nav.get_by_role("link", name="Taxonomy").click()
    expect(page.get_by_role("button", name=re.compile("New person not introduced"))).to_be_visible()
    page.screenshot(path=f"{SCREENSHOTS}/research-taxonomy.png", full_page=True)

    page.get_by_role("button", name="Log out").click()
    expect(page.get_by_role("heading", name="Researcher login")).to_be_visible()
    page.goto(f"{console.url}/research/study")
    expect(page).to_have_url(re.compile(r"/research/login"))
    page.screenshot(path=f"{SCREENSHOTS}/research-login.png", full_page=True)


def test_wrong_password_is_shown_in_the_form(console, page: Page):
    page.goto(f"{console.url}/research/login")
    page.get_by_label("E-mail").fill(EMAIL)
    page.get_by_label("Password").fill("not-the-password")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_text("Wrong e-mail or password.")).to_be_visible()
    expect(page.get_by_label("Password")).to_have_attribute("aria-invalid", "true")
