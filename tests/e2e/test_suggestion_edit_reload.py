"""In Chromium: an Edit of a model suggestion survives a reload (issue 27, point 3). The
draft kept in localStorage names the suggestion being edited, so the Add after the reload
stores `origin: suggestion-edited` with its `suggestion_id`, and the suggestion is decided
(before, the draft came back without it: Add stored `origin: worker` and the suggestion
stayed undecided)."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from app.exports.record import ExportFilter, iter_annotation_records
from app.suggestions.records import iter_suggestion_records
from tests.support.annotate_page import select_span
from tests.support.suggestions import BOOK, FIRST, serve_with_suggestions, summary_paragraphs

PARAGRAPHS = summary_paragraphs()
SUGGESTED = FIRST
EDITED_SPAN = "Anderson accepts a promotion"


@pytest.fixture
def live(live_app, tmp_path):
    return serve_with_suggestions(live_app, tmp_path)


def test_an_edit_reloaded_mid_way_is_still_an_edit_of_the_suggestion(page: Page, live):
    page.goto(f"{live.url}/annotate/{BOOK}?annotator=worker-1")
    card = page.locator(".js-suggestion").filter(has_text=SUGGESTED)
    card.get_by_role("button", name="Edit").click()
    start = PARAGRAPHS[0].index(EDITED_SPAN)
    select_span(page, 0, PARAGRAPHS[0], start, start + len(EDITED_SPAN))
    span_box = page.get_by_role("textbox", name="Selected span")
    expect(span_box).to_have_value(EDITED_SPAN)
    page.get_by_role("button", name="Salience", exact=True).click()

    page.reload()
    expect(span_box).to_have_value(EDITED_SPAN)
    card = page.locator(".js-suggestion").filter(has_text=SUGGESTED)
    expect(card).to_contain_text("Editing")  # the card still says what the form is
    page.get_by_role("button", name="Add", exact=True).click()
    expect(card).to_contain_text("Edited")
    expect(page.get_by_role("status")).to_have_text("Saved")

    with live.app.app_context():
        records = list(iter_annotation_records(ExportFilter()))
        suggestions = {r["span"]["text"]: r for r in iter_suggestion_records()}
    assert [(r["origin"], r["span"]["text"], r["category"]) for r in records] == [
        ("suggestion-edited", EDITED_SPAN, "salience")
    ]
    assert records[0]["suggestion_id"] == suggestions[SUGGESTED]["suggestion_id"]
    assert [d["decision"] for d in suggestions[SUGGESTED]["decisions"]] == ["edited"]
