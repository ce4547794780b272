"""Two browser tabs on one session (same browser, so they share the offline queue in
localStorage): annotations made in either tab are all stored once, removals in one tab
hold, and a reload of either tab shows the same state."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.support.annotate_page import open_task, seed_document, select_span, stored_annotations

PARAGRAPHS = ("Zoë 🚢 met Łukasz at the harbour, and Łukasz waved.", "The ship left at noon.")


def add(page: Page, word: str, occurrence: int = 0) -> None:
    start = PARAGRAPHS[0].index(word)
    for _ in range(occurrence):
        start = PARAGRAPHS[0].index(word, start + 1)
    select_span(page, 0, PARAGRAPHS[0], start, start + len(word))
    page.get_by_role("button", name="Ungrammatical", exact=True).click()
    page.get_by_role("button", name="Add", exact=True).click()
    expect(page.get_by_role("status")).to_have_text("Saved")


def test_two_tabs_lose_and_duplicate_nothing(page: Page, live_server):
    seed_document(live_server, "tabs", PARAGRAPHS)
    open_task(page, live_server, "tabs", annotator="two-tabs")
    second = page.context.new_page()
    open_task(second, live_server, "tabs", annotator="two-tabs")

    add(page, "Zoë")
    add(second, "Łukasz")
    add(page, "harbour")
    add(second, "Łukasz", occurrence=1)

    rows = [(a.span_start, a.span_text) for a in stored_annotations(live_server)]
    assert len(rows) == 4 and len(set(rows)) == 4, rows

    # A removal in one tab holds even though the other tab never saw it.
    second.reload()
    expect(second.locator(".js-annotation-row")).to_have_count(4)
    rows = second.locator(".js-annotation-row")
    harbour_row = rows.filter(has=second.locator("strong", has_text="harbour"))
    harbour_row.get_by_role("button", name="Remove").click()
    harbour_row.get_by_role("button", name="Yes, remove").click()
    expect(rows).to_have_count(3)
    expect(second.get_by_role("status")).to_have_text("Saved")

    page.reload()
    second.reload()
    for tab in (page, second):
        expect(tab.locator(".js-annotation-row")).to_have_count(3)
    stored = stored_annotations(live_server)
    assert len(stored) == 4
    assert [a.span_text for a in stored if a.deleted_at is not None] == ["harbour"]
    second.close()
