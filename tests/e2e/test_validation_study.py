"""In Chromium: a Prolific validator arrives at a validation study's start link (issue 30),
agrees to its consent, judges its round's items and ends on the validation study's own
completion code, never the annotation study's; every page axe-clean, and the page of a
study with no open round says so."""

from __future__ import annotations

import os
import re
from pathlib import Path

from playwright.sync_api import Page, expect

from app.core.extensions import db
from tests.support.axe import violations
from tests.support.prolific import returned_with, stub_prolific
from tests.support.research import overflow_by_width
from tests.support.validation_study import (
    ANNOTATION_CODE,
    create_round,
    judged_study,
    validation_study,
)

CONSENT = "consent: |\n  **Checking annotations.** Your verdicts are kept for research.\n"
ARRIVAL = "PROLIFIC_PID=p-val-e2e&STUDY_ID=s-val&SESSION_ID=x-val-e2e"


def _seed(live, folder: Path) -> None:
    runner = live.app.test_cli_runner()
    with live.app.app_context():
        export = judged_study(live.app, runner, folder)
        codes = {"completed": "VDONE111", "no_consent": "VNOCON11"}
        validation_study(runner, folder, "checks", codes, append=CONSENT)
        create_round(runner, "checks", "r1", export)
        validation_study(runner, folder, "empty", codes)
        db.session.remove()


def _shots(page: Page, folder: Path, name: str) -> None:
    assert {width: px for width, px in overflow_by_width(page).items() if px > 0} == {}
    shots = Path(os.environ.get("FALTE_SCREENSHOTS", folder))
    for width in (390, 768, 1280):
        page.set_viewport_size({"width": width, "height": 800})
        page.screenshot(path=str(shots / f"validation-study-{name}-{width}.png"), full_page=True)
    page.set_viewport_size({"width": 1280, "height": 900})


def test_a_prolific_validator_ends_on_the_validation_studys_code(page: Page, live_server, tmp_path):
    _seed(live_server, tmp_path)
    asked = stub_prolific(page)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{live_server.url}/study/checks/start?{ARRIVAL}")
    expect(page).to_have_url(re.compile(r"/v/[\w-]+/consent$"))
    expect(page.get_by_text("Checking annotations.")).to_be_visible()
    assert violations(page) == []
    _shots(page, tmp_path, "consent")
    page.get_by_role("button", name="I agree").click()

    expect(page).to_have_url(re.compile(r"/v/[\w-]+$"))
    progress = page.locator(".js-progress")
    expect(progress).to_have_text("Item 1 of 2")
    assert violations(page) == []
    page.get_by_role("button", name="Agree", exact=True).click()
    expect(progress).to_have_text("Item 2 of 2")
    page.get_by_role("button", name="Agree", exact=True).click()

    expect(page.get_by_text("Thank you, there is nothing left for you to judge")).to_be_visible()
    expect(page.locator(".js-code")).to_have_text("VDONE111")
    assert ANNOTATION_CODE not in page.content()
    assert violations(page) == []
    returned_with(page, asked, "VDONE111")


def test_a_validation_study_with_no_open_round_says_so(page: Page, live_server, tmp_path):
    _seed(live_server, tmp_path)
    page.goto(f"{live_server.url}/study/empty/start?{ARRIVAL}")
    expect(page.get_by_role("heading", level=1, name="Nothing to check right now")).to_be_visible()
    expect(page.get_by_role("link", name="Return to the study")).to_have_attribute(
        "href", "https://app.prolific.com/submissions/complete?cc=VNOCON11"
    )
    assert violations(page) == []
    _shots(page, tmp_path, "no-round")
