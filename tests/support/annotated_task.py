"""A worker's task with annotations made in the browser, as the worker-page tests need it:
three in paragraph 1 (one with a long comment) and a paired one in paragraph 2.
Screenshots go to SCREENSHOTS (a temporary folder unless set) for people to look at."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.support.annotate_page import open_task, seed_document, select_span

SCREENSHOTS = Path(os.environ.get("SCREENSHOTS") or tempfile.mkdtemp(prefix="falte-ux-"))
PARAGRAPHS = [
    "Zoë met 🚢 Łukasz at the harbour. Zoë smiled at the old fisherman who had been "
    "waiting there since the early morning, mending his nets.",
    "The ship left at dawn. Łukasz waved at the ship while Zoë counted the gulls on the "
    "pier, one by one, until the ship was gone.",
    "Later, he said nothing about the ship.",
]
COMMENT = "Who is he? Never introduced before this point in the text."
OVERFLOW = "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"


def add(page: Page, paragraph: int, text: str, start: int, end: int, key: str, comment=""):
    """Select a span with the mouse, choose a category by its key, comment, Add."""
    select_span(page, paragraph, text, start, end)
    page.keyboard.press(key)
    if comment:
        page.get_by_role("textbox", name="Other comments / feedback (optional)").fill(comment)
    page.get_by_role("button", name="Add", exact=True).click()
    expect(page.get_by_role("status")).to_have_text("Saved")


def next_paragraph(page: Page, paragraph: int) -> None:
    """No more errors: go to the given paragraph and wait for it."""
    page.get_by_role("button", name="No more errors. Go to next paragraph").click()
    expect(page.locator(f'.js-current-body [data-paragraph="{paragraph}"]')).to_be_visible()


def annotated_task(page: Page, live) -> None:
    """Three annotations in paragraph 1 (one with a long comment), a paired one in 2."""
    seed_document(live, "voyage", PARAGRAPHS, entities=["Zoë", "Łukasz"])
    page.set_viewport_size({"width": 1280, "height": 800})
    open_task(page, live, "voyage")
    text = PARAGRAPHS[0]
    lukasz = text.index("Łukasz")
    add(page, 0, text, lukasz, lukasz + 6, "1", COMMENT)
    add(page, 0, text, text.index("met"), text.index("harbour") + 7, "3")
    add(page, 0, text, text.index("Zoë smiled"), text.index("fisherman") + 9, "7", "who?")
    next_paragraph(page, 1)
    second = PARAGRAPHS[1]
    waved = second.index("Łukasz waved")
    select_span(page, 1, second, waved, waved + 12)
    page.keyboard.press("4")
    select_span(page, 0, text, lukasz, lukasz + 6)
    page.get_by_role("button", name="Add", exact=True).click()
    expect(page.get_by_role("status")).to_have_text("Saved")
