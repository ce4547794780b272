"""Adjudication in Chromium: three annotators' sessions adjudicated with mouse and keyboard
into a gold set whose export equals the decisions; reload resumes; axe; 390 px wide."""

from __future__ import annotations

import re

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Page, expect

from app.adjudication.gold import iter_gold_records
from app.core.extensions import db
from tests.support.accounts import add_account
from tests.support.adjudication import DOC_ID, PARAGRAPHS, seed_adjudication_document
from tests.support.annotate_page import select_span

EMAIL = "adjudicator@example.org"
PASSWORD = "a-long-enough-password"


@pytest.fixture
def adjudication(live_server):
    """A live app with a researcher and a document three annotators submitted."""
    with live_server.app.app_context():
        add_account(EMAIL, PASSWORD)
        document = seed_adjudication_document()
        live_server.document_pk = document.id
        db.session.remove()
    return live_server


def violations(page: Page) -> list[str]:
    """axe-core's violations on the page as it is now."""
    results = Axe().run(page)
    return [
        f"{v['id']} ({v['impact']}): {v['help']} {[' '.join(n['target']) for n in v['nodes'][:3]]}"
        for v in results.response["violations"]
    ]


def log_in(page: Page, live) -> None:
    page.goto(f"{live.url}/research/documents/{DOC_ID}")
    page.get_by_label("E-mail").fill(EMAIL)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", level=1)).to_contain_text(DOC_ID)


def saved(page: Page, current: int) -> None:
    expect(page.get_by_role("status")).to_contain_text(f"All decisions saved ({current} current")


def candidate(page: Page, name: str):
    return page.get_by_role("article", name=re.compile(name))


def test_adjudicate_with_mouse_and_keyboard_then_reload(adjudication, page: Page):
    log_in(page, adjudication)
    page.get_by_role("link", name="Adjudicate this document").click()
    saved(page, 0)
    # Each annotator has a lane with their spans.
    expect(page.get_by_role("list", name="Annotators").get_by_role("listitem")).to_have_count(3)
    new_person = candidate(page, "New person not introduced")
    expect(new_person.get_by_text("direct:ann-1", exact=True)).to_be_visible()
    expect(new_person).to_contain_text("comment: Who is Bob?")
    assert not violations(page)

    # Mouse: merge the new-person candidate with ann-3's boundary as another category.
    new_person.get_by_role("button", name="Merge…").click()
    new_person.get_by_label("direct:ann-3's span: “Bob at”").check()
    new_person.get_by_label("Category").select_option(label="Unclear coreference")
    assert not violations(page)  # with the merge form open
    new_person.get_by_role("button", name="Save merge").click()
    saved(page, 1)
    expect(candidate(page, "New person not introduced")).to_contain_text(
        f"Merged: “Bob at” as Unclear coreference (by {EMAIL})"
    )

    # Keyboard: accept the repetition with Enter, reject missing-info with Space.
    candidate(page, "Repetition").get_by_role("button", name="Accept").focus()
    page.keyboard.press("Enter")
    saved(page, 2)
    expect(page.get_by_role("button", name="Accept").nth(2)).to_be_focused()
    candidate(page, "Missing information").get_by_role("button", name="Reject").focus()
    page.keyboard.press("Space")
    saved(page, 3)
    expect(candidate(page, "Missing information")).to_contain_text("Rejected")

    # Mouse selection of an own span across an emoji (code points, not UTF-16 units).
    start = PARAGRAPHS[1].index("rained")
    end = PARAGRAPHS[1].index(" all day") + len(" all day")
    page.locator('[data-paragraph="1"]').scroll_into_view_if_needed()
    select_span(page, 1, PARAGRAPHS[1], start, end)
    own = page.get_by_role("group", name="Add my own span in paragraph 2")
    expect(own.get_by_label("Start", exact=True)).to_have_value(str(start))
    expect(own.get_by_label("End", exact=True)).to_have_value(str(end))
    own.get_by_label("Category").select_option(label="Abrupt scene transition")
    own.get_by_role("button", name="Save my span").click()
    saved(page, 4)

    # Keyboard only: an own span typed in paragraph 1 (start/end fields).
    own_first = page.get_by_role("group", name="Add my own span in paragraph 1")
    own_first.get_by_label("Start", exact=True).fill("0")
    own_first.get_by_label("End", exact=True).fill("4")
    expect(own_first).to_contain_text("Span: “Anna”")
    own_first.get_by_label("End", exact=True).press("Enter")  # submits the form
    saved(page, 5)

    page.reload()
    saved(page, 5)
    expect(candidate(page, "New person not introduced: “met Bob”")).to_contain_text(
        "Merged: “Bob at”"
    )
    expect(candidate(page, "Own span, Abrupt scene transition: “rained 🌧 all day”")).to_be_visible()
    expect(candidate(page, "Own span, New person not introduced: “Anna”")).to_be_visible()
    assert not violations(page)
    page.screenshot(path="/tmp/adjudicate.png", full_page=True)

    with adjudication.app.app_context():
        records = list(iter_gold_records())
        db.session.remove()
    summary = [(r["category"], r["span"]["text"], r["provenance"]["merged"]) for r in records]
    assert summary == [
        ("new-person", "Anna", False),
        ("unclear-coreference", "Bob at", True),
        ("repetition", "Anna met Bob again", False),
        ("abrupt-transition", "rained 🌧 all day", False),
    ]
    assert records[1]["provenance"]["annotators"] == [
        "direct:ann-1",
        "direct:ann-2",
        "direct:ann-3",
    ]


def test_no_horizontal_scroll_at_390_px(adjudication, page: Page):
    page.set_viewport_size({"width": 390, "height": 800})
    log_in(page, adjudication)
    page.goto(f"{adjudication.url}/research/documents/{DOC_ID}/adjudicate")
    saved(page, 0)
    candidate(page, "New person not introduced").get_by_role("button", name="Merge…").click()
    widths = page.evaluate(
        "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    assert widths[0] <= widths[1], widths
    page.screenshot(path="/tmp/adjudicate-390.png", full_page=True)
    assert not violations(page)


def test_own_paired_span_with_two_mouse_selections(adjudication, page: Page):
    log_in(page, adjudication)
    page.goto(f"{adjudication.url}/research/documents/{DOC_ID}/adjudicate")
    saved(page, 0)
    own = page.get_by_role("group", name="Add my own span in paragraph 2")
    own.get_by_label("Category").select_option(label="Repetition")
    second = own.get_by_role("group", name="Second span (paired categories)")
    expect(second).to_be_visible()
    later = PARAGRAPHS[1].index("the mill")
    page.locator('[data-paragraph="1"]').scroll_into_view_if_needed()
    select_span(page, 1, PARAGRAPHS[1], later, later + len("the mill"))
    second.get_by_label("My next mouse selection is the second span").check()
    earlier = PARAGRAPHS[0].index("the old mill")
    page.locator('[data-paragraph="0"]').scroll_into_view_if_needed()
    select_span(page, 0, PARAGRAPHS[0], earlier, earlier + len("the old mill"), backwards=True)
    expect(second.get_by_label("Second span: paragraph number")).to_have_value("1")
    expect(own).to_contain_text("Span: “the mill”; second span: “the old mill”")
    own.get_by_role("button", name="Save my span").click()
    saved(page, 1)
    with adjudication.app.app_context():
        (record,) = list(iter_gold_records())
        db.session.remove()
    assert record["span"]["text"] == "the mill"
    assert record["paired_span"]["text"] == "the old mill"
