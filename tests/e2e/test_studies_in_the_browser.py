"""Issue 30's "done when", in Chromium (docs/studies.md): a researcher sets a study up in the
console alone (create it, upload a taxonomy with an error and see its line, then a good
one, upload documents, open it, copy its Prolific link); a Prolific worker completes it and
lands on that study's own code; a second study with another taxonomy runs on the same
server at the same time, and neither's documents, sessions, figures or exports show in the
other; a taxonomy uploaded mid-study applies to new sessions only."""

from __future__ import annotations

import json
import re
from pathlib import Path

from playwright.sync_api import Page, expect
from sqlalchemy import select

from app.core.extensions import db
from app.models import AnnotationSession, Document, Study
from app.studies import create_study, store_taxonomy
from tests.support.accounts import add_account
from tests.support.annotate_page import select_span
from tests.support.live_server import run_commands
from tests.support.prolific import PROLIFIC, stub_prolific
from tests.support.research_console import EMAIL, PASSWORD, log_in
from tests.support.study_day import annotator_ready
from tests.support.study_setup import FIXTURES

CATEGORIES = """\
categories:
  - {key: ungrammatical, name: Ungrammatical, type: singleton, description: Broken grammar.}
  - {key: unclear, name: Unclear, type: singleton, description: Hard to follow.}
"""
MAIN = f"""\
title: Main study
instructions: Mark every error you find.
study:
  annotators_per_document: 2
  completion:
    completed: MAINDONE1
{CATEGORIES}"""
# Mid-study: a category added (allowed; removing or renaming a used key is refused).
MAIN_V2 = MAIN + (
    "  - {key: repeated, name: Repeated, type: singleton, description: Said twice.}\n"
)
OTHER = """\
title: Other study
instructions: Mark what is wrong.
study:
  completion:
    completed: OTHERDONE
categories:
  - {key: wrong-name, name: Wrong name, type: singleton, description: A name is wrong.}
"""
MAIN_DOCUMENTS = {
    "harbour": ("Anna met Bob at the harbour.", "Bob sailed away at noon."),
    "mill": ("The mill stood by the river.", "It turned all day long."),
}
OTHER_DOCUMENTS = {"bakery": ("Mara opened the bakery at dawn.", "The oven was cold.")}


