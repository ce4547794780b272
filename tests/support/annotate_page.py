"""Helpers for the annotator browser tests: seeding documents and real mouse selections."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from playwright.sync_api import Page, expect
from sqlalchemy import select

from app.core.extensions import db
from app.imports.document_formats import DocumentInput
from app.imports.document_store import import_documents
from app.models import Annotation
from tests.support.live_server import LiveServer

# The JavaScript below finds the viewport rectangle of one UTF-16 unit of a paragraph's
# text, walking its text nodes itself (independent of the code under test).
CHAR_RECT_JS = """
([paragraph, offset]) => {
  const el = document.querySelector(`[data-paragraph="${paragraph}"]`);
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  let total = 0;
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (offset < total + node.length) {
      const range = document.createRange();
      const local = offset - total;
      const size = /[\\uD800-\\uDBFF]/.test(node.data[local]) ? 2 : 1;
      range.setStart(node, local);
      range.setEnd(node, local + size);
      const rects = [...range.getClientRects()].filter((r) => r.width > 0);
      const r = rects[0];
      return {left: r.left, right: r.right, top: r.top, bottom: r.bottom};
    }
    total += node.length;
  }
  throw new Error(`offset ${offset} is beyond paragraph ${paragraph}`);
}
"""


def seed_document(
    live: LiveServer,
    external_id: str,
    paragraphs: Sequence[str],
    *,
    title: str | None = "A test document",
    entities: Sequence[str] = (),
    language: str | None = None,
) -> None:
    """Import one document into the live server's database through the real importer."""
    document = DocumentInput(
        external_id, title, tuple(paragraphs), entities=tuple(entities), language=language
    )
    with live.app.app_context():
        import_documents([document])


def open_task(page: Page, live: LiveServer, document: str, annotator: str = "worker-1") -> None:
    """Open the task as a worker and wait until the Current Paragraph is drawn."""
    page.goto(f"{live.url}/annotate/{document}?annotator={annotator}")
    current = page.get_by_role("region", name="Current Paragraph")
    expect(current.locator("[data-paragraph]")).to_have_count(1)


def utf16(text: str, code_points: int) -> int:
    """UTF-16 offset of a code-point offset (what the DOM counts)."""
    return len(text[:code_points].encode("utf-16-le")) // 2


def select_span(
    page: Page, paragraph: int, text: str, start: int, end: int, *, backwards: bool = False
) -> None:
    """Drag the mouse over text[start:end] (code points) of a paragraph, like a worker."""
    page.locator(f'[data-paragraph="{paragraph}"]').scroll_into_view_if_needed()
    first = page.evaluate(CHAR_RECT_JS, [paragraph, utf16(text, start)])
    last_unit = utf16(text, end) - (2 if ord(text[end - 1]) > 0xFFFF else 1)
    last = page.evaluate(CHAR_RECT_JS, [paragraph, last_unit])
    begin = (first["left"] + 1, (first["top"] + first["bottom"]) / 2)
    finish = (last["right"] - 1, (last["top"] + last["bottom"]) / 2)
    drag(page, *((finish, begin) if backwards else (begin, finish)))


def drag(page: Page, begin: tuple[float, float], finish: tuple[float, float]) -> None:
    """Press the mouse at `begin`, move it to `finish` in steps, release it."""
    page.mouse.move(*begin)
    page.mouse.down()
    page.mouse.move((begin[0] + finish[0]) / 2, (begin[1] + finish[1]) / 2, steps=3)
    page.mouse.move(*finish, steps=3)
    page.mouse.up()


def stored_annotations(live: LiveServer, *, include_removed: bool = True) -> list[Annotation]:
    """All annotation rows in the live server's database, oldest first."""
    with live.app.app_context():
        query = select(Annotation).order_by(Annotation.id)
        if not include_removed:
            query = query.where(Annotation.deleted_at.is_(None))
        rows = list(db.session.scalars(query))
        db.session.expunge_all()
        return rows


def wait_for_value(page: Page, script: str, expected: Any, timeout: float = 5.0) -> None:
    """Poll page.evaluate(script) until it returns `expected` (wait_for_function would
    need 'unsafe-eval', which the page's CSP rightly forbids)."""
    deadline = time.monotonic() + timeout
    value = page.evaluate(script)
    while value != expected and time.monotonic() < deadline:
        page.wait_for_timeout(50)
        value = page.evaluate(script)
    assert value == expected, f"{script} returned {value!r}, expected {expected!r}"


def wait_until(page: Page, condition: Callable[[], Any], timeout: float = 5.0) -> None:
    """Poll `condition` (letting the page run meanwhile) until it is true."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"still false after {timeout} s: {condition}"
        page.wait_for_timeout(50)


def resize(page: Page, width: int, height: int = 800) -> None:
    """Set the viewport and wait until the page is laid out at that width."""
    page.set_viewport_size({"width": width, "height": height})
    wait_for_value(page, "innerWidth", width)


def settled(page: Page, locator) -> None:
    """Wait until the element stops moving (smooth scrolling done)."""
    before, now = None, locator.bounding_box()

    def still() -> bool:
        nonlocal before, now
        before, now = now, locator.bounding_box()
        return before == now

    wait_until(page, still)


def submit_task(page: Page) -> None:
    """Submit, then confirm in the page (Submit asks first: it cannot be undone)."""
    page.get_by_role("button", name="Submit", exact=True).click()
    page.get_by_role("button", name="Yes, submit").click()
