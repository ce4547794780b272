"""Issue 27, point 13, in Chromium: the steps shown are numbered 1, 2, 3... (the hidden
paired step took 4); the table's column headers fit their columns ("PARAGRAPHCOMMENT")
without a word cut in two (issue 29: "PARAGRAP" / "H" at 1280 px beside the
instructions); a practice check's feedback survives a reload; a severity's key goes to the
form the worker is filling while an Accept's severity question is open (it went to the
card)."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.support.annotate_page import open_task, resize, seed_document, select_span
from tests.support.study_day import (
    TASK,
    WORKER,
    agree,
    annotator_ready,
    answer_survey,
    check_practice,
    mark,
    next_paragraph,
    reach_the_task,
    serve_study_day,
)
from tests.support.training import PRACTICE_PARAGRAPHS

NUMBERS_JS = """
() => [...document.querySelectorAll('.js-form .step')]
  .filter((step) => !step.hidden)
  .map((step) => step.querySelector('.step__number').textContent.trim())
"""
# Column headers of the Previous annotations table whose text does not fit their box.
OVERFLOWING_JS = """
() => [...document.querySelectorAll('.previous__table th')]
  .filter((th) => th.scrollWidth > th.clientWidth)
  .map((th) => th.textContent.trim())
"""
# The words of those headers that a line break cuts in two ("PARAGRAP" / "H").
BROKEN_WORDS_JS = """
() => [...document.querySelectorAll('.previous__table th')].flatMap((th) => {
  const broken = [];
  const walker = document.createTreeWalker(th, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (const word of node.data.matchAll(/\\S+/g)) {
      const range = document.createRange();
      range.setStart(node, word.index);
      range.setEnd(node, word.index + word[0].length);
      const lines = new Set([...range.getClientRects()].map((box) => Math.round(box.top)));
      if (lines.size > 1) broken.push(word[0]);
    }
  }
  return broken;
})
"""


@pytest.fixture
def study(live_app, tmp_path):
    return serve_study_day(live_app, tmp_path)


def test_the_steps_shown_are_numbered_in_order(page: Page, live_server):
    seed_document(live_server, "steps", ["Anna met Bob. Bob left."])
    open_task(page, live_server, "steps")
    assert page.evaluate(NUMBERS_JS) == ["1", "2", "3", "4"]  # span, type, comment, Add
    page.get_by_role("button", name="Repetition", exact=True).click()
    assert page.evaluate(NUMBERS_JS) == ["1", "2", "3", "4", "5"]  # the paired span shows
    page.get_by_role("button", name="Ungrammatical", exact=True).click()
    assert page.evaluate(NUMBERS_JS) == ["1", "2", "3", "4"]


def test_with_severities_too(page: Page, study):
    page.goto(f"{study.url}/start?{WORKER}")
    agree(page)
    answer_survey(page, native=0)
    annotator_ready(page)  # the practice page: the annotator's form
    assert page.evaluate(NUMBERS_JS) == ["1", "2", "3", "4", "5"]  # with the severity step
    page.locator('.js-category[data-category="repetition"]').click()
    assert page.evaluate(NUMBERS_JS) == ["1", "2", "3", "4", "5", "6"]


@pytest.mark.parametrize("locale", ["en-GB", "es-ES", "de-DE"])
def test_the_tables_headers_fit_their_columns(browser, live_server, locale):
    seed_document(live_server, "table", ["Anna met Bob at the harbour."])
    context = browser.new_context(locale=locale)
    try:
        page = context.new_page()
        page.goto(f"{live_server.url}/annotate/table?annotator=worker-1")
        annotator_ready(page)
        select_span(page, 0, "Anna met Bob at the harbour.", 9, 12)
        page.locator('.js-category[data-category="new-person"]').click()
        page.locator(".js-add").click()
        expect(page.locator(".js-annotation-row")).to_have_count(1)
        expect(page.locator(".js-instructions")).to_be_visible()  # the column beside
        for width in [1280, *range(900, 1500, 60)]:
            resize(page, width)
            assert page.evaluate(OVERFLOWING_JS) == [], width
            # No header word is cut in two (at 1280 px "PARAGRAPH" read "PARAGRAP" / "H").
            assert page.evaluate(BROKEN_WORDS_JS) == [], width
    finally:
        context.close()


def test_practice_feedback_survives_a_reload(page: Page, study):
    page.goto(f"{study.url}/start?{WORKER}")
    agree(page)
    answer_survey(page, native=0)
    annotator_ready(page)
    mark(page, PRACTICE_PARAGRAPHS[0], 0, "Mara", "missing-info", "minor")  # not an error
    next_paragraph(page, 2, 2)
    check_practice(page)
    feedback = page.locator(".js-feedback")
    shown = feedback.inner_text()
    # A try remains: the server sends counts only (issue 26.1), no spans or explanations.
    assert "Errors found: 0 of 2." in shown and "Marks that are not errors: 1." in shown
    assert "Lord Findon" not in shown

    page.reload()
    annotator_ready(page)
    expect(feedback).to_be_visible()
    assert feedback.inner_text() == shown  # exactly what the server said, counts only
    expect(page.locator(".js-retry")).to_be_visible()
    page.locator(".js-retry").click()
    page.reload()
    annotator_ready(page)
    expect(feedback).to_be_visible()  # still beside the answers being corrected
    expect(page.locator(".js-retry")).to_be_hidden()
    expect(page.locator(".js-annotation-row .js-remove")).to_be_enabled()


def test_severity_keys_go_to_the_form_being_filled(page: Page, study):
    reach_the_task(page, study)
    card = page.locator('.js-suggestion[data-suggestion="s-bob"]')
    card.locator('[data-action="accept"]').click()
    expect(card.locator('[data-action="severity"]')).to_have_count(2)  # the question is open
    start = TASK[0].index("Nobody")
    select_span(page, 0, TASK[0], start, start + len("Nobody"))
    page.locator('.js-category[data-category="missing-info"]').click()
    page.keyboard.press("q")  # minor, for the annotation in the form
    expect(page.locator('.js-severity[data-severity="minor"]')).to_have_attribute(
        "aria-pressed", "true"
    )
    expect(card.locator('[data-action="severity"]')).to_have_count(2)  # still asking
    expect(page.locator(".js-annotation-row")).to_have_count(0)
    page.locator(".js-add").click()
    expect(page.locator(".js-annotation-row")).to_have_count(1)
    # With the focus back on the card, its key answers the card.
    card.locator('[data-action="severity"]').first.focus()
    page.keyboard.press("w")
    expect(card).to_contain_text("Accepted")
    rows = page.locator(".js-annotation-row")
    expect(rows).to_have_count(2)
    expect(rows.filter(has_text="New person not introduced")).to_contain_text("Major")
