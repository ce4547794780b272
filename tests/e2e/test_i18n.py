"""The interface in Arabic (`study: language: ar`), in Chromium: the page's words and the
modules' messages are Arabic, `<html dir="rtl">` mirrors the layout (logical CSS
properties), a worker can annotate, and axe finds no violation."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.support.annotate_page import open_task, seed_document, select_span
from tests.support.axe import violations
from tests.support.live_server import LiveServer
from tests.support.taxonomies import taxonomy_variant
from tests.support.validator_round import seed_round

PARAGRAPHS = ("Anna met Bob at the harbour. Bob smiled.", "The ship left at dawn.")


@pytest.fixture
def arabic_server(live_app, tmp_path) -> LiveServer:
    """The app with `study: language: ar`, on SQLite, with one document."""
    live = live_app(taxonomy=taxonomy_variant(tmp_path, study="  language: ar\n"))
    seed_document(live, "doc-ar", PARAGRAPHS)
    return live


def box(page: Page, selector: str) -> dict:
    found = page.locator(selector).bounding_box()
    assert found, selector
    return found


def test_the_annotator_page_in_arabic_is_mirrored_and_accessible(page: Page, arabic_server):
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{arabic_server.url}/annotate/doc-ar?annotator=w1")
    current = page.get_by_role("region", name="الفقرة الحالية")
    expect(current.locator("[data-paragraph]")).to_have_count(1)
    html = page.locator("html")
    expect(html).to_have_attribute("lang", "ar")
    expect(html).to_have_attribute("dir", "rtl")
    expect(page.locator(".js-progress")).to_have_text("الفقرة 1 من 2")  # written by the module

    # Mirrored: the Current Paragraph is right of the steps, which start at the right edge.
    text, steps = box(page, ".annotator__current"), box(page, ".annotator__side")
    assert text["x"] > steps["x"] + steps["width"] - 1
    heading = box(page, "#current-heading")
    assert heading["x"] + heading["width"] > text["x"] + text["width"] - 40  # text-align: start
    seen = {"task opened": violations(page)}

    select_span(page, 0, PARAGRAPHS[0], 9, 12)
    expect(page.locator("#selected-span")).to_have_value("Bob")
    page.get_by_role("button", name="New person not introduced", exact=True).click()
    page.get_by_role("button", name="إضافة", exact=True).click()
    expect(page.get_by_role("status")).to_have_text("تم الحفظ")
    expect(page.get_by_role("button", name="إزالة")).to_be_visible()
    seen["one annotation"] = violations(page)
    assert not any(seen.values()), seen


def test_the_validator_page_in_arabic_is_accessible(page: Page, arabic_server, tmp_path):
    seed_round(arabic_server, tmp_path)
    page.goto(f"{arabic_server.url}/validate/blind-1?annotator=v1")
    expect(page.locator(".js-progress")).to_have_text("العنصر 1 من 3")
    expect(page.locator("html")).to_have_attribute("dir", "rtl")
    seen = {"first item": violations(page)}
    page.get_by_role("button", name="لا أوافق").click()
    expect(page.get_by_role("alert")).to_have_text("اختر سببًا واحدًا على الأقل، إلا إذا كنت موافقًا.")
    seen["reason missing"] = violations(page)
    assert not any(seen.values()), seen


def test_the_same_page_in_english_is_not_mirrored(page: Page, live_server):
    """The counterpart of the test above: left-to-right, the text is left of the steps."""
    page.set_viewport_size({"width": 1280, "height": 900})
    seed_document(live_server, "doc-en", PARAGRAPHS)
    open_task(page, live_server, "doc-en")
    expect(page.locator("html")).to_have_attribute("dir", "ltr")
    text, steps = box(page, ".annotator__current"), box(page, ".annotator__side")
    assert text["x"] + text["width"] < steps["x"] + 1
