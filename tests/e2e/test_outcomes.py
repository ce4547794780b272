"""In Chromium: where Submit sends a worker. A Prolific worker lands on Prolific's
completion URL with the study's fixed code of their outcome (Playwright answers for
app.prolific.com: no real network); an MTurk worker's form posts the outcome."""

from __future__ import annotations

from urllib.parse import parse_qs

import pytest
from playwright.sync_api import Page, Route, expect
from sqlalchemy import select

from app.core.extensions import db
from app.imports.document_formats import DocumentInput
from app.models import AnnotationSession
from tests.support.annotate_page import submit_task
from tests.support.live_server import LiveServer
from tests.support.prolific import PROLIFIC, returned_with, stub_prolific
from tests.support.taxonomies import taxonomy_variant

STUDY = """\
  completion:
    completed: C1A2B3C4
    failed_checks: CQ5R4S3T
  attention_checks: fail
"""
TEXT = "Carol waved at the ship."
GOLD = [{"paragraph_id": 0, "start": 0, "end": 5, "category": "new-person"}]


@pytest.fixture
def study_server(live_app, tmp_path) -> LiveServer:
    """The app with per-outcome Prolific codes and `attention_checks: fail`, on SQLite,
    with an ordinary document (doc-1) and an attention check (check-1). Workers enter at
    /start (a study with codes), which hands out doc-1 (no attention-check share)."""
    return _serve(live_app, tmp_path, STUDY)


@pytest.fixture
def checks_first_server(live_app, tmp_path) -> LiveServer:
    """study_server, whose /start hands the first worker the check (a share of 0.5)."""
    return _serve(live_app, tmp_path, STUDY + "  attention_check_share: 0.5\n")


def _serve(live_app, tmp_path, study: str) -> LiveServer:
    return live_app(
        taxonomy=taxonomy_variant(tmp_path, study=study),
        documents=[
            DocumentInput("doc-1", "A summary", (TEXT,)),
            DocumentInput("check-1", "Another summary", (TEXT,), gold=GOLD),
        ],
    )


PROLIFIC_WORKER = "PROLIFIC_PID=p1&STUDY_ID=s1&SESSION_ID=x1"


def test_a_prolific_worker_lands_on_the_fixed_code_of_completed(page: Page, study_server):
    asked = stub_prolific(page)
    page.goto(f"{study_server.url}/start?{PROLIFIC_WORKER}")
    submit_task(page)
    # The code Prolific expects is shown before leaving, never the app's own (issue 27.1).
    expect(page.locator(".js-completion-code")).to_have_text("C1A2B3C4")
    with study_server.app.app_context():
        own = db.session.scalars(select(AnnotationSession.completion_code)).one()
    expect(page.locator(".js-completion")).not_to_contain_text(own)
    returned_with(page, asked, "C1A2B3C4")


def test_a_prolific_worker_who_missed_the_checks_lands_on_failed_checks(
    page: Page, checks_first_server
):
    asked = stub_prolific(page)
    page.goto(f"{checks_first_server.url}/start?{PROLIFIC_WORKER}")  # the check
    submit_task(page)  # nothing marked: the gold missed
    page.wait_for_url(f"{PROLIFIC}CQ5R4S3T")
    assert asked == [f"{PROLIFIC}CQ5R4S3T"]


def test_reopening_a_submitted_task_does_not_leave_the_page(page: Page, study_server):
    stub_prolific(page)
    page.goto(f"{study_server.url}/start?{PROLIFIC_WORKER}")
    submit_task(page)
    page.wait_for_url(f"{PROLIFIC}C1A2B3C4")
    # The document's own link resumes the worker's session (their SESSION_ID is the proof).
    page.goto(f"{study_server.url}/annotate/doc-1?{PROLIFIC_WORKER}")
    expect(page.get_by_role("link", name="Return to the study")).to_be_visible()
    page.wait_for_timeout(2500)  # longer than the follow delay after a Submit
    assert page.url.startswith(study_server.url)


def test_an_mturk_workers_form_posts_the_outcome(page: Page, checks_first_server):
    posted: list[dict[str, list[str]]] = []

    def answer(route: Route) -> None:
        posted.append(parse_qs(route.request.post_data or ""))
        route.fulfill(status=200, content_type="text/html", body="<title>MTurk</title>")

    page.route("https://workersandbox.mturk.com/**", answer)
    mturk = (
        "workerId=W1&assignmentId=A1&hitId=H1&turkSubmitTo=https%3A%2F%2Fworkersandbox.mturk.com"
    )
    page.goto(f"{checks_first_server.url}/start?{mturk}")  # the check
    submit_task(page)
    button = page.get_by_role("button", name="Send your work to MTurk")
    form = page.locator("form", has=button)
    expect(form.locator("input[name=outcome]")).to_have_value("failed_checks")
    code = page.locator(".js-completion-code").text_content()
    button.click()
    page.wait_for_url("https://workersandbox.mturk.com/mturk/externalSubmit")
    assert posted == [
        {"assignmentId": ["A1"], "completion_code": [code], "outcome": ["failed_checks"]}
    ]
