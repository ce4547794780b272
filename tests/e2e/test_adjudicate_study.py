"""Issue 19 end to end in Chromium: three annotators' sessions on BooookScore sample
summaries (tests/fixtures/booookscore) are adjudicated in the page into a gold set whose
export equals the decisions made, with provenance; promote-gold copies the document as a
new attention check (the original and its workers' scores unchanged); the agreement
figures show with intervals."""

from __future__ import annotations

import json
import re
import time

import pytest
from playwright.sync_api import Page, expect

from app.adjudication.gold import iter_gold_records
from app.core.extensions import db
from app.crowd.checks.flagged import left_out_workers
from app.crowd.settings import study_settings
from app.research.dashboard import load_study
from tests.support.accounts import add_account
from tests.support.apps import BOOOOKSCORE_SAMPLE
from tests.support.axe import violations
from tests.support.taxonomies import BOOOOKSCORE_TAXONOMY

EMAIL = "adjudicator@example.org"
PASSWORD = "a-long-enough-password"
PREFIX = "s-"
ADJUDICATED = "the-haunting-of-alejandra.epub"
DOC_ID = PREFIX + ADJUDICATED
# Book -> annotator file -> (indices of singles, indices of relations) each one keeps.
SUBSETS = {
    ADJUDICATED: {"a": ([0, 1, 3], [0]), "b": ([0, 3], []), "c": ([0, 1], [0])},
    "the-half-moon.epub": {"a": ([0, 1, 2], []), "b": ([0, 2], []), "c": ([1], [])},
    "the-night-travelers.epub": {"a": ([1, 3], []), "b": ([1, 5], []), "c": ([3, 5], [])},
}


@pytest.fixture
def study(live_app, tmp_path):
    """A live app on BooookScore's taxonomy with the three annotators' imports."""
    source = json.loads((BOOOOKSCORE_SAMPLE / "human-annotations.json").read_text("utf-8"))
    live = live_app(taxonomy=BOOOOKSCORE_TAXONOMY)
    runner = live.app.test_cli_runner()
    for name in ("a", "b", "c"):
        books = {}
        for book, subsets in SUBSETS.items():
            singles, relations = subsets[name]
            entry = source[book]
            books[book] = {
                "summary": entry["summary"],
                "singles": [entry["singles"][i] for i in singles],
                "relations": [entry["relations"][i] for i in relations],
            }
        file = tmp_path / f"{name}.json"
        file.write_text(json.dumps(books), "utf-8")
        result = runner.invoke(args=["import-annotations", str(file), "--id-prefix", PREFIX])
        assert result.exit_code == 0, result.output
    with live.app.app_context():
        add_account(EMAIL, PASSWORD)
        db.session.commit()
        db.session.remove()
    live.runner = runner
    return live


def saved(page: Page, current: int) -> None:
    expect(page.get_by_role("status")).to_contain_text(f"All decisions saved ({current} current")


def test_adjudicate_promote_and_see_agreement(study, page: Page):
    page.goto(f"{study.url}/research/documents/{DOC_ID}/adjudicate")
    page.get_by_label("E-mail").fill(EMAIL)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    saved(page, 0)
    expect(page.get_by_role("list", name="Annotators").get_by_role("listitem")).to_have_count(3)
    state = page.request.get(
        f"{study.url}/research/api/documents/{DOC_ID}/adjudication",
        headers={"Accept": "application/json"},
    ).json()
    candidates = state["candidates"]
    articles = page.get_by_role("article")
    expect(articles).to_have_count(len(candidates))

    # Decide every candidate in page order: reject the first, merge the second into
    # Salience (mouse), accept the others (keyboard for the third, mouse after).
    expected = []
    for index, candidate in enumerate(candidates):
        article = articles.nth(index)
        if index == 0:
            article.get_by_role("button", name="Reject").click()
        elif index == 1:
            article.get_by_role("button", name="Merge…").click()
            article.get_by_label("Category").select_option(label="Salience")
            article.get_by_role("button", name="Save merge").click()
            union = candidate["union"]
            expected.append(("salience", union["span"], None, candidate["annotators"], True))
        else:
            button = article.get_by_role("button", name="Accept")
            if index == 2:
                button.focus()
                page.keyboard.press("Enter")
            else:
                button.click()
            proposal = candidate["proposal"]
            expected.append(
                (
                    proposal["category"],
                    proposal["span"],
                    proposal["paired_span"],
                    candidate["annotators"],
                    False,
                )
            )
        saved(page, index + 1)
    assert not violations(page)

    # The gold export is exactly those decisions, with provenance.
    body = page.request.get(f"{study.url}/research/export/gold.jsonl").text()
    records = [json.loads(line) for line in body.splitlines()]

    def key(row):
        return (row[1]["paragraph_id"], row[1]["start"], row[1]["end"], row[0])

    got = [
        (
            r["category"],
            r["span"],
            r["paired_span"],
            r["provenance"]["annotators"],
            r["provenance"]["merged"],
        )
        for r in records
    ]
    assert sorted(got, key=key) == sorted(expected, key=key)
    assert {r["provenance"]["decided_by"] for r in records} == {EMAIL}
    assert {r["annotator_id"] for r in records} == {"adjudication:gold"}

    # promote-gold: a copy of the document becomes a new attention check with the gold
    # set as its answers; the document and its workers' scores stay as they were.
    result = study.runner.invoke(args=["promote-gold", DOC_ID])
    assert result.exit_code == 0, result.output
    with study.app.app_context():
        scores = {row.label: row.gold for row in load_study(study_settings()).annotators}
        left_out = [worker.label for worker in left_out_workers(study_settings()).values()]
        assert len(list(iter_gold_records(DOC_ID))) == len(expected)
        db.session.remove()
    assert all(score.total == 0 for score in scores.values()), scores
    page.goto(f"{study.url}/research/")
    documents = page.get_by_role("region", name="Documents")
    copy = documents.locator("tr", has=page.get_by_role("link", name=f"{DOC_ID}-gold", exact=True))
    expect(copy.locator(".tag--check")).to_have_count(1)
    original = documents.locator("tr", has=page.get_by_role("link", name=DOC_ID, exact=True))
    expect(original.locator(".tag--check")).to_have_count(0)

    # Nobody took the new check, so nobody is flagged by it: every worker still counts
    # (promoting in place flagged b and c, who find one of its three gold spans; the
    # dashboard's switch for flagged workers is tested in test_flagged_workers.py).
    assert left_out == []
    expect(page.locator(".flagged-switch")).to_have_count(0)

    # Agreement: every document (the original stays a study document); gamma computed in
    # the background, then shown with its interval (the page itself never computes it).
    agreement = page.get_by_role("region", name="Agreement")
    expect(agreement.locator('tr[data-figure="krippendorff_alpha_sentences"]')).to_contain_text(
        " to "
    )
    deadline = time.monotonic() + 120
    gamma_row = agreement.locator('tr[data-figure="gamma"]')
    while "pending" in gamma_row.inner_text() and time.monotonic() < deadline:
        time.sleep(1)
        page.reload()
    expect(gamma_row).to_contain_text(re.compile(r"-?\d\.\d\d to -?\d\.\d\d"))
    expect(gamma_row).to_contain_text("Mathet et al. 2015")
    expect(agreement.locator('tr[data-figure="mean_pairwise_span_f1"]')).to_contain_text(
        re.compile(r"\d%.* to .*\d%")
    )
    assert not violations(page)
    for width in (360, 768, 1280):
        page.set_viewport_size({"width": width, "height": 900})
        agreement.screenshot(path=f"/tmp/agreement-{width}.png")
