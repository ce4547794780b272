"""Nothing a worker does is lost: offline changes wait in the page (and in localStorage)
and reach the server exactly once when the connection is back."""

from __future__ import annotations

import json

from playwright.sync_api import Page, expect

from tests.support.annotate_page import (
    open_task,
    seed_document,
    select_span,
    stored_annotations,
    submit_task,
)

PARAGRAPHS = [
    "Mara sailed north with Tobias. The crew sang at night.",
    "Tobias wrote a letter to Mara.",
]


# Whether the page would ask "leave this page?" (the handler cancels beforeunload).
BEFOREUNLOAD_JS = """() => {
  const event = new Event('beforeunload', {cancelable: true});
  window.dispatchEvent(event);
  return event.defaultPrevented;
}"""


def add_annotation(page: Page, start: int, end: int, shortcut: str, comment: str) -> None:
    """Select PARAGRAPHS[0][start:end], pick a category by shortcut, comment, Add."""
    select_span(page, 0, PARAGRAPHS[0], start, end)
    expect(page.get_by_role("textbox", name="Selected span")).to_have_value(
        PARAGRAPHS[0][start:end]
    )
    page.keyboard.press(shortcut)
    page.get_by_role("textbox", name="Other comments / feedback (optional)").fill(comment)
    page.get_by_role("button", name="Add", exact=True).click()


def test_offline_changes_are_sent_when_back_online(page: Page, server):
    """Two annotations added offline are saved once, with no duplicates, after reconnecting."""
    seed_document(server, "north", PARAGRAPHS)
    open_task(page, server, "north")
    status = page.get_by_role("status")

    page.context.set_offline(True)
    add_annotation(page, 0, 4, "1", "first")
    expect(status).to_have_text("Offline — 1 change waiting")
    add_annotation(page, 31, 54, "3", "second")
    expect(status).to_have_text("Offline — 2 changes waiting")
    expect(page.locator(".js-annotation-row")).to_have_count(2)
    expect(page.locator('[data-paragraph="0"] mark.hl')).to_have_count(2)
    expect(page.get_by_role("button", name="Submit")).to_be_disabled()
    assert stored_annotations(server) == []
    assert page.evaluate(BEFOREUNLOAD_JS) is True  # leaving now would warn

    page.context.set_offline(False)
    expect(status).to_have_text("Saved", timeout=15000)
    rows = stored_annotations(server)
    assert sorted((r.span_text, r.category, r.comment) for r in rows) == [
        ("Mara", "new-person", "first"),
        ("The crew sang at night.", "abrupt-transition", "second"),
    ]
    assert (
        page.evaluate("Object.keys(localStorage).filter(k => k.startsWith('falte:queue:'))") == []
    )

    # A reload shows exactly what the server has.
    page.reload()
    expect(page.locator(".js-annotation-row")).to_have_count(2)


def test_changes_survive_closing_the_tab_while_the_server_is_unreachable(page: Page, server):
    """Changes made while the API fails are kept in localStorage and sent by the next page."""
    seed_document(server, "north", PARAGRAPHS)
    open_task(page, server, "north")
    url = page.url
    status = page.get_by_role("status")

    page.route("**/api/sessions/*/annotations**", lambda route: route.abort("connectionrefused"))
    add_annotation(page, 0, 4, "1", "kept")
    expect(status).to_have_text("Offline — 1 change waiting")
    # Remove it again and add another: both changes wait, in order.
    row = page.locator(".js-annotation-row")
    row.get_by_role("button", name="Remove").click()
    row.get_by_role("button", name="Yes, remove").click()
    add_annotation(page, 23, 29, "7", "also kept")
    expect(status).to_have_text("Offline — 3 changes waiting")
    assert stored_annotations(server) == []
    page.close(run_before_unload=False)

    # The worker comes back later (server reachable again) in a new tab.
    second = page.context.new_page()
    second.goto(url)
    expect(second.get_by_role("status")).to_have_text("Saved", timeout=15000)
    rows = stored_annotations(server)
    assert [(r.span_text, r.comment, r.deleted_at is not None) for r in rows] == [
        ("Mara", "kept", True),
        ("Tobias", "also kept", False),
    ]
    expect(second.locator(".js-annotation-row")).to_have_count(1)
    second.close()


def test_rejected_change_is_reported_and_taken_back(page: Page, server):
    """A change the server refuses for good (422) is shown as an error, not retried."""
    seed_document(server, "north", PARAGRAPHS)
    open_task(page, server, "north")

    def corrupt(route):
        body = route.request.post_data_json
        body["span"]["text"] = "not the paragraph text"
        route.continue_(post_data=json.dumps(body))

    page.route("**/api/sessions/*/annotations", corrupt)
    add_annotation(page, 0, 4, "1", "will fail")
    expect(page.get_by_role("status")).to_contain_text("Could not save: ")
    expect(page.locator(".js-annotation-row")).to_have_count(0)
    expect(page.locator('[data-paragraph="0"] mark.hl')).to_have_count(0)
    assert stored_annotations(server) == []


def test_changes_left_unsent_when_the_task_was_submitted_elsewhere_are_reported(page: Page, server):
    """A change that waited in this browser while the task was submitted elsewhere (another
    browser) can no longer be saved: the page says so once, and forgets it."""
    seed_document(server, "north", PARAGRAPHS)
    open_task(page, server, "north")
    url = page.url
    page.route("**/api/sessions/*/annotations**", lambda route: route.abort("connectionrefused"))
    add_annotation(page, 0, 4, "1", "too late")
    expect(page.get_by_role("status")).to_have_text("Offline — 1 change waiting")
    page.close(run_before_unload=False)

    elsewhere = page.context.browser.new_context()  # another browser reads on and submits
    other = elsewhere.new_page()
    other.goto(url)
    next_button = other.get_by_role("button", name="No more errors. Go to next paragraph")
    next_button.click()
    expect(other.locator(".js-progress")).to_have_text("Paragraph 2 of 2")
    submit_task(other)
    expect(other.locator(".js-completion-code")).not_to_be_empty()
    elsewhere.close()

    again = page.context.new_page()
    again.goto(url)
    expect(again.get_by_role("status")).to_have_text(
        "Could not save: this task was submitted before 1 change made in this browser "
        "reached the server."
    )
    queues = "Object.keys(localStorage).filter(k => k.startsWith('falte:queue:'))"
    assert again.evaluate(queues) == []
    assert stored_annotations(server) == []
    again.reload()
    expect(again.get_by_role("status")).to_have_text("")  # said once
