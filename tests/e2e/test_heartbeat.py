"""The annotator page's heartbeat (static/js/annotator/heartbeat.mjs): about once a minute
while the page is visible, none while it is hidden, one at once when it is shown again.
The browser's clock is Playwright's, so minutes pass in an instant."""

from __future__ import annotations

from playwright.sync_api import Page

from tests.support.annotate_page import open_task, seed_document

SET_VISIBILITY_JS = """
(state) => {
  Object.defineProperty(document, 'visibilityState', {value: state, configurable: true});
  document.dispatchEvent(new Event('visibilitychange'));
}
"""


def test_the_page_sends_a_heartbeat_each_minute_while_visible(page: Page, live_server):
    seed_document(live_server, "beat", ["Only one paragraph here."])
    beats: list[int] = []
    page.on(
        "response",
        lambda response: (
            beats.append(response.status)
            if response.url.endswith("/heartbeat") and response.request.method == "POST"
            else None
        ),
    )
    page.clock.install()
    open_task(page, live_server, "beat")

    page.clock.run_for("00:50")
    page.wait_for_timeout(300)
    assert beats == []  # loading the page was the activity of this first minute
    with page.expect_response(lambda r: r.url.endswith("/heartbeat")):
        page.clock.run_for("00:15")
    with page.expect_response(lambda r: r.url.endswith("/heartbeat")):
        page.clock.run_for("01:00")
    assert beats == [204, 204]

    page.evaluate(SET_VISIBILITY_JS, "hidden")  # another tab in front
    page.clock.run_for("05:00")
    page.wait_for_timeout(300)
    assert beats == [204, 204]
    with page.expect_response(lambda r: r.url.endswith("/heartbeat")):
        page.evaluate(SET_VISIBILITY_JS, "visible")  # back: claim the place at once
    assert beats == [204, 204, 204]


def test_a_preview_sends_no_heartbeat(page: Page, live_server):
    seed_document(live_server, "preview", ["Only one paragraph here."])
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.clock.install()
    page.goto(
        f"{live_server.url}/annotate/preview?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=H"
    )
    page.locator('[data-module="annotator"][data-ready="true"]').wait_for()
    page.clock.run_for("03:00")
    page.wait_for_timeout(300)
    assert not [url for url in requests if "/api/" in url]
