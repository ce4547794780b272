"""In Chromium, the validator's end (issue 27, point 1): a Prolific validator sees the
study's own code for `completed` (C1A2B3C4), never the app's per-session code, and where
the study's address is a fixed URL without a code, no code at all, only the Return link.
(The worker's pages: tests/e2e/test_outcomes.py and tests/e2e/test_study_day.py.)"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from app.core.extensions import db
from app.models import ValidationSession
from tests.support.apps import ROOT
from tests.support.prolific import stub_prolific
from tests.support.studies import use_taxonomy
from tests.support.validator_round import seed_round

PROLIFIC_VALIDATOR = "PROLIFIC_PID=p1&STUDY_ID=s1&SESSION_ID=x1"


def use_completion(live, tmp_path, completion: str) -> None:
    """The default taxonomy with `study.completion` set, as the running one."""
    text = (ROOT / "config" / "taxonomy.yaml").read_text(encoding="utf-8")
    path = tmp_path / "taxonomy.yaml"
    path.write_text(text.replace("\nstudy:\n", f"\nstudy:\n  completion: {completion}\n", 1))
    use_taxonomy(live.app, path)


def judge_everything(page: Page) -> None:
    progress = page.locator(".js-progress")
    for expected in ("Item 1 of 3", "Item 2 of 3", "Item 3 of 3"):
        expect(progress).to_have_text(expected)
        page.get_by_role("button", name="Agree", exact=True).click()


def own_code(live) -> str:
    with live.app.app_context():
        return db.session.scalars(db.select(ValidationSession.completion_code)).one()


@pytest.mark.parametrize(
    ("completion", "shown", "target"),
    [
        (
            "{completed: C1A2B3C4}",
            "C1A2B3C4",
            "https://app.prolific.com/submissions/complete?cc=C1A2B3C4",
        ),
        ("{completed: 'https://example.org/thanks'}", None, "https://example.org/thanks"),
    ],
    ids=["prolific-code", "fixed-url"],
)
def test_the_validators_end_shows_the_platform_code(
    page: Page, live_server, tmp_path, completion, shown, target
):
    seed_round(live_server, tmp_path)
    use_completion(live_server, tmp_path, completion)
    stub_prolific(page)
    page.route("https://example.org/**", lambda route: route.fulfill(body="thanks"))
    page.goto(f"{live_server.url}/validate/blind-1?{PROLIFIC_VALIDATOR}")
    judge_everything(page)
    done = page.locator(".js-done")
    expect(done.get_by_role("link", name="Return to the study")).to_have_attribute("href", target)
    if shown:
        expect(done.locator(".js-code")).to_have_text(shown)
    else:
        expect(done.locator(".js-code-row")).to_be_hidden()
    assert own_code(live_server) not in done.inner_text()  # before the link is followed
