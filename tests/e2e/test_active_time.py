"""Active time per paragraph in Chromium: the page's timer (static/js/annotator/activity.mjs)
stops while the tab is hidden, and the move reports it to the server."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from app.core.extensions import db
from app.models import ParagraphTiming
from tests.support.annotate_page import open_task, resize, seed_document, submit_task

# Chromium under Playwright never hides a page by itself: the test makes document.hidden
# report what it says and fires visibilitychange, as a browser does on switching tabs.
SET_HIDDEN = """(hidden) => {
  Object.defineProperty(document, 'hidden', { configurable: true, get: () => hidden });
  Object.defineProperty(document, 'visibilityState', {
    configurable: true, get: () => (hidden ? 'hidden' : 'visible'),
  });
  document.dispatchEvent(new Event('visibilitychange'));
}"""


def timing(live, paragraph_id: int) -> ParagraphTiming:
    with live.app.app_context():
        row = db.session.scalar(db.select(ParagraphTiming).filter_by(paragraph_id=paragraph_id))
        db.session.expunge_all()
    return row


def test_active_time_stops_while_the_tab_is_hidden(page: Page, live_server):
    seed_document(live_server, "timed", ["First paragraph here.", "Second one."])
    open_task(page, live_server, "timed")
    page.wait_for_timeout(400)
    page.evaluate(SET_HIDDEN, True)
    page.wait_for_timeout(2000)
    page.evaluate(SET_HIDDEN, False)
    page.wait_for_timeout(400)
    page.get_by_role("button", name="No more errors. Go to next paragraph").click()
    current = page.get_by_role("region", name="Current Paragraph")
    expect(current).to_contain_text("Second one.")
    first = timing(live_server, 0)
    assert first is not None and first.left_at is not None
    assert first.seconds_visible >= 2.6  # the server's clock counts the hidden time
    assert 0.5 <= first.active_seconds <= first.seconds_visible - 1.5  # the page's does not
    assert timing(live_server, 1).visit_started is not None


def test_dashboard_pacing_section_is_accessible_and_fits_a_phone(page: Page, live_server):
    from tests.support.axe import violations
    from tests.support.research import add_researcher, horizontal_overflow, log_in

    seed_document(live_server, "paced", ["One two three four.", "Five six seven."])
    open_task(page, live_server, "paced")
    page.get_by_role("button", name="No more errors. Go to next paragraph").click()
    expect(page.get_by_role("region", name="Current Paragraph")).to_contain_text("Five six")
    submit_task(page)
    expect(page.locator(".js-completion-code")).to_be_visible()
    add_researcher(live_server)
    log_in(page, live_server.url)
    section = page.get_by_role("region", name="Reading time and fatigue")
    expect(
        section.get_by_role("img", name="Seconds visible per paragraph, by position")
    ).to_be_visible()
    expect(
        section.get_by_role("img", name="Errors found per paragraph, by position")
    ).to_be_visible()
    assert violations(page) == []
    resize(page, 360)
    assert horizontal_overflow(page) == 0
    widest = page.evaluate(
        """() => Math.max(...[...document.querySelectorAll(
             '[aria-labelledby=pacing-heading] figure, [aria-labelledby=pacing-heading] p')]
           .map((e) => e.getBoundingClientRect().right))"""
    )
    assert widest <= 360
