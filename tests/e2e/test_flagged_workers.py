"""In Chromium (issue 28, point 5): a Prolific worker flagged by an attention check opens
/start and meets the end of the study with the study's failed_checks code; the research
dashboard names the workers it leaves out and its switch counts them again. Both pages
axe-clean from a phone to a wide screen."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from app.core.extensions import db
from app.models import Annotator
from tests.support.accounts import add_account
from tests.support.assignment import taxonomy_with
from tests.support.axe import violations
from tests.support.flagged import seed_flagged_study, session
from tests.support.live_server import LiveServer
from tests.support.research_console import EMAIL, PASSWORD, log_in

PROLIFIC = {"PROLIFIC_PID": "p" * 24, "STUDY_ID": "s" * 24, "SESSION_ID": "x" * 24}
WIDTHS = (360, 390, 768, 1280)


@pytest.fixture
def flagged(live_app, tmp_path) -> LiveServer:
    """The study of tests/support/flagged.py, a Prolific worker who marked nothing on the
    check, a researcher account; failed_checks has its own Prolific code."""
    taxonomy = taxonomy_with(tmp_path, completion="{completed: CDONE, failed_checks: CQ5R4S3T}")
    live = live_app(taxonomy=taxonomy)
    with live.app.app_context():
        documents = seed_flagged_study()
        worker = Annotator(platform="prolific", external_id=PROLIFIC["PROLIFIC_PID"])
        db.session.add(worker)
        db.session.flush()
        checked = session(documents["check-1"], "placeholder", [])
        checked.annotator_id, checked.platform = worker.id, "prolific"
        add_account(EMAIL, PASSWORD)
        db.session.commit()
        db.session.remove()
    return live


def test_a_flagged_worker_meets_the_end_of_the_study(flagged, page: Page):
    query = "&".join(f"{key}={value}" for key, value in PROLIFIC.items())
    page.goto(f"{flagged.url}/start?{query}")
    expect(page.get_by_role("heading", name="No tasks left")).to_be_visible()
    expect(page.get_by_text("no more documents for you in this study")).to_be_visible()
    link = page.get_by_role("link", name="Return to the study")
    expect(link).to_have_attribute(
        "href", "https://app.prolific.com/submissions/complete?cc=CQ5R4S3T"
    )
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 800})
        assert violations(page) == [], width
        page.screenshot(path=f"/tmp/flagged-start-{width}.png", full_page=True)


def test_the_dashboard_names_them_and_its_switch_counts_them(flagged, page: Page):
    log_in(page, flagged.url)
    banner = page.locator(".flagged-switch")
    expect(banner).to_contain_text("4 workers left out of every figure")
    expect(banner).to_contain_text("direct:lazy (below the attention-check threshold)")
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        assert violations(page) == [], width
        box = banner.bounding_box()
        assert box is not None and box["x"] + box["width"] <= width, width
        banner.screenshot(path=f"/tmp/flagged-dashboard-{width}.png")
    page.set_viewport_size({"width": 1280, "height": 900})
    page.get_by_role("link", name="Count flagged workers").focus()
    page.keyboard.press("Enter")
    expect(banner).to_contain_text("Every figure on this page counts the 4 workers")
    expect(page.get_by_role("link", name="Leave flagged workers out")).to_be_visible()
    assert violations(page) == []
