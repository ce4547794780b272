"""A study set up in the console, in Chromium (issue 30 points 2 and 3): a taxonomy with an
error shows its line, a good one its difference and then a new version; documents
uploaded are imported in the background with the progress on the page; both pages are
axe-clean and fit from 360 px to wide screens."""

from __future__ import annotations

import json
import os
from pathlib import Path

from playwright.sync_api import Page, expect
from sqlalchemy import update

from app.core.extensions import db
from app.models import DocumentUpload
from tests.support.accounts import add_account
from tests.support.annotate_page import resize
from tests.support.axe import violations
from tests.support.research import overflow_by_width
from tests.support.research_console import EMAIL, PASSWORD, log_in
from tests.support.study_setup import FIXTURES, owned_study

SHOT_WIDTHS = (390, 768, 1280)


def _shots(page: Page, folder: Path, name: str) -> None:
    for width in SHOT_WIDTHS:
        resize(page, width)
        page.screenshot(path=str(folder / f"{name}-{width}.png"), full_page=True)


def test_a_study_is_set_up_in_the_console(page: Page, live_app, tmp_path):
    live = live_app()
    with live.app.app_context():
        account = add_account(EMAIL, PASSWORD)  # an editor of the default study; owns pilot
        db.session.commit()
        owned_study(account)
        db.session.remove()
    shots = Path(os.environ.get("SETUP_SCREENSHOTS", tmp_path))
    shots.mkdir(parents=True, exist_ok=True)
    page.set_viewport_size({"width": 1280, "height": 800})
    log_in(page, live.url)

    page.goto(f"{live.url}/research/studies/pilot/taxonomy/upload")
    page.get_by_label("Taxonomy file").set_input_files(str(FIXTURES / "broken.yaml"))
    page.get_by_role("button", name="Check").click()
    expect(page.get_by_role("alert")).to_contain_text("broken.yaml:5: categories[0].type")
    assert not violations(page)

    page.get_by_label("Taxonomy file").set_input_files(str(FIXTURES / "pilot-v2.yaml"))
    page.get_by_role("button", name="Check").click()
    expect(page.get_by_role("heading", name="What pilot-v2.yaml changes")).to_be_visible()
    expect(page.locator("dd").first).to_contain_text("repeated")
    assert not violations(page)
    _shots(page, shots, "taxonomy-diff")
    assert set(overflow_by_width(page).values()) == {0}
    resize(page, 1280)
    page.get_by_role("button", name="Save as new version").click()
    expect(page.get_by_role("status").first).to_contain_text("Saved pilot-v2.yaml")
    expect(page.get_by_role("cell", name="pilot-v2.yaml")).to_be_visible()

    records = [{"id": f"story-{n:03d}", "paragraphs": [f"Paragraph {n}."]} for n in range(150)]
    upload = tmp_path / "stories.jsonl"
    upload.write_text("".join(json.dumps(r) + "\n" for r in records))
    page.goto(f"{live.url}/research/studies/pilot/documents")
    page.get_by_label("Files").set_input_files(str(upload))
    page.get_by_role("button", name="Upload and import").click()
    # The page polls the upload, then reloads with the result and the documents.
    expect(page.get_by_text("Imported: 150 documents: 150 new")).to_be_visible(timeout=30_000)
    expect(page.get_by_role("row")).to_have_count(101)  # the header, 100 a page
    expect(page.get_by_text("Page 1 of 2")).to_be_visible()
    assert not violations(page)
    assert set(overflow_by_width(page).values()) == {0}
    _shots(page, shots, "documents")

    page.get_by_role("button", name="Retire story-000").click()
    expect(page.get_by_role("button", name="Un-retire story-000")).to_be_visible()
    assert not violations(page)


def test_the_page_follows_an_upload_until_it_ends(page: Page, live_app, tmp_path):
    live = live_app()
    with live.app.app_context():
        account = add_account(EMAIL, PASSWORD)  # an editor of the default study; owns pilot
        db.session.commit()
        study = owned_study(account)
        upload = DocumentUpload(
            study_id=study.id,
            status="storing",
            names=["big.jsonl"],
            done=40,
            total=200,
            problems=[],
        )
        db.session.add(upload)
        db.session.commit()
        upload_id = upload.id
        db.session.remove()
    page.set_viewport_size({"width": 390, "height": 800})
    log_in(page, live.url)
    page.goto(f"{live.url}/research/studies/pilot/documents?upload={upload_id}")
    expect(page.get_by_role("status")).to_contain_text("Stored 40 of 200 documents")
    expect(page.get_by_label("Importing")).to_have_attribute("value", "40")
    assert not violations(page)
    shots = Path(os.environ.get("SETUP_SCREENSHOTS", tmp_path))
    shots.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shots / "documents-progress-390.png"), full_page=True)
    with live.app.app_context():  # the job moves on, then ends (as its worker would write)
        db.session.execute(
            update(DocumentUpload).where(DocumentUpload.id == upload_id).values(done=120)
        )
        db.session.commit()
        expect(page.get_by_role("status")).to_contain_text("Stored 120 of 200 documents")
        db.session.execute(
            update(DocumentUpload)
            .where(DocumentUpload.id == upload_id)
            .values(
                status="done", done=200, summary="200 documents: 200 new, 0 updated, 0 unchanged"
            )
        )
        db.session.commit()
        db.session.remove()
    expect(page.get_by_text("Imported: 200 documents: 200 new")).to_be_visible()
    expect(page.get_by_label("Importing")).to_have_count(0)
