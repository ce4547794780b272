"""XSS payloads in every place text enters — document text, title and entities, worker
comments and identities, taxonomy title, names, descriptions, prompts and instructions,
validation questions — rendered in Chromium on every page that shows them. The `page`
fixture fails the test on any dialog, so a payload that ran would fail it; we also check
that no payload became an element."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import Page, expect

from app.core.extensions import db
from app.imports.document_formats import DocumentInput
from app.imports.document_store import import_documents
from app.taxonomy import current_taxonomy
from app.validation.rounds import create_round
from tests.support.accounts import add_account
from tests.support.annotate_page import select_span

IMG = "<img src=x onerror=alert(document.domain)>"
SCRIPT = "<script>alert('xss')</script>"
SVG = "<svg onload=alert(1)>"
PAYLOAD = f"{IMG}{SCRIPT}{SVG}"
EMAIL = "xss@example.org"
PASSWORD = "a-long-enough-password"

TAXONOMY = f"""
title: "Errors {PAYLOAD}"
instructions: |
  Read carefully. {IMG} [click me](javascript:alert(1)) {SCRIPT}
comment: {{label: "Comment {SVG}", required: false}}
categories:
  - key: odd
    name: "Odd {IMG}"
    type: singleton
    description: "Description {SCRIPT}"
    shortcut: "1"
  - key: twice
    name: "Twice {SVG}"
    type: paired
    description: "Said twice {IMG}"
    paired_prompt: "Pick the first {SCRIPT}"
"""
PARAGRAPHS = (f"Zoë saw {IMG} at the harbour.", f"Later Zoë wrote {SCRIPT} again.")


@pytest.fixture
def hostile(live_app, tmp_path):
    """A live app on a hostile taxonomy, with a hostile document, round and researcher."""
    taxonomy = tmp_path / "hostile.yaml"
    taxonomy.write_text(TAXONOMY, "utf-8")
    live = live_app(taxonomy=taxonomy)
    items = tmp_path / "items.jsonl"
    items.write_text(
        json.dumps(
            {
                "id": "x1",
                "source": "gpt-4",
                "document_id": "xss-doc",
                "span": {"text": "harbour"},
                "labels": [f"label {IMG}"],
                "question": f"Why {SCRIPT}?",
                "comment": f"note {SVG}",
            }
        )
        + "\n",
        "utf-8",
    )
    with live.app.app_context():
        import_documents([DocumentInput("xss-doc", f"Title {PAYLOAD}", PARAGRAPHS, (f"Zoë{IMG}",))])
        create_round("xss-round", [items], current_taxonomy(), seed=1)
        add_account(EMAIL, PASSWORD)
        db.session.commit()
        db.session.remove()
    return live


def assert_inert(page: Page) -> None:
    """No payload turned into an element, and no javascript: link exists."""
    assert page.locator("img[src='x'], svg[onload], script:not([src])").count() == 0
    assert page.locator("a[href^='javascript:']").count() == 0


def test_payloads_stay_text_on_every_page(hostile, page: Page):
    base = hostile.url
    assert hostile.app.extensions["taxonomy"].title == f"Errors {PAYLOAD}"
    hostile.app.config["APP_ENV"] = "development"  # `/` lists documents in development only
    page.goto(f"{base}/")
    expect(page.get_by_text(f"Title {PAYLOAD}")).to_be_visible()
    assert_inert(page)

    annotator = f"w{SCRIPT}"
    page.goto(f"{base}/annotate/xss-doc?annotator={annotator}")
    expect(page.get_by_role("heading", level=1)).to_have_text(f"Title {PAYLOAD}")
    expect(page.get_by_role("button", name=f"Odd {IMG}")).to_be_visible()
    expect(page.locator('[data-paragraph="0"]')).to_have_text(PARAGRAPHS[0])
    start = PARAGRAPHS[0].index("harbour")
    select_span(page, 0, PARAGRAPHS[0], start, start + len("harbour"))
    page.get_by_role("button", name=f"Odd {IMG}").click()
    page.get_by_role("textbox", name=f"Comment {SVG}").fill(PAYLOAD)
    page.get_by_role("button", name="Add", exact=True).click()
    expect(page.get_by_role("status")).to_have_text("Saved")
    expect(page.locator(".js-annotation-row")).to_contain_text(PAYLOAD)
    assert_inert(page)
    page.locator("[data-paragraph='0'] mark").first.hover()  # tooltips with the comment
    assert_inert(page)

    page.goto(f"{base}/validate/xss-round?annotator=v1")
    expect(page.get_by_text(f"Why {SCRIPT}?")).to_be_visible()
    assert_inert(page)

    page.goto(f"{base}/research/login")
    page.get_by_label("E-mail").fill(EMAIL)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Study dashboard")).to_be_visible()
    for path in (
        "/research/",
        "/research/taxonomy",
        "/research/study",
        "/research/rounds",
        "/research/rounds/xss-round",
    ):
        page.goto(f"{base}{path}")
        assert_inert(page)
    page.goto(f"{base}/research/")
    page.get_by_role("link", name="xss-doc").first.click()
    expect(page.get_by_text(re.compile(re.escape(SCRIPT))).first).to_be_visible()
    assert_inert(page)
