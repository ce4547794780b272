"""The research console in Chromium (issue 27, point 11): the documents table shows γ
and Pair F1 at 1280 px (a taxonomy with severities adds the MQM column; long document
ids), and where it is wider than its box it scrolls in a focusable, labelled group that
the keyboard scrolls."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from app.core.extensions import db
from tests.support.accounts import add_account
from tests.support.annotate_page import wait_until
from tests.support.axe import violations
from tests.support.research_console import EMAIL, PASSWORD, log_in
from tests.support.severities import severity_taxonomy
from tests.support.synthetic_study import seed_study

# The header cells' right edges and the scroll box's, in the page.
EDGES_JS = """
(group) => ({
  box: group.getBoundingClientRect().right,
  headers: Object.fromEntries([...group.querySelectorAll('thead th')].map(
    (th) => [th.textContent.trim(), th.getBoundingClientRect().right])),
})
"""


@pytest.fixture
def graded_console(live_app, tmp_path):
    """A seeded study under a taxonomy with severities, long document ids."""
    live = live_app(taxonomy=severity_taxonomy(tmp_path))
    app = live.app
    with app.app_context():
        add_account(EMAIL, PASSWORD)
        db.session.commit()
        keys = app.extensions["taxonomy"].keys
        seed_study(6, 3, 8, categories=keys, check_documents=1, workers=9, tag="summary-long-")
        db.session.remove()
    return live


def test_the_documents_table_fits_or_scrolls_visibly(page: Page, graded_console):
    page.set_viewport_size({"width": 1280, "height": 800})
    log_in(page, graded_console.url)
    table = page.get_by_role("group", name="Documents")
    expect(table).to_have_attribute("tabindex", "0")
    edges = table.evaluate(EDGES_JS)
    for header in ("MQM", "γ", "Pair F1"):
        assert edges["headers"][header] <= edges["box"] + 0.5, (header, edges)
    assert not violations(page)

    page.set_viewport_size({"width": 768, "height": 800})
    assert table.evaluate("(group) => group.scrollWidth > group.clientWidth")
    table.focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    # The browser may scroll smoothly.
    wait_until(page, lambda: table.evaluate("(group) => group.scrollLeft") > 0)
