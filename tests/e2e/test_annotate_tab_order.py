"""The worker page's tab order (issue 14 point 5): after the page's header and the
instructions, Tab reaches step 1 (the Current Paragraph) first, then the steps in their
order up to Add, then the navigation, then the Context and the table; the layout looks
as before at 390, 768 and 1280 px (screenshots in SCREENSHOTS) and axe stays clean."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.support.annotate_page import select_span
from tests.support.annotated_task import OVERFLOW, PARAGRAPHS, SCREENSHOTS, annotated_task
from tests.support.axe import violations

# What a focused element is, for the order: its step or place on the page.
DESCRIBE = """() => {
  const el = document.activeElement;
  const roles = [
    ['.js-current-body', 'current paragraph'],
    ['.js-span', 'selected span'],
    ['.js-category', 'category'],
    ['.js-paired-span', 'paired span'],
    ['.js-comment', 'comment'],
    ['.js-add', 'add'],
    ['.js-clear', 'clear'],
    ['.js-previous', 'previous'],
    ['.js-next', 'next'],
    ['.js-submit', 'submit'],
    ['.js-context-body', 'context'],
  ];
  for (const [selector, name] of roles) if (el.matches(selector)) return name;
  if (el.closest('.previous')) return 'table';
  const inWork = el.closest('.annotator__layout') && !el.closest('#instructions');
  if (inWork) return 'other: ' + el.outerHTML.slice(0, 80);
  return 'before';
}"""


def tab_order(page: Page, stops: int = 40) -> list[str]:
    """Reload, then press Tab from the top of the page; what each stop is, repeats
    collapsed."""
    page.reload()
    expect(page.locator('[data-module="annotator"]')).to_have_attribute("data-ready", "true")
    order: list[str] = []
    for _ in range(stops):
        page.keyboard.press("Tab")
        stop = page.evaluate(DESCRIBE)
        if not order or order[-1] != stop:
            order.append(stop)
        if stop == "table":
            break
    return order


def test_step_one_comes_first_in_the_tab_order(page: Page, live_server):
    annotated_task(page, live_server)  # at paragraph 2: a Context, a table of four rows
    second = PARAGRAPHS[1]
    select_span(page, 1, second, 0, 8)  # a draft (kept over the reload): Add and Clear live
    page.keyboard.press("1")

    order = tab_order(page)
    expect(page.get_by_role("button", name="Add", exact=True)).to_be_enabled()
    assert order == [
        "before",  # skip link, header, the Instructions button and their links
        "current paragraph",  # step 1
        "selected span",
        "category",  # step 2
        "comment",  # step 4
        "add",  # step 5
        "clear",
        "previous",  # navigation
        "next",
        "context",
        "table",
    ], order
    assert violations(page) == []

    # The layout is the one people know: the Context above the Current Paragraph, the
    # navigation right under it, the steps beside them (side by side from 56 rem), and
    # the table below both; no sideways scroll.
    for width, height in ((390, 844), (768, 1024), (1280, 800)):
        page.set_viewport_size({"width": width, "height": height})
        page.evaluate("() => window.scrollTo(0, 0)")
        box = {
            name: page.locator(selector).bounding_box()
            for name, selector in (
                ("context", ".js-context"),
                ("current", ".js-current"),
                ("nav", ".js-next"),
                ("steps", ".js-form"),
                ("table", ".previous"),
            )
        }
        assert box["context"]["y"] + box["context"]["height"] <= box["current"]["y"], width
        current_bottom = box["current"]["y"] + box["current"]["height"]
        assert current_bottom <= box["nav"]["y"] <= current_bottom + 80, (width, box)
        steps_bottom = box["steps"]["y"] + box["steps"]["height"]
        assert box["nav"]["y"] + box["nav"]["height"] <= box["table"]["y"], (width, box)
        assert steps_bottom <= box["table"]["y"], (width, box)
        if width > 56 * 16:  # steps beside the text, level with the Context
            assert box["steps"]["x"] > box["current"]["x"] + box["current"]["width"], width
            assert abs(box["steps"]["y"] - box["context"]["y"]) < 2, (width, box)
        else:  # one column: text, navigation, steps, table
            assert box["steps"]["y"] >= box["nav"]["y"] + box["nav"]["height"], (width, box)
        scroll_width, client_width = page.evaluate(OVERFLOW)
        assert scroll_width <= client_width, width
        page.screenshot(path=str(SCREENSHOTS / f"tab-order-{width}.png"), full_page=True)
    assert violations(page) == []
