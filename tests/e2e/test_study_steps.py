"""In Chromium: consent, the surveys and the ends of the study. A Prolific worker agrees,
answers the before-survey, does the task, Submits, answers the after-survey and lands on
Prolific's `completed` code; one who declines lands on the `no_consent` code. By mouse and
by keyboard only, with axe on every page and no horizontal scrolling from 360 px up.
(Playwright answers for app.prolific.com: no real network.)"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect
from sqlalchemy import select

from app.core.extensions import db
from app.core.security import capability_csrf_token
from app.imports.document_formats import DocumentInput
from app.models import AnnotationSession, SurveyAnswer
from tests.support.annotate_page import submit_task
from tests.support.axe import violations
from tests.support.live_server import LiveServer
from tests.support.prolific import returned_with, stub_prolific
from tests.support.research import add_researcher, log_in, overflow_by_width
from tests.support.taxonomies import taxonomy_variant
from tests.support.worker_api import token_from

WORKER = "PROLIFIC_PID=p1&STUDY_ID=s1&SESSION_ID=x1"
CODES = "  completion:\n    completed: C1A2B3C4\n    no_consent: CN1M2L3K\n"
STEPS = """\
consent: |
  ## About this study
  You will read a short summary and mark its errors. Your answers are **anonymous**.
  <img src=x onerror="alert(1)">
survey:
  before:
    - key: native
      type: choice
      text: Is English your first language?
      options: ["Yes", "No"]
      required: true
    - {key: tools, type: multi, text: "What will you use?", options: [Notes, Dictionary]}
  after:
    - {key: difficulty, type: likert, scale: 5, text: "How hard was the task?",
       low: Very easy, high: Very hard, required: true}
    - {key: feedback, type: text, text: "Anything else you want to tell us?"}
