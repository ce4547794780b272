"""Real mouse drags over text in any script: right to left, mixed direction, CJK, combining
marks and emoji sequences.

annotate_page.select_span drags from the left edge of the first character to the right edge
of the last, which is right for left-to-right text only. In right-to-left or mixed text a
character's logical start may be its right edge, and a boundary between an Arabic word and
a Latin name has two visual places. So here each boundary (a UTF-16 offset in the
paragraph, as the DOM counts) is found by asking the browser's own hit-testing
(document.caretRangeFromPoint, what a mouse press uses) which point of the neighbouring
characters' rectangles (Range.getClientRects), or failing that of any character, lands
exactly on that offset; the mouse is
then pressed at one boundary, moved, and released at the other. Independent of the code
under test: nothing here uses static/js.
"""

from __future__ import annotations

from playwright.sync_api import Page

from tests.support.annotate_page import drag, utf16

BOUNDARY_POINT_JS = """
([paragraph, offset]) => {
  const el = document.querySelector(`[data-paragraph="${paragraph}"]`);
  const nodes = [];
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) nodes.push(node);
  const locate = (unit) => {
    let total = 0;
    for (const node of nodes) {
      if (unit < total + node.length) return [node, unit - total];
      total += node.length;
    }
    return null;
  };
  const offsetOf = (node, local) => {
    let total = 0;
    for (const n of nodes) {
      if (n === node) return total + local;
      total += n.length;
    }
    // A caret on the element itself: before or after all its text.
    return local === 0 ? 0 : nodes.reduce((sum, n) => sum + n.length, 0);
  };
  const rectsOf = (unit) => {
    const at = locate(unit);
    if (!at) return [];
    const [node, local] = at;
    const size = /[\\uD800-\\uDBFF]/.test(node.data[local]) ? 2 : 1;
    const range = document.createRange();
    range.setStart(node, local);
    range.setEnd(node, Math.min(node.length, local + size));
    return [...range.getClientRects()].filter((r) => r.width > 0);
  };
  const lowSurrogate = (unit) => {
    const at = locate(unit);
    return at && /[\\uDC00-\\uDFFF]/.test(at[0].data[at[1]]);
  };
  // The characters on either side of the boundary (skipping back over a low surrogate).
  const before = lowSurrogate(offset - 1) ? offset - 2 : offset - 1;
  // Then every other character: at a direction change a boundary's place is next to a
  // character that is logically far away (in an RTL paragraph opening with "Google", the
  // paragraph's start, offset 0, is at the right of the "e").
  const total = nodes.reduce((sum, n) => sum + n.length, 0);
  const others = [];
  for (let unit = 0; unit < total; unit += 1) others.push(...rectsOf(unit));
  const candidates = [...rectsOf(offset), ...(before >= 0 ? rectsOf(before) : []), ...others];
  for (const r of candidates) {
    const y = (r.top + r.bottom) / 2;
    // Inside the character's edges first; then just outside, where a boundary at a
    // direction change or at the paragraph's start or end may lie.
    const xs = [r.left + 1, r.right - 1, r.left + 0.25, r.right - 0.25, r.left - 2, r.right + 2];
    for (const x of xs) {
      const caret = document.caretRangeFromPoint(x, y);
      if (caret && el.contains(caret.startContainer)
          && offsetOf(caret.startContainer, caret.startOffset) === offset) {
        return {x, y};
      }
    }
  }
  throw new Error(`no point of paragraph ${paragraph} hits offset ${offset}`);
}
"""


def boundary_point(page: Page, paragraph: int, unit: int) -> tuple[float, float]:
    """A viewport point where a mouse press puts the caret at UTF-16 offset `unit`."""
    point = page.evaluate(BOUNDARY_POINT_JS, [paragraph, unit])
    return point["x"], point["y"]


def drag_select(
    page: Page, paragraph: int, text: str, start: int, end: int, *, backwards: bool = False
) -> None:
    """Drag the mouse over text[start:end] (code points), from its logical start to its
    end, or from its end to its start when `backwards`."""
    page.locator(f'[data-paragraph="{paragraph}"]').scroll_into_view_if_needed()
    begin = boundary_point(page, paragraph, utf16(text, start))
    finish = boundary_point(page, paragraph, utf16(text, end))
    drag(page, *((finish, begin) if backwards else (begin, finish)))
