"""Right-to-left keys in Chromium (issue 27, point 8): in an Arabic paragraph the arrow
keys follow the screen, so ← goes to the next word in text order (on its left) and → to
the one before (before, → went to the next word in text order, visually to the left, and
← did nothing at the start). The same with the document's language or without one (the
paragraph then takes the direction of its first strong character)."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.support.annotate_page import open_task, seed_document

ARABIC = "في صباح ممطر يدخل المكتبة رجل ألماني."

# Where a word of the Current Paragraph is on screen (its left edge), found with a
# Range over its text (independent of the code under test).
WORD_LEFT_JS = """
(word) => {
  const p = document.querySelector('.js-current-body [data-paragraph]');
  const node = p.firstChild;
  const range = document.createRange();
  const at = node.data.indexOf(word);
  range.setStart(node, at);
  range.setEnd(node, at + word.length);
  return range.getBoundingClientRect().left;
}
"""


@pytest.mark.parametrize("language", ["ar", None], ids=["language-ar", "no-language"])
def test_arrow_keys_follow_the_screen_in_arabic(page: Page, live_server, language):
    seed_document(live_server, "arabic", [ARABIC], title=None, language=language)
    open_task(page, live_server, "arabic")
    # The words run right to left on screen: the second word is left of the first.
    assert page.evaluate(WORD_LEFT_JS, "صباح") < page.evaluate(WORD_LEFT_JS, "في")
    page.locator(".js-current-body").focus()
    selected = page.get_by_role("textbox", name="Selected span")
    # ← from the first word goes left: to the next words in text order.
    for key in ["ArrowLeft", "Shift+ArrowLeft", "Enter"]:
        page.keyboard.press(key)
    expect(selected).to_have_value("صباح ممطر")
    page.get_by_role("button", name="Clear", exact=True).click()
    # → goes right, back towards the first word (the caret stays where it was)...
    page.locator(".js-current-body").focus()
    for key in ["ArrowRight", "Shift+ArrowRight", "Enter"]:
        page.keyboard.press(key)
    expect(selected).to_have_value("في صباح")
    page.get_by_role("button", name="Clear", exact=True).click()
    # ... and at the first word, the rightmost, it stays there.
    page.locator(".js-current-body").focus()
    for key in ["ArrowRight", "ArrowRight", "Enter"]:
        page.keyboard.press(key)
    expect(selected).to_have_value("في")


def test_arrow_keys_still_read_left_to_right_in_english(page: Page, live_server):
    seed_document(live_server, "english", ["Anna met Bob at the harbour."], language="en")
    open_task(page, live_server, "english")
    page.locator(".js-current-body").focus()
    for key in ["ArrowRight", "Shift+ArrowRight", "Enter"]:
        page.keyboard.press(key)
    expect(page.get_by_role("textbox", name="Selected span")).to_have_value("met Bob")
