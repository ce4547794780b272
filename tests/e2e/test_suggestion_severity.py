"""Accept of a model suggestion asks for a severity when the taxonomy has severities
(DESIGN.md second wave, issue 18 point 4), by mouse and by key, in Chromium; axe clean."""

from __future__ import annotations

import shutil

import pytest
from playwright.sync_api import Page, expect
from sqlalchemy import select

from app.extensions import db
from app.models import Annotation
from tests.support.axe import violations
from tests.support.live_server import serving
from tests.support.severities import SEVERITIES
from tests.support.suggestions import BOOK, model_file, taxonomy_showing, write_summary

FIRST = "Anderson accepts a promotion and a mission to find Nazi scientist Dr."


@pytest.fixture
def live(tmp_path, sqlite_template):
    """BooookScore's taxonomy with suggestions shown and minor/major severities."""
    path = tmp_path / "e2e.sqlite3"
    shutil.copy(sqlite_template, path)
    taxonomy = taxonomy_showing(tmp_path)
    taxonomy.write_text(taxonomy.read_text("utf-8") + SEVERITIES, encoding="utf-8")
    with serving(f"sqlite:///{path}", TAXONOMY_PATH=str(taxonomy)) as server:
        runner = server.app.test_cli_runner()
        assert runner.invoke(args=["import-documents", str(write_summary(tmp_path))]).exit_code == 0
        args = ["import-suggestions", str(model_file(tmp_path)), "--source", "gpt-4"]
        assert runner.invoke(args=args).exit_code == 0
        yield server


def _stored(live) -> list[tuple[str, str, str | None]]:
    with live.app.app_context():
        rows = db.session.execute(
            select(Annotation.span_text, Annotation.origin, Annotation.severity).order_by(
                Annotation.id
            )
        ).all()
        return [tuple(row) for row in rows]


def test_accept_asks_for_a_severity(page: Page, live):
    page.goto(f"{live.url}/annotate/{BOOK}?annotator=worker-1")
    cards = page.locator(".js-suggestion")
    expect(cards).to_have_count(2)
    first = cards.filter(has_text=FIRST)

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
    second = cards.filter(has_not_text=FIRST)
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
    assert stored[0][0] == FIRST
    page.reload()
    expect(page.locator(".previous__severity")).to_have_text(["Severity: Major", "Severity: Minor"])
