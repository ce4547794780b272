"""The browser-side span libraries, run in Chromium against Python's own string indexing:
static/js/lib/anchoring.mjs (DOM ranges <-> code-point spans) and highlight.mjs."""

from __future__ import annotations

import random

import pytest
from playwright.sync_api import Page

from tests.support.annotate_page import open_task, seed_document

ALPHABET = ["a", "b", " ", "é", "🚢", "Ł", "\n", "𝔘", "z", "<", "&"]

# Runs in the page: imports the modules under test from the app's static folder.
CHECK_JS = """
async (cases) => {
  const anchoring = await import('/static/js/lib/anchoring.mjs');
  const { renderParagraph } = await import('/static/js/lib/highlight.mjs');
  const host = document.createElement('p');
  document.body.append(host);
  const failures = [];
  for (const { text, highlights, spans } of cases) {
    renderParagraph(host, text, highlights.map((h, i) => ({ ...h, id: `h${i}`, color: '#fc0' })));
    if (host.textContent !== text) failures.push({ text, problem: 'textContent changed' });
    highlights.forEach((h, i) => {
      const covered = [...host.querySelectorAll('mark')]
        .filter((m) => m.dataset.hlIds.split(' ').includes(`h${i}`))
        .map((m) => m.textContent).join('');
      const expected = anchoring.sliceCodePoints(text, h.start, h.end);
      if (covered !== expected) failures.push({ text, h, covered, expected });
    });
    for (const span of spans) {
      const range = anchoring.spanToRange(host, span);
      const back = anchoring.rangeToSpan(range, host);
      if (!back || back.start !== span.start || back.end !== span.end || back.text !== span.text) {
        failures.push({ text, span, back });
      }
    }
    if (anchoring.codePointLength(text) !== [...text].length) {
      failures.push({ text, problem: 'length' });
    }
  }
  host.remove();
  return failures;
}
"""


def random_case(rng: random.Random) -> dict:
    """A text with emoji and astral letters, overlapping highlights, and spans to round-trip."""
    text = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 40)))
    highlights = []
    for _ in range(rng.randint(0, 5)):
        start = rng.randrange(len(text))
        end = rng.randint(start + 1, len(text))
        highlights.append({"start": start, "end": end})
    spans = []
    for _ in range(3):
        start = rng.randrange(len(text))
        end = rng.randint(start + 1, len(text))
        piece = text[start:end]
        if piece.strip() != piece or not piece.strip():
            continue  # rangeToSpan trims whitespace; only untrimmed spans round-trip exactly
        spans.append({"start": start, "end": end, "text": piece})
    return {"text": text, "highlights": highlights, "spans": spans}


@pytest.fixture
def annotator_page(page: Page, live_server) -> Page:
    """Any annotator page: the modules load from the app's origin, under its CSP."""
    seed_document(live_server, "lib", ["Some text."])
    open_task(page, live_server, "lib")
    return page


def test_highlights_and_anchoring_agree_with_python_offsets(annotator_page: Page):
    """300 random texts: text never changes, every highlight covers text[start:end] exactly,
    and spanToRange/rangeToSpan round-trip code-point offsets."""
    rng = random.Random(20240613)
    cases = [random_case(rng) for _ in range(300)]
    assert annotator_page.evaluate(CHECK_JS, cases) == []


def test_selection_is_trimmed_and_counted_in_code_points(annotator_page: Page):
    """A selection with surrounding whitespace after an emoji gives Python's offsets."""
    text = "🚢🚢 a  Łukasz \n b"
    result = annotator_page.evaluate(
        """async (text) => {
          const { rangeToSpan } = await import('/static/js/lib/anchoring.mjs');
          const { renderParagraph } = await import('/static/js/lib/highlight.mjs');
          const p = document.createElement('p');
          document.body.append(p);
          renderParagraph(p, text, [{id: 'x', start: 4, end: 7, color: '#eee'}]);
          const range = document.createRange();
          // From the end of the first text node (after 'a') into the last one, across
          // the highlight "  Ł" (code points 4-7).
          range.setStart(p.firstChild, p.firstChild.length);
          range.setEnd(p.lastChild, p.lastChild.length - 2);
          return rangeToSpan(range, p);
        }""",
        text,
    )
    start = text.index("Łukasz")
    assert result == {"start": start, "end": start + 6, "text": "Łukasz"}
    assert text[result["start"] : result["end"]] == "Łukasz"
