"""Exact offsets in every script: real mouse drags, in both directions, over right-to-left
text (Arabic, Hebrew), mixed direction (Arabic and Hebrew with Latin names and digits),
Chinese, Japanese, Devanagari with combining marks and emoji ZWJ sequences. Every span the
page stores and the export gives is `paragraph[start:end]` in code points.

Fonts: Debian's fonts-noto, fonts-noto-cjk and fonts-noto-color-emoji
(scripts/ensure-browser.sh), so that each script has real glyphs with real widths.
"""

from __future__ import annotations

import unicodedata

import pytest
from playwright.sync_api import Page, expect

from app.exports.record import ExportFilter, iter_annotation_records
from tests.support.annotate_page import open_task, seed_document, stored_annotations
from tests.support.axe import violations
from tests.support.bidi_drag import drag_select

# (document id, language, paragraph, spans to select by dragging: each quoted text occurs once)
CASES = [
    (
        "arabic",
        "ar",
        "في صباح ممطر يدخل المكتبة رجل ألماني اسمه Martin Weber ويعرض 300 دولار ثمنا للرواية.",
        ["المكتبة رجل", "اسمه Martin", "Martin Weber", "300 دولار", "ثمنا للرواية."],
    ),
    (
        "hebrew",
        "he",
        "דוד פגש את Anna Berg בתחנה בשעה 7:45, והם נסעו יחד לחיפה.",
        ["פגש את", "את Anna Berg", "7:45, והם", "לחיפה"],
    ),
    (
        "arabic-mixed",
        "ar",
        "Google أعلنت في 2024 أن Sarah Jones ستقود فريق 12 مهندسا في دبي.",
        ["Google أعلنت", "2024 أن Sarah", "فريق 12", "في دبي."],
    ),
    (
        "chinese",
        "zh-Hans",
        "一个秋天的下午，一位名叫 Thomas Becker 的德国摄影师走进茶馆，希望在这里拍 3 天照片。",
        ["秋天的下午", "Thomas Becker 的德国", "拍 3 天"],
    ),
    (
        "japanese",
        "ja",
        "私は東京駅でコーヒーを飲みながら、「また来年も来たい」と友達に言いました。",
        ["コーヒー", "「また来年も来たい」", "東京駅"],
    ),
    (
        "devanagari",
        "hi",
        "राम ने क्षत्रिय राजा की पुरानी कहानी पढ़ी और सीता को सुनाई।",
        ["क्षत्रिय राजा", "कहानी पढ़ी", "सीता"],
    ),
    (
        "emoji",
        "en",
        "The family 👨‍👩‍👧‍👦 waved from the boat; a 🏳️‍🌈 flag and 👩🏽‍🚀 flew above it.",
        ["👨‍👩‍👧‍👦 waved", "🏳️‍🌈 flag", "👩🏽‍🚀"],
    ),
]


def add_span(page: Page, paragraph: str, quote: str, backwards: bool) -> None:
    """Drag over `quote` in paragraph 0, then Add it as a new-person error (backwards: an
    ungrammatical one, since the same type on the same span twice is refused)."""
    start = paragraph.index(quote)
    drag_select(page, 0, paragraph, start, start + len(quote), backwards=backwards)
    expect(page.get_by_role("textbox", name="Selected span")).to_have_value(quote)
    category = "Ungrammatical" if backwards else "New person not introduced"
    page.get_by_role("button", name=category, exact=True).click()
    page.get_by_role("button", name="Add", exact=True).click()
    expect(page.get_by_role("status")).to_have_text("Saved")


@pytest.mark.parametrize(
    ("doc", "language", "paragraph", "quotes"), CASES, ids=[c[0] for c in CASES]
)
def test_drags_in_both_directions_store_exact_code_point_offsets(
    page: Page, live_server, doc, language, paragraph, quotes
):
    assert unicodedata.normalize("NFC", paragraph) == paragraph
    seed_document(live_server, doc, [paragraph], language=language)
    open_task(page, live_server, doc)
    body = page.get_by_role("region", name="Current Paragraph").locator(".js-current-body")
    expect(body).to_have_attribute("lang", language)
    expect(body).to_have_attribute("dir", "rtl" if language in ("ar", "he") else "ltr")
    expected = []
    for quote in quotes:
        for backwards in (False, True):
            add_span(page, paragraph, quote, backwards)
            start = paragraph.index(quote)
            expected.append((start, start + len(quote), quote))
    rows = stored_annotations(live_server)
    assert [(r.span_start, r.span_end, r.span_text) for r in rows] == expected
    assert all(paragraph[r.span_start : r.span_end] == r.span_text for r in rows)
    with live_server.app.app_context():
        exported = list(iter_annotation_records(ExportFilter(document=doc)))
    spans = sorted((e["span"]["start"], e["span"]["end"], e["span"]["text"]) for e in exported)
    assert spans == sorted(expected)
    assert all(paragraph[start:end] == text for start, end, text in spans)
    # The table of previous annotations shows each span as it is written.
    table = page.get_by_role("table", name="Previous annotations")
    for quote in quotes:
        expect(table.get_by_text(quote, exact=True).first).to_be_visible()


def test_arabic_and_chinese_pages_are_axe_clean(page: Page, live_server):
    for doc, language, paragraph, quotes in (CASES[0], CASES[3]):
        seed_document(live_server, doc, [paragraph, paragraph], language=language)
        open_task(page, live_server, doc, annotator=f"axe-{doc}")
        seen = {"opened": violations(page)}
        add_span(page, paragraph, quotes[1], backwards=True)
        page.get_by_role("button", name="No more errors. Go to next paragraph").click()
        expect(page.locator(".js-progress")).to_have_text("Paragraph 2 of 2")
        seen["one annotation, second paragraph"] = violations(page)
        assert not any(seen.values()), (doc, seen)