"""
TEXT = "Carol waved at the ship."


@pytest.fixture
def steps_server(live_app, tmp_path) -> LiveServer:
    """The app with consent, both surveys and Prolific codes, on SQLite, one document."""
    return live_app(
        taxonomy=taxonomy_variant(tmp_path, study=CODES, append=STEPS),
        documents=[DocumentInput("doc-1", "A summary", (TEXT,))],
    )


def overflow(page: Page) -> dict[int, int]:
    """The widths (360 px up) at which the page scrolls sideways, and by how much."""
    found = {width: px for width, px in overflow_by_width(page).items() if px > 0}
    page.set_viewport_size({"width": 1280, "height": 800})
    return found


def session_row(live: LiveServer) -> AnnotationSession:
    with live.app.app_context():
        session = db.session.scalars(select(AnnotationSession)).one()
        db.session.expunge(session)
        return session


def test_agree_survey_task_survey_then_back_to_prolific(page: Page, steps_server):
    asked = stub_prolific(page)
    problems: dict[str, list] = {}
    page.goto(f"{steps_server.url}/start?{WORKER}")
    expect(page.get_by_role("heading", name="About this study")).to_be_visible()
    expect(page.locator(".prose img")).to_have_count(0)  # the raw HTML stays text
    problems["consent"] = violations(page) + [f"overflow {overflow(page)}"] * bool(overflow(page))
    page.get_by_role("button", name="I agree").click()

    expect(page.get_by_role("heading", name="Before you start")).to_be_visible()
    problems["before-survey"] = violations(page)
    page.get_by_role("button", name="Continue").click()  # nothing chosen: told what to fix
    expect(page.get_by_role("alert")).to_contain_text("Choose an answer.")
    expect(page.get_by_role("alert")).to_be_focused()
    problems["before-survey with an error"] = violations(page)
    group = page.get_by_role("group", name="Is English your first language?")
    group.get_by_role("radio", name="No").check()
    page.get_by_role("checkbox", name="Dictionary").check()
    page.get_by_role("button", name="Continue").click()

    expect(page.get_by_role("region", name="Current Paragraph")).to_be_visible()
    page.get_by_role("button", name="No more errors. Go to next paragraph").wait_for()
    submit_task(page)
    expect(page.get_by_role("heading", name="A few last questions")).to_be_visible()
    problems["after-survey"] = violations(page) + [f"overflow {overflow(page)}"] * bool(
        overflow(page)
    )
    page.get_by_role("radio", name="4").check()
    page.get_by_role("textbox", name="Anything else you want to tell us?").fill("Clear task.")
    page.get_by_role("button", name="Finish").click()

    returned_with(page, asked, "C1A2B3C4")
    assert not any(problems.values()), problems
    session = session_row(steps_server)
    assert (session.status, session.outcome) == ("submitted", "completed")
    with steps_server.app.app_context():
        stored = {
            (a.survey, a.question_key): a.answer for a in db.session.scalars(select(SurveyAnswer))
        }
    assert stored == {
        ("before", "native"): "No",
        ("before", "tools"): ["Dictionary"],
        ("after", "difficulty"): 4,
        ("after", "feedback"): "Clear task.",
    }


def test_declining_ends_with_no_consent_and_the_return_link(page: Page, steps_server):
    asked = stub_prolific(page)
    page.goto(f"{steps_server.url}/start?{WORKER}")
    page.get_by_role("button", name="I do not agree").click()
    expect(page.get_by_role("heading", name="You did not agree to take part")).to_be_visible()
    returned_with(page, asked, "CN1M2L3K")
    assert session_row(steps_server).outcome == "no_consent"
    # Coming back to the link: the end again, never the task. (Without its script this
    # time, so that the page stays for axe instead of following the link.)
    page.route("**/js/study-end/**", lambda route: route.abort())
    page.goto(f"{steps_server.url}/start?{WORKER}")
    expect(page.get_by_role("heading", name="You did not agree to take part")).to_be_visible()
    problems = violations(page) + [f"overflow {overflow(page)}"] * bool(overflow(page))
    assert not problems, problems


def test_every_step_by_keyboard_only(page: Page, steps_server):
    stub_prolific(page)
    page.goto(f"{steps_server.url}/annotate/doc-1?annotator=keyboard-worker")
    expect(page.get_by_role("button", name="I agree")).to_be_visible()
    tab_to(page, "I agree")
    page.keyboard.press("Enter")

    expect(page.get_by_role("heading", name="Before you start")).to_be_visible()
    tab_to(page, "Yes")  # the first radio of the group
    page.keyboard.press("ArrowDown")  # arrows move within a radio group: "No"
    expect(page.get_by_role("radio", name="No")).to_be_checked()
    tab_to(page, "Notes")
    page.keyboard.press("Space")
    expect(page.get_by_role("checkbox", name="Notes")).to_be_checked()
    tab_to(page, "Continue")
    page.keyboard.press("Enter")

    expect(page.get_by_role("region", name="Current Paragraph")).to_be_visible()
    submit = page.get_by_role("button", name="Submit", exact=True)
    expect(submit).to_be_enabled()
    tab_to(page, "Submit")
    page.keyboard.press("Enter")
    expect(page.get_by_role("button", name="Yes, submit")).to_be_focused()
    page.keyboard.press("Enter")

    expect(page.get_by_role("heading", name="A few last questions")).to_be_visible()
    tab_to(page, "Finish")
    page.keyboard.press("Enter")  # the required Likert question is not answered
    expect(page.get_by_role("alert")).to_be_focused()
    page.keyboard.press("Tab")  # the error summary's link to the question
    expect(
        page.get_by_role("link", name="How hard was the task? — Choose an answer.")
    ).to_be_focused()
    page.keyboard.press("Enter")  # to the question's first point
    expect(page.get_by_role("radio", name="1 Very easy")).to_be_focused()
    page.keyboard.press("Space")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    expect(page.get_by_role("radio", name="3")).to_be_checked()
    tab_to(page, "Finish")
    page.keyboard.press("Enter")
    expect(
        page.get_by_role("heading", name="Thank you: your annotations are submitted")
    ).to_be_visible()


def tab_to(page: Page, name: str, limit: int = 40) -> None:
    """Press Tab until the focused element's accessible name starts with `name`."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        focused = page.evaluate(
            """() => {
              const el = document.activeElement;
              if (!el) return '';
              if (el.labels && el.labels.length) return el.labels[0].textContent.trim();
              return (el.getAttribute('aria-label') || el.textContent || '').trim();
            }"""
        )
        if focused.startswith(name):
            return
    raise AssertionError(f"Tab never reached {name!r}")


def test_the_researcher_sees_the_steps_and_the_answers(page: Page, steps_server):
    """/research/taxonomy shows the consent and questions, the dashboard the answers'
    summary: axe clean, no sideways scrolling from 360 px."""
    worker = steps_server.app.test_client()
    with steps_server.app.app_context():
        answer = worker.get("/annotate/doc-1?annotator=w1")
        token = token_from(answer)
        csrf = {"csrf_token": capability_csrf_token("annotate", token)}
        worker.post(f"/s/{token}/consent", data={**csrf, "decision": "agree"})
        worker.post(f"/s/{token}/survey/before", data={**csrf, "q-native": "0", "q-tools": "1"})
    add_researcher(steps_server)
    log_in(page, steps_server.url)
    row = page.locator('tr[data-question="before.native"]')
    expect(row).to_contain_text("Yes: 1 · No: 0")
    problems = {"dashboard overflow": overflow(page), "dashboard": violations(page)}
    page.goto(f"{steps_server.url}/research/taxonomy")
    expect(page.get_by_role("heading", name="Consent and surveys")).to_be_visible()
    expect(page.get_by_role("heading", name="About this study")).to_be_visible()
    expect(page.get_by_role("rowheader", name="How hard was the task?")).to_be_visible()
    problems |= {"taxonomy overflow": overflow(page), "taxonomy": violations(page)}
    assert not any(problems.values()), problems
