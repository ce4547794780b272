"""In Chromium: the page a worker gets from a study that opens nothing (issue 30): closed,
not open yet, or unknown; it says so, offers the way back, is axe-clean and fits from a
360 px phone to a wide screen."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from app.studies import create_study, require_study, set_status
from tests.support.axe import violations
from tests.support.live_server import LiveServer, serving
from tests.support.research import overflow_by_width


@pytest.fixture
def studies_server(tmp_path, sqlite_template) -> Iterator[LiveServer]:
    """A closed study and a draft."""
    database = tmp_path / "e2e.sqlite3"
    shutil.copy(sqlite_template, database)
    with serving(f"sqlite:///{database}") as live:
        with live.app.app_context():
            create_study("closed-one", "Closed study", status="open")
            set_status(require_study("closed-one"), "closed")
            create_study("draft-one", "Draft study")
        yield live


@pytest.mark.parametrize(
    ("path", "status", "heading"),
    [
        (
            "/study/closed-one/start?PROLIFIC_PID=p1&STUDY_ID=s&SESSION_ID=x",
            410,
            "This study is closed",
        ),
        ("/study/draft-one/start?workerId=W1&assignmentId=A1", 410, "This study is not open yet"),
        ("/study/nowhere/start", 404, "There is no such study"),
    ],
)
def test_a_study_that_opens_nothing_says_so(
    page: Page, studies_server, tmp_path, path, status, heading
):
    answer = page.goto(f"{studies_server.url}{path}")
    assert answer is not None and answer.status == status
    expect(page.get_by_role("heading", level=1, name=heading)).to_be_visible()
    expect(page.get_by_text("Return submission")).to_be_visible()
    assert violations(page) == []
    assert {width: px for width, px in overflow_by_width(page).items() if px > 0} == {}
    shots = Path(os.environ.get("FALTE_SCREENSHOTS", tmp_path))
    for width in (390, 768, 1280):
        page.set_viewport_size({"width": width, "height": 800})
        page.screenshot(
            path=str(shots / f"study-{status}-{path.split('/')[2]}-{width}.png"), full_page=True
        )
