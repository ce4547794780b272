"""In Chromium: the pages that refuse a place (issue 26, point 3) say why and what to do,
are axe-clean and fit from a 360 px phone to a wide screen: a network that holds its cap
of open sessions (429), an unsigned document link in a study entered at /start (403), and
a link to a retired document (410)."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from app.imports.document_formats import DocumentInput
from tests.support.axe import violations
from tests.support.live_server import LiveServer, run_commands
from tests.support.research import overflow_by_width
from tests.support.taxonomies import taxonomy_variant

STUDY = """\
  completion: {completed: C1A2B3C4}
  max_open_per_network: 1
"""


@pytest.fixture
def capped_server(live_app, tmp_path) -> LiveServer:
    """A study entered at /start, one open session per network, two documents."""
    return live_app(
        taxonomy=taxonomy_variant(tmp_path, study=STUDY),
        documents=[
            DocumentInput("doc-1", "A summary", ("Anna met Bob.",)),
            DocumentInput("doc-2", "Another", ("Carol left.",)),
        ],
    )


def worker(number: int) -> str:
    return f"PROLIFIC_PID=p{number}&STUDY_ID=s1&SESSION_ID=x{number}"


@pytest.mark.parametrize(
    ("path", "status", "heading"),
    [
        ("/start?" + worker(2), 429, "Too many tasks are open from your network"),
        ("/annotate/doc-2?" + worker(3), 403, "Open this study from your study link"),
    ],
)
def test_a_refused_place_says_why(page: Page, capped_server, tmp_path, path, status, heading):
    first = page.goto(f"{capped_server.url}/start?{worker(1)}")  # the network's one session
    assert first is not None and first.status == 200 and "/s/" in page.url
    # The task page's modules loaded: leaving mid-load dropped a static file's connection
    # (an unraisable ResourceWarning in the live server, now and then).
    page.wait_for_load_state("networkidle")
    answer = page.goto(f"{capped_server.url}{path}")
    assert answer is not None and answer.status == status
    expect(page.get_by_role("heading", level=1, name=heading)).to_be_visible()
    expect(page.get_by_role("heading", level=2)).to_be_visible()  # what to do
    assert violations(page) == []
    assert {width: px for width, px in overflow_by_width(page).items() if px > 0} == {}
    for width in (390, 768, 1280):
        page.set_viewport_size({"width": width, "height": 800})
        page.screenshot(path=str(tmp_path / f"refused-{status}-{width}.png"), full_page=True)


def test_a_retired_documents_link_says_it_takes_no_new_tasks(page: Page, live_app, tmp_path):
    # Issue 30 point 3: a document retired (here by `flask retire-documents`) refuses a
    # new session on its link with a 410 page; the worker's own session still opens.
    server = live_app(documents=[DocumentInput("doc-1", "A summary", ("Anna met Bob.",))])
    own = page.goto(f"{server.url}/annotate/doc-1?annotator=alice")
    assert own is not None and own.status == 200 and "/s/" in page.url
    page.wait_for_load_state("networkidle")
    run_commands(server, ["retire-documents", "doc-1"])
    page.context.clear_cookies()  # another worker, in a browser of their own
    answer = page.goto(f"{server.url}/annotate/doc-1?annotator=bob")
    assert answer is not None and answer.status == 410
    heading = "This text takes no new tasks"
    expect(page.get_by_role("heading", level=1, name=heading)).to_be_visible()
    expect(page.get_by_role("heading", level=2)).to_be_visible()  # what to do
    assert violations(page) == []
    assert {width: px for width, px in overflow_by_width(page).items() if px > 0} == {}
    for width in (390, 768, 1280):
        page.set_viewport_size({"width": width, "height": 800})
        page.screenshot(path=str(tmp_path / f"retired-{width}.png"), full_page=True)
