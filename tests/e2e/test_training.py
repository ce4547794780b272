"""In Chromium: training before the task (issue 17 point 1). A worker who fails the
practice gets the failed_training outcome and never sees the task; one who passes reaches
it; the practice works from the keyboard alone; axe finds nothing; the practice page at
360, 768 and 1280 px (screenshots in SCREENSHOTS)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from sqlalchemy import select

from app.core.extensions import db
from app.imports.document_formats import DocumentInput
from app.models import AnnotationSession, ParagraphTiming, TrainingAttempt
from tests.support.annotate_page import select_span
from tests.support.axe import violations
from tests.support.live_server import LiveServer
from tests.support.prolific import returned_with, stub_prolific
from tests.support.training import (
    PRACTICE_GOLD,
    PRACTICE_ID,
    PRACTICE_PARAGRAPHS,
    training_taxonomy,
)

SCREENSHOTS = Path(os.environ.get("SCREENSHOTS") or tempfile.mkdtemp(prefix="falte-training-"))
TASK_TEXT = ("Anna met Bob at the quay.", "Then it rained all day.")

WORKER = "PROLIFIC_PID=p1&STUDY_ID=s1&SESSION_ID=x1"


def study(live_app, tmp_path: Path, **rule) -> LiveServer:
    """The app with a training section (Prolific codes per outcome), the practice text and
    one task document, on SQLite."""
    completion = "  completion: {completed: CDONE, failed_training: CTRAIN}\n"
    return live_app(
        taxonomy=training_taxonomy(tmp_path, study_lines=completion, **rule),
        documents=[
            DocumentInput(PRACTICE_ID, "Practice", tuple(PRACTICE_PARAGRAPHS), gold=PRACTICE_GOLD),
            DocumentInput("task-1", "The task", TASK_TEXT),
        ],
    )


@pytest.fixture
def strict_server(live_app, tmp_path) -> LiveServer:
    """Pass: every gold span found, half of the marks right; two attempts."""
    return study(live_app, tmp_path, attempts=2, recall=1.0, precision=0.5)


@pytest.fixture
def lenient_server(live_app, tmp_path) -> LiveServer:
    """Pass: half of the gold spans found, half of the marks right; one attempt."""
    return study(live_app, tmp_path, attempts=1, recall=0.5, precision=0.5)


def start_practice(page: Page, live: LiveServer) -> list[tuple[str, int]]:
    """Open the task link; the practice comes first. Returns every (URL, status) loaded."""
    loaded: list[tuple[str, int]] = []
    page.on("response", lambda response: loaded.append((response.url, response.status)))
    page.goto(f"{live.url}/start?{WORKER}")  # a study with codes starts there
    expect(page).to_have_url(f"{live.url}/s/{token_of(page)}/training")
    expect(page.get_by_role("region", name="Practice")).to_be_visible()
    annotator = page.locator('[data-module="annotator"]')
    expect(annotator).to_have_attribute("data-ready", "true")
    return loaded


def token_of(page: Page) -> str:
    return page.url.split("/s/", 1)[1].split("/", 1)[0]


def mark(page: Page, paragraph: int, start: int, end: int, category: str, paired=None) -> None:
    """Select a span with the mouse, choose its category (and paired span), Add."""
    select_span(page, paragraph, PRACTICE_PARAGRAPHS[paragraph], start, end)
    page.get_by_role("button", name=category, exact=True).click()
    if paired is not None:
        p, s, e = paired
        select_span(page, p, PRACTICE_PARAGRAPHS[p], s, e)
        expect(page.get_by_role("textbox", name="Paired span")).to_have_value(
            PRACTICE_PARAGRAPHS[p][s:e]
        )
    page.get_by_role("button", name="Add", exact=True).click()


def next_paragraph(page: Page) -> None:
    page.get_by_role("button", name="No more errors. Go to next paragraph").click()
    expect(page.locator(".js-progress")).to_have_text("Paragraph 2 of 2")


def feedback_kinds(page: Page) -> list[str]:
    expect(page.get_by_role("heading", name="Your answers")).to_be_visible()
    items = page.locator(".js-feedback-list > li")
    return [items.nth(i).get_attribute("data-kind") for i in range(items.count())]


def session_row(live: LiveServer, token: str) -> AnnotationSession:
    with live.app.app_context():
        row = db.session.scalars(select(AnnotationSession).filter_by(token=token)).one()
        db.session.expunge(row)
        return row


def test_a_worker_who_fails_training_gets_failed_training_and_never_sees_the_task(
    page: Page, strict_server
):
    asked = stub_prolific(page)
    loaded = start_practice(page, strict_server)
    token = token_of(page)
    check = page.get_by_role("button", name="Check my answers")
    expect(check).to_be_disabled()  # the whole practice text is read first
    mark(page, 0, 0, 4, "New person not introduced")  # "Mara" is introduced: not an error
    next_paragraph(page)
    check.click()
    feedback = page.get_by_role("region", name="Your answers")
    expect(feedback.get_by_role("heading", name="Your answers")).to_be_focused()
    # A check left: counts and kinds, never where the errors are nor why (issue 26).
    expect(feedback).to_contain_text("Errors found: 0 of 2.")
    expect(feedback).to_contain_text("Marks that are not errors: 1.")
    hint = page.locator(".js-feedback-hidden")
    expect(hint).to_be_visible()
    expect(hint).to_have_text(
        "Where the errors are, and why, is shown once you pass or after your last check."
    )
    expect(feedback.get_by_role("listitem")).to_have_count(0)
    expect(feedback).not_to_contain_text("Lord Findon")
    for width, height in ((390, 844), (768, 1024), (1280, 800)):
        page.set_viewport_size({"width": width, "height": height})
        page.screenshot(path=str(SCREENSHOTS / f"practice-counts-{width}.png"), full_page=True)
    page.set_viewport_size({"width": 1280, "height": 800})
    expect(page.locator(".js-attempts-left")).to_have_text("1")
    page.get_by_role("button", name="Try again").click()
    check.click()
    expect(feedback).to_contain_text("the study ends here")
    expect(page.get_by_role("button", name="Try again")).to_be_hidden()
    # The last check shows the answers.
    expect(feedback.get_by_role("listitem")).to_have_count(3)
    assert feedback_kinds(page) == ["missed", "missed", "extra"]
    expect(feedback).to_contain_text("Lord Findon appears without any introduction.")
    expect(feedback).to_contain_text("Not an error here")
    expect(hint).to_be_hidden()
    page.get_by_role("link", name="Continue").click()
    expect(page.get_by_role("heading", name="The practice was not passed")).to_be_visible()
    returned_with(page, asked, "CTRAIN")

    session = session_row(strict_server, token)
    assert session.outcome == "failed_training"
    # Never the task: neither its page nor its text was loaded, no paragraph was timed.
    task_urls = (f"/s/{token}", f"/api/sessions/{token}")
    assert [url for url, status in loaded if url.endswith(task_urls) and status < 300] == []
    page.goto(f"{strict_server.url}/s/{token}")
    expect(page.get_by_role("heading", name="The practice was not passed")).to_be_visible()
    assert TASK_TEXT[0] not in page.content()
    with strict_server.app.app_context():
        assert db.session.scalars(select(ParagraphTiming)).all() == []
        attempts = db.session.scalars(select(TrainingAttempt).order_by(TrainingAttempt.id))
        assert [(a.attempt, a.passed, len(a.spans)) for a in attempts] == [
            (1, False, 1),
            (2, False, 1),
        ]


def test_a_worker_who_passes_reaches_the_task(page: Page, strict_server):
    start_practice(page, strict_server)
    token = token_of(page)
    mark(page, 0, 37, 43, "New person not introduced")  # "Findon": over half of the span
    next_paragraph(page)
    mark(page, 1, 32, 63, "Repetition", paired=(0, 5, 31))
    expect(page.locator(".js-annotations tr")).to_have_count(2)
    page.reload()  # practice answers are kept by the browser until they are checked
    expect(page.locator(".js-annotations tr")).to_have_count(2)
    page.get_by_role("button", name="No more errors. Go to next paragraph").click()
    page.get_by_role("button", name="Check my answers").click()
    assert feedback_kinds(page) == ["found", "found"]
    expect(page.locator(".js-feedback-result")).to_have_text(
        "Well done: you passed this practice text."
    )
    page.get_by_role("link", name="Start the task").click()
    expect(page).to_have_url(f"{strict_server.url}/s/{token}")
    current = page.get_by_role("region", name="Current Paragraph")
    expect(current).to_contain_text(TASK_TEXT[0])
    expect(page.locator(".js-annotations tr")).to_have_count(0)  # practice stays practice
    assert session_row(strict_server, token).outcome is None


def tab_to(page: Page, selector: str, limit: int = 60) -> None:
    """Press Tab until the element matching `selector` has the focus."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate("(s) => document.activeElement.matches(s)", selector):
            return
    raise AssertionError(f"Tab never reached {selector}")


