"""Issue 27's "done when", in Chromium: one whole Prolific study at 1280x800 ends on the
study's own completion code with one session for the SESSION_ID; a phone sees the
desktop notice before consent."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect
from sqlalchemy import select

from app.core.extensions import db
from app.exports.record import ExportFilter, iter_annotation_records
from app.models import AnnotationSession
from app.suggestions.records import iter_suggestion_records
from tests.support.annotate_page import select_span
from tests.support.prolific import PROLIFIC, stub_prolific
from tests.support.study_day import (
    SESSION_ID,
    TASK,
    WORKER,
    annotator_ready,
    mark,
    serve_study_day,
)
from tests.support.training import PRACTICE_PARAGRAPHS

DESKTOP_NOTICE = "This task needs a desktop or laptop browser with a mouse"


@pytest.fixture
def study(live_app, tmp_path):
    return serve_study_day(live_app, tmp_path)


def test_a_phone_sees_the_desktop_notice_before_consent(playwright, browser, study):
    """Issue 27.7: phones found out only after consent and the survey."""
    context = browser.new_context(**playwright.devices["iPhone 13"])
    try:
        phone = context.new_page()
        phone.goto(f"{study.url}/start?{WORKER}")
        expect(phone.get_by_role("heading", name="Consent to take part")).to_be_visible()
        expect(phone.get_by_text(DESKTOP_NOTICE)).to_be_visible()
    finally:
        context.close()


def test_a_desktop_sees_no_notice_on_consent(page: Page, study):
    page.goto(f"{study.url}/start?{WORKER}")
    expect(page.get_by_role("heading", name="Consent to take part")).to_be_visible()
    expect(page.get_by_text(DESKTOP_NOTICE)).to_be_hidden()


def test_one_whole_prolific_study_ends_on_the_studys_own_code(page: Page, study):
    """Consent, survey, training, the task with suggestions and severities (a reload in
    the middle of an Edit), Submit, the link opened again, the after-survey: the worker
    lands on Prolific with the study's own code, and the SESSION_ID has one session."""
    asked = stub_prolific(page)
    page.set_viewport_size({"width": 1280, "height": 800})
    link = f"{study.url}/start?{WORKER}"
    page.goto(link)

    expect(page.get_by_role("heading", name="Consent to take part")).to_be_visible()
    expect(page.get_by_text(DESKTOP_NOTICE)).to_be_hidden()
    page.get_by_role("button", name="I agree").click()
    expect(page.get_by_role("heading", name="Before you start")).to_be_visible()
    page.get_by_role("radio", name="No").check()
    page.get_by_role("button", name="Continue").click()

    practice = page.get_by_role("region", name="Practice")
    expect(practice).to_be_visible()
    annotator_ready(page)
    mark(page, PRACTICE_PARAGRAPHS[0], 0, "Lord Findon", "new-person", "major")
    page.get_by_role("button", name="No more errors. Go to next paragraph").click()
    page.get_by_role("button", name="Check my answers").click()
    expect(page.get_by_text("Well done: you passed this practice text.")).to_be_visible()
    page.get_by_role("link", name="Start the task").click()

    # The task: the model's suggestions on the first paragraph.
    annotator_ready(page)
    expect(page.get_by_role("heading", name="A voyage")).to_be_visible()
    bob = page.locator('.js-suggestion[data-suggestion="s-bob"]')
    bob.get_by_role("button", name="Accept").click()
    expect(bob.get_by_role("group", name="Severity of this error")).to_be_visible()
    page.keyboard.press("w")  # Major, by its key
    expect(bob).to_contain_text("Accepted")
    harbour = page.locator('.js-suggestion[data-suggestion="s-harbour"]')
    harbour.get_by_role("button", name="Edit").click()
    span = page.get_by_role("textbox", name="Selected span")
    expect(span).to_have_value("at the harbour")
    start = TASK[0].index("the harbour")
    select_span(page, 0, TASK[0], start, start + len("the harbour"))
    expect(span).to_have_value("the harbour")
    page.get_by_role("button", name="Minor (1)").click()
    page.reload()  # in the middle of the Edit
    annotator_ready(page)
    expect(span).to_have_value("the harbour")
    expect(page.get_by_role("button", name="Minor (1)")).to_have_attribute("aria-pressed", "true")
    page.get_by_role("button", name="Add", exact=True).click()
    expect(harbour).to_contain_text("Edited")
    expect(page.get_by_role("status")).to_have_text("Saved")

    # The second paragraph: reject the suggestion, mark a repetition of the first.
    page.get_by_role("button", name="No more errors. Go to next paragraph").click()
    rain = page.locator('.js-suggestion[data-suggestion="s-rain"]')
    rain.get_by_role("button", name="Reject").click()
    expect(rain).to_contain_text("Rejected")
    select_span(page, 1, TASK[1], 5, 5 + len("Anna met Bob again"))
    page.get_by_role("button", name="Repetition", exact=True).click()
    select_span(page, 0, TASK[0], 0, len("Anna met Bob"))
    expect(page.get_by_role("textbox", name="Paired span")).to_have_value("Anna met Bob")
    page.keyboard.press("w")
    page.get_by_role("button", name="Add", exact=True).click()
    expect(page.get_by_role("status")).to_have_text("Saved")
    page.get_by_role("button", name="No more errors. Go to next paragraph").click()
    expect(page.locator(".js-progress")).to_have_text("Paragraph 3 of 3")
    page.get_by_role("button", name="Submit", exact=True).click()
    page.get_by_role("button", name="Yes, submit").click()
    expect(page.get_by_role("heading", name="A few last questions")).to_be_visible()
    after_survey = page.url

    # The study link opened again after Submit (a second tab): see the end of the test.
    again = page.context.new_page()
    again.goto(link)
    reopened_at = again.url
    again.close()

    page.get_by_role("radio", name="4").check()
    page.get_by_role("button", name="Finish").click()
    expect(page.locator(".completion__code")).to_have_text("C1A2B3C4")
    page.wait_for_url(f"{PROLIFIC}C1A2B3C4")
    assert asked == [f"{PROLIFIC}C1A2B3C4"]

    with study.app.app_context():
        sessions = [
            (s.document.external_id, s.status, s.outcome)
            for s in db.session.scalars(select(AnnotationSession))
            if (s.platform_params or {}).get("session_id") == SESSION_ID
        ]
        records = list(iter_annotation_records(ExportFilter()))
        decided = {r["suggestion_id"]: r["decisions"] for r in iter_suggestion_records()}
    assert ("voyage", "submitted", "completed") in sessions
    got = sorted((r["origin"], r["span"]["text"], r["severity"]) for r in records)
    assert got == [
        ("suggestion-accepted", "Bob", "major"),
        ("suggestion-edited", "the harbour", "minor"),
        ("worker", "Anna met Bob again", "major"),
    ]
    assert {key: [d["decision"] for d in value] for key, value in decided.items()} == {
        "s-bob": ["accepted"],
        "s-harbour": ["edited"],
        "s-rain": ["rejected"],
    }
    # Issue 27 point 2: one Prolific submission (SESSION_ID) is one session, and its link
    # opened again resumes it at its step (the after-survey), not another document at
    # consent.
    assert (reopened_at, sessions) == (after_survey, [("voyage", "submitted", "completed")])
