"""Accept of a model suggestion asks for a severity when the taxonomy has severities
(docs/contracts.md#8-accessible-names, issue 18 point 4), by mouse and by key, in Chromium;
axe clean.
And issue 18's "Done when" with severities: accept, reject, edit (real mouse selection),
one of the worker's own, reloads in between, then exactly those decisions exported."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import Page, expect
from sqlalchemy import select

from app.core.extensions import db
from app.models import Annotation
from tests.support import suggestions as sg
from tests.support.annotate_page import select_span, wait_for_value
from tests.support.axe import violations
from tests.support.severities import SEVERITIES

PARAGRAPHS = sg.summary_paragraphs()
EDITED, EDITED_SPAN = sg.SHIFT, sg.SHIFT_START
OWN = "Dr. Vincent"


@pytest.fixture
def live(live_app, tmp_path):
    """BooookScore's taxonomy with suggestions shown and minor/major severities."""
    return sg.serve_with_suggestions(live_app, tmp_path, append=SEVERITIES)


def _stored(live) -> list[tuple[str, str, str | None]]:
    with live.app.app_context():
        rows = db.session.execute(
            select(Annotation.span_text, Annotation.origin, Annotation.severity).order_by(
                Annotation.id
            )
        ).all()
        return [tuple(row) for row in rows]


def test_accept_asks_for_a_severity(page: Page, live):
    page.goto(f"{live.url}/annotate/{sg.BOOK}?annotator=worker-1")
    cards = page.locator(".js-suggestion")
    expect(cards).to_have_count(2)
    first = cards.filter(has_text=sg.FIRST)

    # By mouse: Accept asks, nothing is stored until a severity is chosen.
    first.get_by_role("button", name="Accept").click()
    question = first.get_by_role("group", name="Severity of this error")
    expect(question.get_by_role("button", name="Minor (1)")).to_be_focused()
    assert not violations(page)
    assert _stored(live) == []
    question.get_by_role("button", name="Cancel").click()  # back to Accept, still undecided
    expect(first.get_by_role("button", name="Accept")).to_be_focused()
    first.get_by_role("button", name="Accept").click()
    first.get_by_role("button", name="Major (5)").click()
    expect(first).to_contain_text("Accepted")
    expect(page.get_by_role("status")).to_have_text("Saved")
    expect(page.locator(".previous__severity")).to_have_text(["Severity: Major"])  # listed at once

    # By keyboard: Enter on Accept, then the severity's key.
    second = cards.filter(has_not_text=sg.FIRST)
    second.get_by_role("button", name="Accept").focus()
    page.keyboard.press("Enter")
    expect(second.get_by_role("group", name="Severity of this error")).to_be_visible()
    page.keyboard.press("q")
    expect(second).to_contain_text("Accepted")
    expect(page.get_by_role("status")).to_have_text("Saved")
    stored = _stored(live)
    assert [(origin, severity) for _, origin, severity in stored] == [
        ("suggestion-accepted", "major"),
        ("suggestion-accepted", "minor"),
    ]
    assert stored[0][0] == sg.FIRST
    page.reload()
    expect(page.locator(".previous__severity")).to_have_text(["Severity: Major", "Severity: Minor"])


def _card(page: Page, text: str):
    return page.locator(".js-suggestion").filter(has_text=text)


def _saved(page: Page) -> None:
    expect(page.get_by_role("status")).to_have_text("Saved")


def _exported(live, *args: str) -> list[dict]:
    result = live.app.test_cli_runner().invoke(args=["export-annotations", *args])
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.output.splitlines()]


def test_done_when_with_severities_accept_reject_edit_own_then_export(page: Page, live):
    page.goto(f"{live.url}/annotate/{sg.BOOK}?annotator=worker-1")
    expect(page.locator(".js-suggestion")).to_have_count(2)

    # Accept asks for a severity: Major.
    _card(page, sg.FIRST).get_by_role("button", name="Accept").click()
    _card(page, sg.FIRST).get_by_role("button", name="Major (5)").click()
    expect(_card(page, sg.FIRST)).to_contain_text("Accepted")
    _saved(page)
    page.reload()
    expect(_card(page, sg.FIRST)).to_contain_text("Accepted")
    expect(page.locator(".previous__severity")).to_have_text(["Severity: Major"])

    # Reject asks nothing.
    _card(page, "Snow.").get_by_role("button", name="Reject").click()
    expect(_card(page, "Snow.")).to_contain_text("Rejected")
    _saved(page)
    page.reload()
    expect(_card(page, "Snow.")).to_contain_text("Rejected")
    page.get_by_role("button", name="No more errors. Go to next paragraph").click()
    expect(page.locator(".js-progress")).to_have_text("Paragraph 2 of 16")

    # Edit: a shorter span by mouse, another type; Add waits for a severity (Minor).
    edited = _card(page, EDITED)
    edited.get_by_role("button", name="Edit").click()
    start = PARAGRAPHS[1].index(EDITED_SPAN)
    select_span(page, 1, PARAGRAPHS[1], start, start + len(EDITED_SPAN))
    expect(page.get_by_role("textbox", name="Selected span")).to_have_value(EDITED_SPAN)
    page.get_by_role("button", name="Salience", exact=True).click()
    add = page.get_by_role("button", name="Add", exact=True)
    expect(add).to_be_disabled()  # no severity yet
    step = page.get_by_role("group", name="Choose the severity")
    step.get_by_role("button", name="Minor (1)").click()
    assert not violations(page)
    add.click()
    expect(edited).to_contain_text("Edited")
    _saved(page)
    page.reload()
    expect(_card(page, EDITED)).to_contain_text("Edited")

    # One of the worker's own, Major.
    own = PARAGRAPHS[1].index(OWN)
    select_span(page, 1, PARAGRAPHS[1], own, own + len(OWN))
    page.get_by_role("button", name="Entity omission", exact=True).click()
    step.get_by_role("button", name="Major (5)").click()
    page.get_by_role("textbox", name="Your question: what is confusing here?").fill("Who is he?")
    add.click()
    _saved(page)
    page.reload()
    wait_for_value(page, "document.querySelectorAll('.js-annotation-row').length", 3)
    expect(page.locator(".previous__severity")).to_have_text(
        ["Severity: Major", "Severity: Minor", "Severity: Major"]
    )

    suggestions = _exported(live, "--what", "suggestions")
    ids = {s["span"]["text"]: s["suggestion_id"] for s in suggestions}
    decided = {
        s["span"]["text"]: [d["decision"] for d in s["decisions"]]
        for s in suggestions
        if s["decisions"]
    }
    assert decided == {sg.FIRST: ["accepted"], "Snow.": ["rejected"], EDITED: ["edited"]}
    records = _exported(live, "--format", "jsonl")
    for record in records:
        span = record["span"]
        assert PARAGRAPHS[span["paragraph_id"]][span["start"] : span["end"]] == span["text"]
    first = PARAGRAPHS[0].index(sg.FIRST)
    got = sorted(
        (
            r["origin"],
            r["suggestion_id"],
            r["severity"],
            r["category"],
            r["span"]["paragraph_id"],
            r["span"]["start"],
            r["span"]["end"],
        )
        for r in records
    )
    assert got == sorted(
        [
            (
                "suggestion-accepted",
                ids[sg.FIRST],
                "major",
                "entity-omission",
                0,
                first,
                first + len(sg.FIRST),
            ),
            (
                "suggestion-edited",
                ids[EDITED],
                "minor",
                "salience",
                1,
                start,
                start + len(EDITED_SPAN),
            ),
            ("worker", None, "major", "entity-omission", 1, own, own + len(OWN)),
        ]
    )
