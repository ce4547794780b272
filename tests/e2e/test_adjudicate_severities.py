"""Adjudication with severities in Chromium (issue 27, point 5): each mark shows the
severity its annotator gave, the proposal the one most of them gave, Merge and an own span
choose one, and the gold set carries it."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from app.adjudication.gold import iter_gold_records
from app.core.extensions import db
from tests.support.accounts import add_account
from tests.support.adjudication import DOC_ID, seed_graded_document
from tests.support.axe import violations
from tests.support.severities import severity_taxonomy

EMAIL = "adjudicator@example.org"
PASSWORD = "a-long-enough-password"


@pytest.fixture
def graded(live_app, tmp_path):
    """The adjudication sample under a taxonomy with severities, each mark graded."""
    live = live_app(taxonomy=severity_taxonomy(tmp_path))
    with live.app.app_context():
        add_account(EMAIL, PASSWORD)
        seed_graded_document()
        db.session.remove()
    return live


def test_severities_are_shown_and_decided(graded, page: Page):
    page.goto(f"{graded.url}/research/documents/{DOC_ID}/adjudicate")
    page.get_by_label("E-mail").fill(EMAIL)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    person = page.get_by_role("article", name=re.compile("New person not introduced, Major"))
    expect(person).to_contain_text("“met Bob”, severity Minor")
    person.get_by_role("button", name="Merge…").click()
    person.get_by_label("Severity").select_option(label="Minor (1)")
    assert not violations(page)
    person.get_by_role("button", name="Save merge").click()
    expect(person).to_contain_text("as New person not introduced, Minor (by")

    own = page.locator("#own-1")
    own.get_by_label("Category").select_option(label="Abrupt scene transition")
    own.get_by_label("Severity").select_option(label="Major (5)")
    own.get_by_label("Start", exact=True).fill("0")
    own.get_by_label("End", exact=True).fill("4")
    own.get_by_role("button", name="Save my span").click()
    expect(page.get_by_role("status")).to_contain_text("All decisions saved (2 current")
    with graded.app.app_context():
        records = {r["span"]["text"]: r["severity"] for r in iter_gold_records()}
    assert records == {"met Bob at": "minor", "Then": "major"}