def _jsonl(path: Path, documents: dict[str, tuple[str, ...]]) -> Path:
    records = [
        {"id": key, "title": key.title(), "paragraphs": list(p)} for key, p in documents.items()
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    return path


def _worker(number: int) -> str:
    pid = f"60aa{number:020d}"
    return f"PROLIFIC_PID={pid}&STUDY_ID=main-on-prolific&SESSION_ID=session-{number}"


def _prolific_link(page: Page) -> str:
    """The Study URL for Prolific as the overview shows it, with the placeholders Prolific
    fills for worker 1 (its {{%...%}} replaced)."""
    template = page.get_by_label("Study URL for Prolific").input_value()
    query = dict(part.split("=", 1) for part in _worker(1).split("&"))
    return re.sub(r"\{\{%(\w+)%\}\}", lambda m: query[m.group(1)], template)


def _categories(page: Page) -> list[str]:
    annotator_ready(page)
    return page.locator(".js-category").evaluate_all("els => els.map(e => e.dataset.category)")


def _mark_and_submit(page: Page, paragraphs: tuple[str, ...], words: str, category: str) -> None:
    start = paragraphs[0].index(words)
    select_span(page, 0, paragraphs[0], start, start + len(words))
    page.locator(f'.js-category[data-category="{category}"]').click()
    page.get_by_role("button", name="Add", exact=True).click()
    expect(page.get_by_role("status")).to_have_text("Saved")
    page.get_by_role("button", name="No more errors. Go to next paragraph").click()
    expect(page.locator(".js-progress")).to_have_text(f"Paragraph 2 of {len(paragraphs)}")
    page.get_by_role("button", name="Submit", exact=True).click()
    page.get_by_role("button", name="Yes, submit").click()


def test_a_study_set_up_in_the_browser_runs_beside_another(page: Page, live_app, tmp_path):
    live = live_app()
    with live.app.app_context():
        add_account(EMAIL, PASSWORD)
        db.session.commit()
        db.session.remove()
    page.set_viewport_size({"width": 1280, "height": 900})
    log_in(page, live.url)

    # 1. Create the study from the Studies page.
    page.goto(f"{live.url}/research/studies/")
    page.get_by_label("Slug").fill("main")
    page.get_by_label("Title").fill("Main study")
    page.get_by_role("button", name="Create study").click()
    expect(page).to_have_url(f"{live.url}/research/studies/main/")

    # 2. A taxonomy with an error shows its line; then the good one, as a new version.
    page.get_by_role("link", name="Upload a taxonomy").click()
    page.get_by_label("Taxonomy file").set_input_files(str(FIXTURES / "broken.yaml"))
    page.get_by_role("button", name="Check").click()
    expect(page.get_by_role("alert")).to_contain_text("broken.yaml:5: categories[0].type")
    (tmp_path / "main.yaml").write_text(MAIN, "utf-8")
    page.get_by_label("Taxonomy file").set_input_files(str(tmp_path / "main.yaml"))
    page.get_by_role("button", name="Check").click()
    expect(page.get_by_role("heading", name="What main.yaml changes")).to_be_visible()
    page.get_by_role("button", name="Save as new version").click()
    expect(page.get_by_role("status").first).to_contain_text("Saved main.yaml")

    # 3. Documents uploaded, imported in the background.
    page.goto(f"{live.url}/research/studies/main/documents")
    page.get_by_label("Files").set_input_files(str(_jsonl(tmp_path / "main.jsonl", MAIN_DOCUMENTS)))
    page.get_by_role("button", name="Upload and import").click()
    expect(page.get_by_text("Imported: 2 documents: 2 new")).to_be_visible(timeout=30_000)

    # 4. Open it; the overview gives the Prolific link with the study's slug in it.
    page.goto(f"{live.url}/research/studies/main/")
    page.get_by_role("button", name="Open the study").click()
    expect(page.get_by_role("heading", name="Status: open")).to_be_visible()
    link = _prolific_link(page)
    assert link.startswith(f"{live.url}/study/main/start?")

    # A second study on the same server, with its own taxonomy and documents (the
    # commands a researcher with a shell would use; the browser's way is above).
    with live.app.app_context():
        other = create_study("other", "Other study", status="open")
        store_taxonomy(other, OTHER.encode(), "other.yaml")
        db.session.remove()
    run_commands(
        live,
        ["import-documents", _jsonl(tmp_path / "other.jsonl", OTHER_DOCUMENTS), "--study", "other"],
    )

    # 5. Worker 1 starts the main study; worker 9 the other one, at the same time.
    asked = stub_prolific(page)
    page.goto(link)
    assert set(_categories(page)) == {"ungrammatical", "unclear"}
    with live.app.app_context():
        first = db.session.scalar(select(Document.external_id).join(AnnotationSession))
        db.session.remove()
    elsewhere = page.context.new_page()
    stub_prolific(elsewhere)
    elsewhere.goto(f"{live.url}/study/other/start?{_worker(9)}")
    assert _categories(elsewhere) == ["wrong-name"]
    expect(elsewhere.get_by_role("heading", name="Bakery")).to_be_visible()

    # 6. Mid-study, a new version adds a category: new sessions get it, worker 1's keeps
    # the version it started with (after a reload too).
    console = page.context.new_page()
    console.goto(f"{live.url}/research/studies/main/taxonomy/upload")
    (tmp_path / "main-v2.yaml").write_text(MAIN_V2, "utf-8")
    console.get_by_label("Taxonomy file").set_input_files(str(tmp_path / "main-v2.yaml"))
    console.get_by_role("button", name="Check").click()
    console.get_by_role("button", name="Save as new version").click()
    expect(console.get_by_role("status").first).to_contain_text("Saved main-v2.yaml")
    page.reload()
    assert set(_categories(page)) == {"ungrammatical", "unclear"}
    second = page.context.new_page()
    second.goto(f"{live.url}/study/main/start?{_worker(2)}")
    assert set(_categories(second)) == {"ungrammatical", "unclear", "repeated"}
    second.close()

    # 7. Worker 1 completes the main study and lands on its code; worker 9 on the other's.
    _mark_and_submit(
        page, MAIN_DOCUMENTS[first], "Anna" if first == "harbour" else "mill", "unclear"
    )
    expect(page.locator(".completion__code")).to_have_text("MAINDONE1")
    page.wait_for_url(f"{PROLIFIC}MAINDONE1")
    assert asked == [f"{PROLIFIC}MAINDONE1"]
    _mark_and_submit(elsewhere, OTHER_DOCUMENTS["bakery"], "Mara", "wrong-name")
    expect(elsewhere.locator(".completion__code")).to_have_text("OTHERDONE")

    # 8. Neither study's documents, sessions, figures or exports show in the other.
    console.goto(f"{live.url}/research/studies/main/dashboard")
    table = console.get_by_role("table").filter(has_text="harbour").first
    expect(table).to_contain_text("mill")
    expect(console.get_by_role("main")).not_to_contain_text("bakery")
    exported = console.request.get(f"{live.url}/research/studies/main/export/annotations.jsonl")
    records = [json.loads(line) for line in exported.text().splitlines()]
    assert [(r["document_id"], r["category"]) for r in records] == [(first, "unclear")]
    with live.app.app_context():
        sessions = db.session.execute(
            select(Study.slug, AnnotationSession.taxonomy_version, AnnotationSession.status)
            .join(Study, Study.id == AnnotationSession.study_id)
            .order_by(AnnotationSession.id)
        ).all()
        db.session.remove()
    assert [(slug, status) for slug, _, status in sessions] == [
        ("main", "submitted"),
        ("other", "submitted"),
        ("main", "active"),
    ]
    assert sessions[0][1] != sessions[2][1]  # worker 1 kept v1; worker 2 started on v2
    # A researcher of the main study only does not see the other one.
    assert console.request.get(f"{live.url}/research/studies/other/dashboard").status == 404
