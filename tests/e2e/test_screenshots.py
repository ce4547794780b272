"""The README's screenshots (docs/screenshots/*.png), made from the demo documents by
`make screenshots`, which sets SCREENSHOTS_DIR; without it the same run writes them to a
temporary folder, so every test run checks that the README's scenes can still be made.
The worker page mid-task (annotations in Context, one being made in the Current
Paragraph) and the researcher dashboard over a small study made through the worker API,
both at 1280x800."""

from __future__ import annotations

import os
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.support.annotate_page import select_span
from tests.support.demo_study import seed_demo_study
from tests.support.research import add_researcher, log_in

OUT = os.environ.get("SCREENSHOTS_DIR")
SIZE = {"width": 1280, "height": 800}
DOCUMENT = "skarvik-lighthouse"


def _mark(page: Page, paragraph: int, needle: str, category: str, comment: str = "") -> None:
    element = page.get_by_role("region", name="Current Paragraph").locator(
        f'[data-paragraph="{paragraph}"]'
    )
    element.scroll_into_view_if_needed()
    text = element.text_content()
    start = text.index(needle)
    select_span(page, paragraph, text, start, start + len(needle))
    expect(page.get_by_role("textbox", name="Selected span")).to_have_value(needle)
    page.get_by_role("button", name=category, exact=True).click()
    if comment:
        page.locator("#comment").fill(comment)


def _next(page: Page, number: int) -> None:
    page.get_by_role("button", name="No more errors. Go to next paragraph").click()
    expect(page.locator(".js-progress")).to_contain_text(f"Paragraph {number} of")


def test_screenshots(page: Page, live_server, tmp_path):
    out = Path(OUT) if OUT else tmp_path
    out.mkdir(parents=True, exist_ok=True)
    seed_demo_study(live_server.app)
    add_researcher(live_server)
    page.set_viewport_size(SIZE)

    page.goto(f"{live_server.url}/annotate/{DOCUMENT}?annotator=demo-worker")
    expect(page.get_by_role("region", name="Current Paragraph")).to_be_visible()
    _next(page, 2)
    _next(page, 3)
    _mark(page, 2, "who answer within the hour", "Ungrammatical")
    page.get_by_role("button", name="Add", exact=True).click()
    _next(page, 4)
    _mark(page, 3, "Henrik", "New person not introduced")
    page.get_by_role("button", name="Add", exact=True).click()
    expect(page.get_by_role("status")).to_contain_text("Saved")
    _mark(
        page,
        3,
        "the boat's engine has been repaired overnight",
        "Missing information about an object or event",
        "Who repaired it, and why does nobody say so?",
    )
    page.mouse.move(0, 0)
    # The work area from its top edge (the comment field's focus leaves the page scrolled
    # to wherever it was): Context, Current Paragraph, navigation and steps in one view.
    page.locator(".annotator__layout").evaluate(
        "el => window.scrollTo(0, el.getBoundingClientRect().top + window.scrollY - 16)"
    )
    page.screenshot(path=str(out / "worker-page.png"))

    log_in(page, live_server.url)
    expect(page.get_by_role("heading", name="Study dashboard")).to_be_visible()
    page.screenshot(path=str(out / "researcher-dashboard.png"))
    for name in ("worker-page.png", "researcher-dashboard.png"):
        png = (out / name).read_bytes()
        assert png.startswith(b"\x89PNG") and len(png) > 10_000, name
