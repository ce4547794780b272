"""Right-to-left documents in the validator and adjudication views: each paragraph carries
the document's lang and dir (dir="auto" without a language), so Arabic lays out right to
left (Latin names and digits inside it in their order), quotes take their own direction,
and axe finds nothing."""

from __future__ import annotations

import json

from playwright.sync_api import Page, expect

from app.core.extensions import db
from app.imports.document_formats import DocumentInput
from app.imports.document_store import import_documents
from app.models import Annotation, Document
from app.taxonomy import current_taxonomy
from app.validation.rounds import create_round
from tests.support.adjudication import submitted_session
from tests.support.axe import violations
from tests.support.research import add_researcher, log_in

PARAGRAPHS = (
    "في صباح ممطر يدخل المكتبة رجل ألماني اسمه Martin Weber.",
    "Martin Weber يعرض 300 دولار ثمنا للرواية التي نُشرت سنة 1968.",
)
QUOTE = "300 دولار ثمنا"

# The direction the browser computed for each element matching a selector.
DIRECTIONS_JS = """
(selector) => [...document.querySelectorAll(selector)].map((el) => [
  el.lang, el.getAttribute('dir'), getComputedStyle(el).direction,
])
"""


def seed_arabic(live) -> None:
    """The Arabic document, imported with its language."""
    with live.app.app_context():
        import_documents([DocumentInput("rtl-doc", "مكتبة", PARAGRAPHS, language="ar")])


def test_the_validator_shows_arabic_right_to_left(page: Page, live_server, tmp_path):
    seed_arabic(live_server)
    item = {"id": "r1", "source": "human", "document_id": "rtl-doc", "span": {"text": QUOTE}}
    path = tmp_path / "items.jsonl"
    path.write_text(json.dumps(item, ensure_ascii=False) + "\n", "utf-8")
    with live_server.app.app_context():
        create_round("rtl-round", [path], current_taxonomy(), seed=1)
    page.goto(f"{live_server.url}/validate/rtl-round?annotator=v-1")
    expect(page.locator(".validator__paragraph")).to_have_count(2)
    # The second paragraph opens with a Latin name: dir="auto" would make it LTR; the
    # document's language keeps it right to left.
    assert page.evaluate(DIRECTIONS_JS, ".validator__paragraph") == [
        ["ar", "rtl", "rtl"],
        ["ar", "rtl", "rtl"],
    ]
    expect(page.locator(".js-span-text")).to_have_text(QUOTE)
    assert violations(page) == []


def seed_adjudication(live) -> None:
    """The Arabic document with one submitted session holding one annotation."""
    seed_arabic(live)
    with live.app.app_context():
        document = db.session.scalars(db.select(Document).filter_by(external_id="rtl-doc")).one()
        session = submitted_session(document.id, "ann-ar", 1)
        start = PARAGRAPHS[1].index(QUOTE)
        db.session.add(
            Annotation(
                session_id=session.id,
                client_id="00000000-0000-4000-8000-000000000001",
                paragraph_id=1,
                span_start=start,
                span_end=start + len(QUOTE),
                span_text=QUOTE,
                category="inconsistency",
            )
        )
        db.session.commit()
        db.session.remove()


def test_adjudication_shows_arabic_right_to_left(page: Page, live_server):
    add_researcher(live_server)
    seed_adjudication(live_server)
    log_in(page, live_server.url)
    page.goto(f"{live_server.url}/research/documents/rtl-doc/adjudicate")
    expect(page.locator(".adj-paragraph__text")).to_have_count(2)
    assert page.evaluate(DIRECTIONS_JS, ".adj-paragraph__text") == [
        ["ar", "rtl", "rtl"],
        ["ar", "rtl", "rtl"],
    ]
    lanes = page.evaluate(DIRECTIONS_JS, ".adj-lane__text")
    assert lanes and all(lane == ["ar", "rtl", "rtl"] for lane in lanes)
    assert violations(page) == []
