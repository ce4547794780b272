"""The whole worker flow in Chromium, through the real server: select, categorise, add,
pair, navigate, reload and resume, remove, submit."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect
from sqlalchemy import select

from app.core.extensions import db
from app.models import AnnotationSession
from tests.support.annotate_page import (
    open_task,
    seed_document,
    select_span,
    stored_annotations,
)

PARAGRAPHS = [
    "Zoë met 🚢 Łukasz at the harbour. Zoë smiled.",
    "The ship left at dawn.\nŁukasz waved at the ship.",
    "Later, he said nothing about the ship.",
]


def paragraph_text(page: Page, paragraph: int) -> str:
    """The textContent of a paragraph element."""
    return page.locator(f'[data-paragraph="{paragraph}"]').evaluate("el => el.textContent")


def test_annotate_a_document_from_start_to_submit(page: Page, server):
    """A worker annotates three paragraphs, resumes after a reload, removes one, submits."""
    seed_document(server, "voyage", PARAGRAPHS, entities=["Zoë", "Łukasz"])
    page.set_viewport_size({"width": 1400, "height": 1000})
    script_errors: list[str] = []
    page.on("pageerror", lambda error: script_errors.append(str(error)))
    open_task(page, server, "voyage")

    context = page.get_by_role("region", name="Context")
    current = page.get_by_role("region", name="Current Paragraph")
    status = page.get_by_role("status")
    add = page.get_by_role("button", name="Add", exact=True)
    next_button = page.get_by_role("button", name="No more errors. Go to next paragraph")
    previous_button = page.get_by_role("button", name="Previous paragraph")
    submit = page.get_by_role("button", name="Submit", exact=True)
    span_box = page.get_by_role("textbox", name="Selected span")

    expect(current.locator('[data-paragraph="0"]')).to_have_text(PARAGRAPHS[0])
    expect(previous_button).to_be_disabled()
    expect(submit).to_be_disabled()
    expect(add).to_be_disabled()

    # Step 1: a span after an emoji; stored offsets must be Python's (code points).
    start = PARAGRAPHS[0].index("Łukasz")
    select_span(page, 0, PARAGRAPHS[0], start, start + len("Łukasz"))
    expect(span_box).to_have_value("Łukasz")
    # Step 2 by button; Step 4 comment; Step 5 with Enter in the comment field.
    category = page.get_by_role("button", name="New person not introduced", exact=True)
    category.click()
    expect(category).to_have_attribute("aria-pressed", "true")
    expect(add).to_be_enabled()
    comment = page.get_by_role("textbox", name="Other comments / feedback (optional)")
    comment.fill("Who is he?")
    comment.press("Enter")
    expect(status).to_have_text("Saved")
    expect(span_box).to_have_value("")
    rows = page.locator(".js-annotation-row")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("New person not introduced")
    expect(rows.first.locator("strong")).to_have_text("Łukasz")
    expect(rows.first).to_contain_text("Who is he?")
    expect(current.locator("mark.hl")).to_have_text("Łukasz")
    expect(current.locator("mark.hl")).to_have_attribute(
        "title", "New person not introduced\nWho is he?"
    )
    assert paragraph_text(page, 0) == PARAGRAPHS[0]

    [row] = stored_annotations(server)
    assert (row.paragraph_id, row.span_start, row.span_end) == (0, start, start + 6)
    assert row.span_text == PARAGRAPHS[0][row.span_start : row.span_end] == "Łukasz"
    assert row.category == "new-person" and row.comment == "Who is he?"

    # Backwards selection with surrounding spaces (trimmed); category by shortcut key.
    smiled = PARAGRAPHS[0].index(" Zoë smiled.")
    select_span(page, 0, PARAGRAPHS[0], smiled, len(PARAGRAPHS[0]), backwards=True)
    expect(span_box).to_have_value("Zoë smiled.")
    page.keyboard.press("6")
    expect(page.get_by_role("button", name="Ungrammatical", exact=True)).to_have_attribute(
        "aria-pressed", "true"
    )
    add.click()
    expect(rows).to_have_count(2)
    expect(status).to_have_text("Saved")

    # Next paragraph: the first moves into the Context with its highlights.
    next_button.click()
    expect(current.locator('[data-paragraph="1"]')).to_have_text(PARAGRAPHS[1])
    expect(context.locator('[data-paragraph="0"] mark.hl')).to_have_count(2)
    expect(page.locator(".js-progress")).to_have_text("Paragraph 2 of 3")

    # A paired category: the second span is chosen in the Context.
    waved = PARAGRAPHS[1].index("Łukasz waved")
    select_span(page, 1, PARAGRAPHS[1], waved, waved + len("Łukasz waved"))
    page.keyboard.press("4")
    paired_box = page.get_by_role("textbox", name="Paired span")
    expect(paired_box).to_be_visible()
    expect(
        page.get_by_text("Now highlight the earlier span that says the same thing.")
    ).to_be_visible()
    expect(add).to_be_disabled()
    met = PARAGRAPHS[0].index("met")
    select_span(page, 0, PARAGRAPHS[0], met, start + len("Łukasz"))
    expect(paired_box).to_have_value("met 🚢 Łukasz")
    expect(span_box).to_have_value("Łukasz waved")
    add.click()
    expect(status).to_have_text("Saved")
    paired_row = stored_annotations(server)[-1]
    assert paired_row.category == "repetition"
    assert (paired_row.paragraph_id, paired_row.span_text) == (1, "Łukasz waved")
    assert (paired_row.paired_paragraph_id, paired_row.paired_start, paired_row.paired_end) == (
        0,
        met,
        start + 6,
    )
    assert paired_row.paired_text == "met 🚢 Łukasz"

    # Hovering the span lights up its paired span in the Context too.
    current.locator("mark.hl").first.hover()
    expect(context.locator("mark.hl.is-linked").first).to_be_visible()
    assert "Łukasz" in context.locator("mark.hl.is-linked").all_inner_texts()[-1]

    # Back and forth without losing anything.
    previous_button.click()
    expect(current.locator('[data-paragraph="0"]')).to_have_text(PARAGRAPHS[0])
    expect(context.locator("[data-paragraph]")).to_have_count(0)
    next_button.click()
    expect(current.locator('[data-paragraph="1"]')).to_be_visible()
    expect(status).to_have_text("Saved")

    # Reload: same paragraph, same annotations, same highlights.
    page.reload()
    expect(current.locator('[data-paragraph="1"]')).to_have_text(PARAGRAPHS[1])
    expect(rows).to_have_count(3)
    # Segments: "met 🚢 " (paired), "Łukasz" (paired + new person: overlap), "Zoë smiled.".
    expect(context.locator('[data-paragraph="0"] mark.hl')).to_have_count(3)
    expect(context.locator('[data-paragraph="0"] mark.hl--overlap')).to_have_text("Łukasz")
    assert paragraph_text(page, 0) == PARAGRAPHS[0]
    assert paragraph_text(page, 1) == PARAGRAPHS[1]

    # Remove asks in the page, then saves at once (a soft delete).
    first_row = rows.filter(has_text="Who is he?")
    first_row.get_by_role("button", name="Remove").click()
    expect(first_row).to_contain_text("Remove this annotation?")
    first_row.get_by_role("button", name="Yes, remove").click()
    expect(rows).to_have_count(2)
    expect(status).to_have_text("Saved")
    removed = [a for a in stored_annotations(server) if a.comment == "Who is he?"]
    assert len(removed) == 1 and removed[0].deleted_at is not None
    assert len(stored_annotations(server, include_removed=False)) == 2

    # Last paragraph: Submit, then the completion code.
    next_button.click()
    expect(current.locator('[data-paragraph="2"]')).to_have_text(PARAGRAPHS[2])
    expect(next_button).to_be_disabled()
    expect(submit).to_be_enabled()
    submit.click()
    page.get_by_role("button", name="Yes, submit").click()
    code = page.locator(".js-completion-code")
    expect(code).to_have_text(re.compile(r"\S{8,}"))
    with server.app.app_context():
        session = db.session.scalars(select(AnnotationSession)).one()
        assert session.status == "submitted"
        assert code.text_content() == session.completion_code
    expect(page.get_by_role("button", name="Ungrammatical", exact=True)).to_be_disabled()
    expect(submit).to_be_disabled()

    # After a reload the session is read-only, shows the code, and still navigates.
    submitted_code = code.text_content()
    assert submitted_code
    page.reload()
    expect(page.locator(".js-completion-code")).to_have_text(submitted_code)
    expect(page.get_by_text("You have submitted this task.")).to_be_visible()
    expect(add).to_be_disabled()
    expect(rows.first.get_by_role("button", name="Remove")).to_be_disabled()
    previous_button.click()
    expect(current.locator('[data-paragraph="1"]')).to_be_visible()
    assert script_errors == []
