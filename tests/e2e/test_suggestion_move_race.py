"""In Chromium: a move right after a Reject waits for the Reject to reach the server.
Found walking the study for issue 27: Reject is queued and sent in the background, and
"No more errors. Go to next paragraph" asked the server for the next paragraph at once,
which refused it (422 suggestions_undecided) while the Reject was still on its way: "Could
not load the next paragraph". Here the Reject is held back until after the click."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, Route, expect

from tests.support.annotate_page import wait_until
from tests.support.study_day import (
    reach_the_task,
    serve_study_day,
)


@pytest.fixture
def study(live_app, tmp_path):
    return serve_study_day(live_app, tmp_path)


def test_next_after_a_reject_waits_for_it(page: Page, study):
    reach_the_task(page, study)
    bob = page.locator('.js-suggestion[data-suggestion="s-bob"]')
    bob.locator('[data-action="accept"]').click()
    bob.locator('[data-action="severity"][data-severity="major"]').click()
    expect(page.get_by_role("status")).to_have_text("Saved")

    held: list[Route] = []
    page.route("**/suggestions/*/rejection", lambda route: held.append(route))
    harbour = page.locator('.js-suggestion[data-suggestion="s-harbour"]')
    harbour.get_by_role("button", name="Reject").click()
    expect(harbour).to_contain_text("Rejected")
    wait_until(page, lambda: held)  # the Reject is on its way, held
    assert len(held) == 1
    page.get_by_role("button", name="No more errors. Go to next paragraph").click()
    page.wait_for_timeout(300)
    held[0].continue_()
    expect(page.locator(".js-progress")).to_have_text("Paragraph 2 of 3")
    expect(page.get_by_role("status")).not_to_contain_text("Could not load")
