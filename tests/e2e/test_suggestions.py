"""Model suggestions in Chromium (issue 18): BooookScore's sample summary with GPT-4's
annotations imported as suggestions; a worker accepts one, rejects one, edits one (real
mouse selection) and adds one of their own, reloading in between; the exports hold exactly
those decisions, with their origins and exact offsets."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import Page, expect

from app.exports.record import ExportFilter, iter_annotation_records
from app.suggestions.records import iter_suggestion_records
from tests.support.annotate_page import select_span, wait_for_value
from tests.support.axe import violations
from tests.support.suggestions import (
    BOOK,
    FIRST,
    SHIFT,
    SHIFT_START,
    serve_with_suggestions,
    summary_paragraphs,
)

PARAGRAPHS = summary_paragraphs()
ACCEPTED, EDITED, EDITED_SPAN = FIRST, SHIFT, SHIFT_START


@pytest.fixture
def live(live_app, tmp_path):
    """The app with suggestions shown, the summary and its GPT-4 suggestions imported."""
    return serve_with_suggestions(live_app, tmp_path)


def _card(page: Page, text: str):
    return page.locator(".js-suggestion").filter(has_text=text)


def _saved(page: Page) -> None:
    expect(page.get_by_role("status")).to_have_text("Saved")


def test_accept_reject_edit_and_own_then_export(page: Page, live):
    page.goto(f"{live.url}/annotate/{BOOK}?annotator=worker-1")
    suggestions = page.get_by_role("region", name="Suggestions for this paragraph")
    expect(suggestions.locator(".js-suggestion")).to_have_count(2)
    first = _card(page, ACCEPTED)
    expect(first).to_contain_text("Suggested")
    expect(first).to_contain_text("Entity omission")
    expect(first).to_contain_text("What is Dr. Snow's full name?")
    # Dashed outlines in the Current Paragraph, text unchanged.
    current = page.get_by_role("region", name="Current Paragraph").locator("[data-paragraph]")
    expect(current.locator(".hl-suggestion").first).to_be_visible()
    assert current.text_content() == PARAGRAPHS[0]
    seen = {"suggestions shown": violations(page)}

    # Moving on with undecided suggestions: refused, and the page says why.
    page.get_by_role("button", name="No more errors. Go to next paragraph").click()
    expect(page.locator(".js-hint")).to_contain_text("Decide on every suggestion")
    expect(page.locator(".js-progress")).to_have_text("Paragraph 1 of 16")

    # Accept from the keyboard.
    first.get_by_role("button", name="Accept").focus()
    page.keyboard.press("Enter")
    expect(first).to_contain_text("Accepted")
    _saved(page)
    page.reload()
    expect(_card(page, ACCEPTED)).to_contain_text("Accepted")

    snow = _card(page, "Snow.")
    snow.get_by_role("button", name="Reject").click()
    expect(snow).to_contain_text("Rejected")
    _saved(page)
    page.reload()
    expect(_card(page, "Snow.")).to_contain_text("Rejected")
    expect(page.locator(".hl-suggestion")).to_have_count(0)  # nothing left undecided

    page.get_by_role("button", name="No more errors. Go to next paragraph").click()
    expect(page.locator(".js-progress")).to_have_text("Paragraph 2 of 16")
    expect(suggestions.locator(".js-suggestion")).to_have_count(3)

    # Edit: the suggestion goes into the steps; a shorter span with the mouse, another type.
    edited = _card(page, EDITED)
    edited.get_by_role("button", name="Edit").click()
    expect(page.get_by_role("textbox", name="Selected span")).to_have_value(EDITED)
    start = PARAGRAPHS[1].index(EDITED_SPAN)
    select_span(page, 1, PARAGRAPHS[1], start, start + len(EDITED_SPAN))
    expect(page.get_by_role("textbox", name="Selected span")).to_have_value(EDITED_SPAN)
    page.get_by_role("button", name="Salience", exact=True).click()
    seen["editing a suggestion"] = violations(page)
    page.get_by_role("button", name="Add", exact=True).click()
    expect(edited).to_contain_text("Edited")
    _saved(page)
    page.reload()
    expect(_card(page, EDITED)).to_contain_text("Edited")

    # One of the worker's own.
    own = PARAGRAPHS[1].index("Dr. Vincent")
    select_span(page, 1, PARAGRAPHS[1], own, own + len("Dr. Vincent"))
    page.get_by_role("button", name="Entity omission", exact=True).click()
    page.get_by_role("textbox", name="Your question: what is confusing here?").fill("Who is he?")
    page.get_by_role("button", name="Add", exact=True).click()
    _saved(page)
    # Inside the undecided "In therapy with Dr. Vincent, ..." suggestion: the worker's
    # highlight keeps its colour within the suggestion's dashed outline.
    both = page.locator('[data-paragraph="1"] mark.hl-annotation.hl-suggestion')
    expect(both).to_have_text("Dr. Vincent")
    page.reload()
    wait_for_value(page, "document.querySelectorAll('.js-annotation-row').length", 3)
    seen["after reload"] = violations(page)
    assert not any(seen.values()), seen

    with live.app.app_context():
        records = list(iter_annotation_records(ExportFilter()))
        suggestion_records = list(iter_suggestion_records())
    got = sorted(
        (
            r["origin"],
            r["span"]["paragraph_id"],
            r["span"]["start"],
            r["span"]["end"],
            r["category"],
        )
        for r in records
    )
    accepted_start = PARAGRAPHS[0].index(ACCEPTED)
    assert got == sorted(
        [
            (
                "suggestion-accepted",
                0,
                accepted_start,
                accepted_start + len(ACCEPTED),
                "entity-omission",
            ),
            ("suggestion-edited", 1, start, start + len(EDITED_SPAN), "salience"),
            ("worker", 1, own, own + len("Dr. Vincent"), "entity-omission"),
        ]
    )
    for record in records:
        text = PARAGRAPHS[record["span"]["paragraph_id"]]
        assert text[record["span"]["start"] : record["span"]["end"]] == record["span"]["text"]
    by_origin = {r["origin"]: r for r in records}
    assert by_origin["worker"]["suggestion_id"] is None
    decided = {
        r["span"]["text"]: [d["decision"] for d in r["decisions"]]
        for r in suggestion_records
        if r["decisions"]
    }
    assert decided == {ACCEPTED: ["accepted"], "Snow.": ["rejected"], EDITED: ["edited"]}
    ids = {r["span"]["text"]: r["suggestion_id"] for r in suggestion_records}
    assert by_origin["suggestion-accepted"]["suggestion_id"] == ids[ACCEPTED]
    assert by_origin["suggestion-edited"]["suggestion_id"] == ids[EDITED]
    assert json.dumps(suggestion_records)  # JSON-able as exported


def test_none_arm_sees_no_suggestions(page: Page, live_app, tmp_path):
    server = serve_with_suggestions(live_app, tmp_path, "suggestions: none")
    page.goto(f"{server.url}/annotate/{BOOK}?annotator=worker-2")
    expect(page.locator(".js-progress")).to_have_text("Paragraph 1 of 16")
    expect(page.locator(".js-suggestions")).to_be_hidden()
    expect(page.locator(".hl-suggestion")).to_have_count(0)
    page.get_by_role("button", name="No more errors. Go to next paragraph").click()
    expect(page.locator(".js-progress")).to_have_text("Paragraph 2 of 16")


def test_decisions_made_offline_are_sent_once_when_back(page: Page, live):
    page.goto(f"{live.url}/annotate/{BOOK}?annotator=worker-3")
    expect(page.locator(".js-suggestion")).to_have_count(2)
    status = page.get_by_role("status")
    page.context.set_offline(True)
    _card(page, ACCEPTED).get_by_role("button", name="Accept").click()
    _card(page, "Snow.").get_by_role("button", name="Reject").click()
    expect(status).to_have_text("Offline — 2 changes waiting")
    page.context.set_offline(False)
    expect(status).to_have_text("Saved", timeout=15_000)
    page.reload()
    expect(_card(page, ACCEPTED)).to_contain_text("Accepted")
    expect(_card(page, "Snow.")).to_contain_text("Rejected")
    with live.app.app_context():
        decided = {
            r["span"]["text"]: [d["decision"] for d in r["decisions"]]
            for r in iter_suggestion_records()
            if r["decisions"]
        }
    assert decided == {ACCEPTED: ["accepted"], "Snow.": ["rejected"]}
