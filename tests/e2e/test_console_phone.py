"""Every researcher-console page from a 360 px phone to a wide screen (issue 29): with a
study big enough that its tables are wider than a phone, each page is axe-clean at 360,
390, 768 and 1280 px, no page is wider than the screen, and every table that may scroll
sits in a labelled group (templates/_scroll.html) that Tab reaches, so the keyboard can
scroll it."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect
from sqlalchemy import select

from app.core.extensions import db
from app.models import AnnotationSession
from app.taxonomy import current_taxonomy
from tests.support.accounts import add_account
from tests.support.adjudication import DOC_ID, seed_adjudication_document
from tests.support.axe import violations
from tests.support.live_server import LiveServer
from tests.support.research_console import EMAIL, PASSWORD, log_in
from tests.support.synthetic_study import seed_study
from tests.support.validation import judge, next_item, start_validator
from tests.support.validator_round import seed_round

WIDTHS = (360, 390, 768, 1280)

# The document's width against the viewport's, and each scroll region's name and size.
LAYOUT_JS = """
() => ({
  page: document.documentElement.scrollWidth,
  viewport: document.documentElement.clientWidth,
  regions: [...document.querySelectorAll('.table-scroll')].map((region) => ({
    name: (region.getAttribute('aria-labelledby') || '').split(' ')
      .map((id) => document.getElementById(id)?.textContent.trim() || '').join(' '),
    role: region.getAttribute('role'),
    tabindex: region.getAttribute('tabindex'),
    scrolls: region.scrollWidth > region.clientWidth,
  })),
  // A table outside a scroll region must fit its box (the worker's table of the session
  // viewer turns into cards instead of scrolling).
  bare: [...document.querySelectorAll('table')]
    .filter((table) => !table.parentElement.classList.contains('table-scroll'))
    .filter((table) => table.scrollWidth > table.parentElement.clientWidth + 0.5).length,
})
"""


@pytest.fixture
def big_console(live_app, tmp_path) -> LiveServer:
    """A researcher, a seeded study with long document ids, a validation round judged
    and a document with three sessions to adjudicate."""
    live = live_app()
    with live.app.app_context():
        add_account(EMAIL, PASSWORD)
        db.session.commit()
        keys = current_taxonomy().keys
        seed_study(12, 3, 8, categories=keys, check_documents=1, workers=9, tag="summary-long-")
        seed_adjudication_document()
        db.session.remove()
    seed_round(live, tmp_path)
    client = live.app.test_client()
    judged = 0
    with live.app.app_context():
        token = start_validator(client, "blind-1", annotator="validator-with-a-long-name")
        while (item := next_item(client, token)["item"]) is not None:
            judged += 1
            other = "D. Other" if item.get("question") else "Other"  # the two protocols
            verdict = ("disagree", [other]) if judged % 2 else ("agree", [])
            posted = judge(client, token, item["id"], *verdict)
            assert posted.status_code == 201, posted.get_json()
        db.session.remove()
    assert judged == 3
    return live


def console_pages(live: LiveServer) -> dict[str, str]:
    """Every page of the console, by name: its path."""
    with live.app.app_context():
        first = db.session.scalars(select(AnnotationSession.id).order_by("id")).first()
        db.session.remove()
    return {
        "dashboard": "/research/",
        "document": "/research/documents/summary-long-doc-00001",
        "session viewer": f"/research/sessions/{first}",
        "study links": "/research/study?annotator=a11y",
        "taxonomy preview": "/research/taxonomy",
        "rounds": "/research/rounds",
        "round report": "/research/rounds/blind-1",
        "analyses": "/research/analyses",
        "adjudication": f"/research/documents/{DOC_ID}/adjudicate",
    }


def tab_reaches(page: Page, count: int) -> set[str]:
    """Press Tab through the page; the scroll regions' labelledby ids that took focus."""
    page.evaluate("() => document.activeElement?.blur()")
    page.locator("body").focus()
    reached: set[str] = set()
    for _ in range(400):
        page.keyboard.press("Tab")
        found = page.evaluate(
            "() => document.activeElement?.classList.contains('table-scroll')"
            " ? document.activeElement.getAttribute('aria-labelledby') : null"
        )
        if found:
            reached.add(found)
            if len(reached) == count:
                break
    return reached


def test_every_console_page_fits_a_phone(big_console, page: Page):
    pages = console_pages(big_console)
    assert len(pages) == 9
    log_in(page, big_console.url)
    seen, scrolled, regions = {}, set(), {}
    for name, path in pages.items():
        page.set_viewport_size({"width": 1280, "height": 900})
        response = page.goto(big_console.url + path)
        assert response is not None and response.ok, (name, response and response.status)
        expect(page.get_by_role("heading", level=1)).to_be_visible()
        if name == "analyses":  # with a result: its table (the page reloads once computed)
            page.get_by_role("button", name="Compute the recall estimate").click()
            expect(
                page.get_by_role("group", name="How many errors did nobody find?")
            ).to_be_visible(timeout=60_000)
        for width in WIDTHS:
            page.set_viewport_size({"width": width, "height": 900})
            layout = page.evaluate(LAYOUT_JS)
            problems = violations(page)
            if layout["page"] > layout["viewport"]:
                problems.append(f"page {layout['page']} px wide in {layout['viewport']} px")
            if layout["bare"]:
                problems.append(f"{layout['bare']} tables too wide outside a scroll region")
            for region in layout["regions"]:
                if not region["name"] or region["role"] != "group" or region["tabindex"] != "0":
                    problems.append(f"scroll region {region}")
                if region["scrolls"]:
                    scrolled.add((name, width))
            if problems:
                seen[f"{name} at {width} px"] = problems
        if name in ("dashboard", "document", "round report"):
            for width in (390, 768, 1280):
                page.set_viewport_size({"width": width, "height": 900})
                page.screenshot(path=f"/tmp/console-phone-{name.replace(' ', '-')}-{width}.png")
        ids = {
            region.get_attribute("aria-labelledby")
            for region in page.locator(".table-scroll").all()
        }
        reached = tab_reaches(page, len(ids))
        if reached != ids:
            seen[f"{name}: Tab"] = [f"reaches {sorted(reached)} of {sorted(ids, key=str)}"]
        regions[name] = len(ids)
    assert seen == {}
    # Nine pages walked; every one but the adjudication page (no table) has its tables.
    assert len(regions) == 9 and sum(regions.values()) >= 17, regions
    assert [name for name, count in regions.items() if not count] == ["adjudication"], regions
    # The data is big enough that tables do scroll at phone widths on most pages.
    assert {name for name, width in scrolled if width == 360} >= {"dashboard", "document"}
