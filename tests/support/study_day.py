"""One whole Prolific study for the browser tests (issue 27): consent, both surveys,
training on the practice text, severities, model suggestions on the task text and
Prolific's completion codes per outcome, on a fresh SQLite copy; and the worker's steps
through it, by selectors that hold in every interface language."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.support.annotate_page import select_span
from tests.support.live_server import LiveServer, run_commands
from tests.support.severities import ONLY_MINOR, SEVERITIES
from tests.support.taxonomies import taxonomy_variant
from tests.support.training import PRACTICE_PARAGRAPHS, practice_record, training_section

STUDY_ID = "study-27"
SESSION_ID = "session-27a"
WORKER = f"PROLIFIC_PID=60aa00000000000000000001&STUDY_ID={STUDY_ID}&SESSION_ID={SESSION_ID}"
TASK_ID = "voyage"
TASK = (
    "Anna met Bob at the harbour. Nobody knew who Bob was.",
    "Then Anna met Bob again at the mill. It rained all day.",
    "Carol waved at the ship as it left the quay.",
)
# A second task text: /start hands out the first (by id) to a new worker; one who opens
# the study link again after Submit must not be handed this one (issue 27.2).
OTHER_TASK = ("Mara opened the bakery at dawn.", "The oven was cold that morning.")
# Two model suggestions on the first paragraph (Accept one, Edit the other), one on the
# second (Reject it).
SUGGESTIONS = (
    {"id": "s-bob", "document_id": TASK_ID, "category": "new-person",
     "span": {"text": "Bob", "paragraph_id": 0}, "question": "Who is Bob?"},
    {"id": "s-harbour", "document_id": TASK_ID, "category": "missing-info",
     "span": {"text": "at the harbour", "paragraph_id": 0}, "question": "Which harbour?"},
    {"id": "s-rain", "document_id": TASK_ID, "category": "ungrammatical",
     "span": {"text": "It rained all day.", "paragraph_id": 1}},
)  # fmt: skip
STUDY = """\
  annotators_per_document: 3
  suggestions: show
  completion:
    completed: C1A2B3C4
    failed_training: CX9Y8Z7W
    failed_checks: CQ5R4S3T
    no_consent: CN1M2L3K
"""
STEPS = """\
consent: |
  ## About this study
  You will read a short summary and mark its errors. Your answers are anonymous.
survey:
  before:
    - {key: native, type: choice, text: "Is English your first language?",
       options: ["Yes", "No"], required: true}
  after:
    - {key: difficulty, type: likert, scale: 5, text: "How hard was the task?",
       low: Very easy, high: Very hard, required: true}
"""


def study_day_taxonomy(folder: Path, language: str | None = None) -> Path:
    """The default taxonomy with severities (minor q, major w), the study above (in the
    interface `language`, if given), its training, consent and surveys."""
    study = f"  language: {language}\n{STUDY}" if language else STUDY
    sections = training_section(recall=0.5, precision=0.5) + STEPS
    return taxonomy_variant(
        folder, replace=ONLY_MINOR, study=study, append=SEVERITIES + sections, name="study.yaml"
    )


def serve_study_day(
    live_app: Callable[..., LiveServer], tmp_path: Path, language: str | None = None
) -> LiveServer:
    """Start the whole study (the e2e `live_app` fixture): the practice and task texts and
    the suggestions imported with the real commands."""
    taxonomy = study_day_taxonomy(tmp_path, language)
    documents = tmp_path / "documents.jsonl"
    records = [
        practice_record(),
        {"id": TASK_ID, "title": "A voyage", "paragraphs": TASK},
        {"id": "bakery", "title": "A bakery", "paragraphs": OTHER_TASK},
    ]
    documents.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    suggestions = tmp_path / "suggestions.jsonl"
    suggestions.write_text("".join(json.dumps(s) + "\n" for s in SUGGESTIONS), "utf-8")
    live = live_app(taxonomy=taxonomy)
    run_commands(
        live,
        ["check-taxonomy", taxonomy],
        ["import-documents", documents],
        ["import-suggestions", suggestions, "--source", "model", "--format", "jsonl"],
    )
    return live


# --- the worker's steps --------------------------------------------------------------


def agree(page: Page) -> None:
    """Consent: I agree; returns once the next step's page has loaded (a check run at once
    on the page met the consent page's document mid-navigation, without a body)."""
    page.locator('button[name="decision"][value="agree"]').click()
    page.wait_for_url(lambda url: not url.rstrip("/").endswith("/consent"))


def answer_survey(page: Page, **choices: int) -> None:
    """A survey page: choose the option (position, or Likert point) of each question by
    key, then Continue or Finish."""
    for key, value in choices.items():
        page.locator(f'input[name="q-{key}"][value="{value}"]').check()
    page.locator("form.survey button[type=submit]").click()


def annotator_ready(page: Page) -> None:
    """Wait until the annotator page (task or practice) is drawn and listening."""
    expect(page.locator('[data-module="annotator"]')).to_have_attribute("data-ready", "true")


def mark(page: Page, text: str, paragraph: int, words: str, category: str, severity: str) -> None:
    """Select `words` (their first occurrence) in the paragraph with the mouse, choose
    the category and severity by key, Add."""
    start = text.index(words)
    select_span(page, paragraph, text, start, start + len(words))
    page.locator(f'.js-category[data-category="{category}"]').click()
    page.locator(f'.js-severity[data-severity="{severity}"]').click()
    page.locator(".js-add").click()


def next_paragraph(page: Page, number: int, total: int) -> None:
    """No more errors: on to paragraph `number` (1-based) of `total`."""
    page.locator(".js-next").click()
    expect(page.locator(".js-progress")).to_contain_text(f"{number}")
    expect(page.locator(f'.js-current-body [data-paragraph="{number - 1}"]')).to_be_visible()


def check_practice(page: Page) -> None:
    """Check my answers, and wait for the feedback."""
    page.locator(".js-check").click()
    expect(page.locator(".js-feedback")).to_be_visible()


def pass_training(page: Page) -> None:
    """Mark Lord Findon (half the gold, every mark right: a pass), check, start the task."""
    annotator_ready(page)
    mark(page, PRACTICE_PARAGRAPHS[0], 0, "Lord Findon", "new-person", "major")
    next_paragraph(page, 2, 2)
    check_practice(page)
    page.locator(".js-practice-next").click()


def reach_the_task(page: Page, live: LiveServer) -> None:
    """Arrive by the study link, agree, answer the first survey, pass the training: the
    task page, ready."""
    page.goto(f"{live.url}/start?{WORKER}")
    agree(page)
    answer_survey(page, native=0)
    pass_training(page)
    annotator_ready(page)