def test_the_practice_by_keyboard_alone_and_axe(page: Page, lenient_server):
    start_practice(page, lenient_server)
    seen = {"practice opened": violations(page)}
    tab_to(page, ".js-current-body")
    for _ in range(7):  # Mara opened the bakery at dawn . -> Lord
        page.keyboard.press("ArrowRight")
    page.keyboard.press("Shift+ArrowRight")  # Lord Findon
    page.keyboard.press("Enter")
    expect(page.get_by_role("textbox", name="Selected span")).to_have_value("Lord Findon")
    page.keyboard.press("1")  # New person not introduced
    page.keyboard.press("Enter")  # Add
    expect(page.locator(".js-annotations tr")).to_have_count(1)
    seen["one practice annotation"] = violations(page)
    tab_to(page, ".js-next")
    page.keyboard.press("Enter")
    expect(page.locator(".js-progress")).to_have_text("Paragraph 2 of 2")
    tab_to(page, ".js-check")
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="Your answers")).to_be_focused()
    assert feedback_kinds(page) == ["found", "missed"]
    seen["feedback"] = violations(page)
    for width, height in ((360, 740), (768, 1024), (1280, 800)):
        page.set_viewport_size({"width": width, "height": height})
        page.screenshot(path=str(SCREENSHOTS / f"practice-feedback-{width}.png"), full_page=True)
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, (width, overflow)
    page.set_viewport_size({"width": 1280, "height": 800})
    tab_to(page, ".js-practice-next")
    page.keyboard.press("Enter")
    current = page.get_by_role("region", name="Current Paragraph")
    expect(current).to_contain_text(TASK_TEXT[0])
    assert not any(seen.values()), seen


def test_the_end_page_of_failed_training_is_axe_clean(page: Page, lenient_server):
    stub_prolific(page)
    start_practice(page, lenient_server)
    page.get_by_role("button", name="No more errors. Go to next paragraph").click()
    page.get_by_role("button", name="Check my answers").click()
    expect(page.locator(".js-feedback-result")).to_contain_text("the study ends here")
    seen = {"failed feedback": violations(page)}
    page.route("https://app.prolific.com/**", lambda route: route.abort())  # stay to look
    page.get_by_role("link", name="Continue").click()
    expect(page.get_by_role("heading", name="The practice was not passed")).to_be_visible()
    seen["end page"] = violations(page)
    assert not any(seen.values()), seen
