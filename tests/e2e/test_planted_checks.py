"""In Chromium: `flask plant-checks` on a BooookScore sample summary (issue 17, point 4).

A worker who marks the planted spans with the mouse (the repetition and the inconsistency
with their earlier spans, the new person) completes the study; one who marks nothing
misses the checks and, with `attention_checks: fail`, lands on Prolific's failed_checks
code. The planted gold comes from the command itself, so the test follows whatever it
planted."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from app.core.extensions import db
from app.models import Document, Paragraph
from app.taxonomy import current_taxonomy
from tests.support.annotate_page import select_span, settled, submit_task
from tests.support.apps import ROOT
from tests.support.live_server import LiveServer, run_commands
from tests.support.prolific import PROLIFIC, stub_prolific
from tests.support.taxonomies import taxonomy_variant

SOURCE = ROOT / "tests" / "fixtures" / "planted" / "source.json"
# The shipped taxonomy's checks: section names the categories plant-checks uses.
STUDY = """\
  completion:
    completed: C1A2B3C4
    failed_checks: CQ5R4S3T
  attention_checks: fail
  attention_check_share: 0.5  # /start hands the first worker the check
"""
NEXT = "No more errors. Go to next paragraph"


@pytest.fixture
def planted(live_app, tmp_path) -> tuple[LiveServer, list[str], list[dict]]:
    """The app with the BooookScore summary imported and a check planted from it (through
    the real commands); its paragraphs and gold."""
    live = live_app(taxonomy=taxonomy_variant(tmp_path, study=STUDY))
    run_commands(
        live,
        ["import-documents", SOURCE],
        ["plant-checks", "the-golden-doves", "--seed", "5", "--id", "planted"],
    )
    with live.app.app_context():
        document = db.session.scalar(db.select(Document).filter_by(external_id="planted"))
        texts = list(
            db.session.scalars(
                db.select(Paragraph.text)
                .filter_by(document_id=document.id)
                .order_by(Paragraph.position)
            )
        )
        gold = list(document.gold)
    return live, texts, gold


def category_name(live: LiveServer, key: str) -> str:
    """The button name of a category key: its name in the served taxonomy."""
    with live.app.app_context():
        return current_taxonomy().category(key).name


def open_as(page: Page, live: LiveServer, worker: str) -> list[str]:
    """Open the study link as a Prolific worker, who gets the check (the first to arrive);
    the Prolific URLs the browser asks for."""
    asked = stub_prolific(page)
    page.goto(f"{live.url}/start?PROLIFIC_PID={worker}&STUDY_ID=s1&SESSION_ID=x-{worker}")
    expect(
        page.get_by_role("region", name="Current Paragraph").locator("[data-paragraph]")
    ).to_have_count(1)
    return asked


def test_a_worker_who_marks_the_planted_spans_completes(page: Page, planted):
    live, texts, gold = planted
    assert sorted(g["category"] for g in gold) == ["inconsistency", "new-person", "repetition"]
    asked = open_as(page, live, "careful")
    for paragraph in range(len(texts)):
        if paragraph:
            page.get_by_role("button", name=NEXT).click()
            expect(page.locator(".js-progress")).to_have_text(
                f"Paragraph {paragraph + 1} of {len(texts)}"
            )
        for item in (g for g in gold if g["paragraph_id"] == paragraph):
            select_span(page, paragraph, texts[paragraph], item["start"], item["end"])
            page.get_by_role(
                "button", name=category_name(live, item["category"]), exact=True
            ).click()
            if "paired_span" in item:
                other = item["paired_span"]
                # The earlier span is up in the Context: bring it into view and let any
                # scrolling settle before measuring where its characters are.
                earlier = page.locator(f'[data-paragraph="{other["paragraph_id"]}"]')
                earlier.scroll_into_view_if_needed()
                settled(page, earlier)
                select_span(
                    page,
                    other["paragraph_id"],
                    texts[other["paragraph_id"]],
                    other["start"],
                    other["end"],
                )
                expect(page.get_by_role("textbox", name="Paired span")).to_have_value(
                    texts[other["paragraph_id"]][other["start"] : other["end"]]
                )
            page.get_by_role("button", name="Add", exact=True).click()
            expect(page.get_by_text("Saved", exact=True)).to_be_visible()
    expect(page.locator(".js-annotation-row")).to_have_count(len(gold))
    submit_task(page)
    page.wait_for_url(f"{PROLIFIC}C1A2B3C4")
    assert asked == [f"{PROLIFIC}C1A2B3C4"]


def test_a_worker_who_marks_nothing_misses_the_checks(page: Page, planted):
    live, texts, _gold = planted
    asked = open_as(page, live, "careless")
    for paragraph in range(1, len(texts)):
        page.get_by_role("button", name=NEXT).click()
        expect(page.locator(".js-progress")).to_have_text(
            f"Paragraph {paragraph + 1} of {len(texts)}"
        )
    submit_task(page)
    page.wait_for_url(f"{PROLIFIC}CQ5R4S3T")
    assert asked == [f"{PROLIFIC}CQ5R4S3T"]
