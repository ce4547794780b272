"""Outcomes on both databases: Submit stores one and sends a Prolific worker to its fixed
completion code (both submit paths), attention checks decide it only under
`attention_checks: fail`, MTurk's form and the exports carry it."""

from __future__ import annotations

import csv
import io
import json
import uuid
from pathlib import Path

import pytest
from flask_migrate import downgrade, upgrade
from sqlalchemy import event

from app.core.extensions import db
from app.imports.document_formats import DocumentInput
from app.imports.document_store import import_documents
from app.models import AnnotationSession
from app.taxonomy import current_taxonomy
from tests.support.apps import ROOT
from tests.support.studies import use_taxonomy as take_taxonomy
from tests.support.worker_api import read_to_the_end, save, start, start_study, submit

PROLIFIC = "https://app.prolific.com/submissions/complete?cc="
PARAGRAPHS = ("Anna met Bob at the harbour.", "Carol waved at the ship.")
# The gold span of the check document: "Carol", a person never introduced.
GOLD = [{"paragraph_id": 1, "start": 0, "end": 5, "category": "new-person"}]
WORKER = {"PROLIFIC_PID": "p-1", "STUDY_ID": "s-1", "SESSION_ID": "x-1"}


def use_taxonomy(app, tmp_path: Path, study: str) -> None:
    """The default taxonomy with this `study:` section, loaded as the running one."""
    text = (ROOT / "config" / "taxonomy.yaml").read_text(encoding="utf-8")
    head = text[: text.index("\nstudy:\n")]
    path = tmp_path / "taxonomy.yaml"
    path.write_text(f"{head}\nstudy:\n{study}", encoding="utf-8")
    take_taxonomy(app, path)


CODES = (
    "  completion:\n"
    "    completed: C1A2B3C4\n"
    "    failed_checks: CQ5R4S3T\n"
    "    no_consent: CN1M2L3K\n"
)
# /start hands the first arrival the check, the next one doc-1 (app.crowd.assignment.service).
CHECKS_FIRST = "  attention_check_share: 0.5\n"


@pytest.fixture
def documents(app):
    """doc-1 (an ordinary summary) and check-1 (an attention check with one gold span)."""
    import_documents(
        [
            DocumentInput("doc-1", None, PARAGRAPHS),
            DocumentInput("check-1", None, PARAGRAPHS, gold=GOLD),
        ]
    )
    db.session.commit()


def stored(token: str) -> AnnotationSession:
    db.session.expire_all()
    return db.session.scalars(db.select(AnnotationSession).filter_by(token=token)).one()


def finish(client, document: str, *, mark_gold: bool, **worker: str):
    """Open, annotate (the gold span or another), read on and Submit; (token, answer). A
    study with completion codes is entered through /start: it must hand out `document`."""
    if current_taxonomy().study.enters_through_start:
        token = start_study(client, **(worker or WORKER))
        assert stored(token).document.external_id == document
    else:
        token = start(client, document, **(worker or WORKER))
    text = "Carol" if mark_gold else "ship"
    start_offset = PARAGRAPHS[1].index(text)
    end_offset = start_offset + len(text)
    read_to_the_end(client, token, len(PARAGRAPHS))
    annotation = {
        "id": str(uuid.uuid4()),
        "category": "new-person",
        "span": {"paragraph_id": 1, "start": start_offset, "end": end_offset, "text": text},
        "paired_span": None,
        "comment": None,
    }
    assert save(client, token, annotation).status_code == 201
    answer = submit(client, token)
    assert answer.status_code == 200, answer.data
    return token, answer.get_json()


def test_a_prolific_worker_goes_to_the_fixed_code_of_completed(app, client, documents, tmp_path):
    use_taxonomy(app, tmp_path, CODES)
    token, answer = finish(client, "doc-1", mark_gold=False)
    row = stored(token)
    assert (row.status, row.outcome) == ("submitted", "completed")
    assert answer == {
        "completion_code": row.completion_code,  # the app's own code stays, exported
        "redirect_url": f"{PROLIFIC}C1A2B3C4",
        "outcome": "completed",
        "shown_code": "C1A2B3C4",  # what the worker sees: the code Prolific expects
    }
    assert submit(client, token).get_json() == answer  # idempotent


def test_missed_checks_fail_when_the_study_says_so(app, client, documents, tmp_path):
    use_taxonomy(app, tmp_path, CODES + CHECKS_FIRST + "  attention_checks: fail\n")
    token, answer = finish(client, "check-1", mark_gold=False)
    assert stored(token).outcome == "failed_checks"
    assert (answer["outcome"], answer["redirect_url"]) == ("failed_checks", f"{PROLIFIC}CQ5R4S3T")
    # The page of the submitted task (a reload) shows the same outcome and address.
    page = client.get(f"/api/sessions/{token}")
    assert page.status_code == 200
    html = client.get(f"/s/{token}").get_data(as_text=True)
    assert f"{PROLIFIC}CQ5R4S3T" in html and f"{PROLIFIC}C1A2B3C4" not in html


def test_found_checks_and_ordinary_documents_complete_under_fail(app, client, documents, tmp_path):
    use_taxonomy(app, tmp_path, CODES + CHECKS_FIRST + "  attention_checks: fail\n")
    token, answer = finish(client, "check-1", mark_gold=True)
    assert (stored(token).outcome, answer["redirect_url"]) == ("completed", f"{PROLIFIC}C1A2B3C4")
    other = {"PROLIFIC_PID": "p-2", "STUDY_ID": "s-1", "SESSION_ID": "x-2"}
    token, answer = finish(client, "doc-1", mark_gold=False, **other)
    assert (stored(token).outcome, answer["outcome"]) == ("completed", "completed")


def test_missed_checks_only_flag_by_default(app, client, documents, tmp_path):
    use_taxonomy(app, tmp_path, CODES + CHECKS_FIRST)  # attention_checks: flag, the default
    token, answer = finish(client, "check-1", mark_gold=False)
    assert (stored(token).outcome, answer["redirect_url"]) == ("completed", f"{PROLIFIC}C1A2B3C4")


def test_first_wave_completion_urls_still_work(app, client, documents, tmp_path):
    use_taxonomy(app, tmp_path, f'  completion_url: "{PROLIFIC}{{code}}"\n')
    token, answer = finish(client, "doc-1", mark_gold=False)
    assert answer["redirect_url"] == f"{PROLIFIC}{stored(token).completion_code}"
    use_taxonomy(app, tmp_path, f'  completion_url: "{PROLIFIC}FIXED99"\n')
    other = {"PROLIFIC_PID": "p-2", "STUDY_ID": "s-1", "SESSION_ID": "x-2"}
    _, answer = finish(client, "doc-1", mark_gold=False, **other)
    assert answer["redirect_url"] == f"{PROLIFIC}FIXED99"


def test_completion_url_setting_overrides_every_outcome(app, client, documents, tmp_path):
    use_taxonomy(app, tmp_path, CODES + CHECKS_FIRST + "  attention_checks: fail\n")
    app.config["COMPLETION_URL"] = "https://example.org/done?code={code}"
    token, answer = finish(client, "check-1", mark_gold=False)
    code = stored(token).completion_code
    assert answer == {
        "completion_code": code,
        "redirect_url": f"https://example.org/done?code={code}",
        "outcome": "failed_checks",
        "shown_code": code,  # the platform gets the session's own code: the worker sees it
    }


def test_mturk_completion_page_posts_the_outcome(app, client, documents, tmp_path):
    use_taxonomy(app, tmp_path, CODES + CHECKS_FIRST + "  attention_checks: fail\n")
    worker = {
        "workerId": "W1",
        "assignmentId": "A1",
        "hitId": "H1",
        "turkSubmitTo": "https://workersandbox.mturk.com",
    }
    token, answer = finish(client, "check-1", mark_gold=False, **worker)
    assert answer["redirect_url"] == f"/s/{token}/complete"  # MTurk gets the form instead
    page = client.get(answer["redirect_url"]).get_data(as_text=True)
    assert '<input type="hidden" name="outcome" value="failed_checks">' in page
    assert '<input type="hidden" name="assignmentId" value="A1">' in page


def test_sessions_export_has_the_outcome_and_no_code_before_submit(
    app, client, runner, researcher_client, documents, tmp_path
):
    use_taxonomy(app, tmp_path, CODES + CHECKS_FIRST + "  attention_checks: fail\n")
    failed, _ = finish(client, "check-1", mark_gold=False)
    # Another participant: a Prolific submission is one session, failing is final and the
    # worker who failed the check gets no more documents (flagged).
    other = {"PROLIFIC_PID": "p-2", "STUDY_ID": "s-1", "SESSION_ID": "x-2"}
    completed, _ = finish(client, "doc-1", mark_gold=True, **other)
    start(client, "doc-1", annotator="still-reading")
    result = runner.invoke(args=["export-annotations", "--what", "sessions", "--format", "csv"])
    assert result.exit_code == 0, result.output
    downloaded = researcher_client.get("/research/export/sessions.csv").get_data(as_text=True)
    for text in (result.stdout, downloaded):
        rows = list(csv.DictReader(io.StringIO(text.lstrip("\ufeff"))))
        outcomes = sorted((r["document_id"], r["outcome"]) for r in rows)
        assert outcomes == [("check-1", "failed_checks"), ("doc-1", ""), ("doc-1", "completed")]
        codes = {(r["document_id"], r["outcome"]): r["completion_code"] for r in rows}
        assert codes[("doc-1", "")] == ""  # not submitted: no code to hand out
        assert codes[("check-1", "failed_checks")] == stored(failed).completion_code
        assert codes[("doc-1", "completed")] == stored(completed).completion_code
    result = runner.invoke(args=["export-annotations", "--what", "sessions"])
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert sorted(str(r["outcome"]) for r in records) == ["None", "completed", "failed_checks"]


def test_dashboard_and_study_pages_show_outcomes(
    app, client, researcher_client, documents, tmp_path
):
    use_taxonomy(app, tmp_path, CODES + CHECKS_FIRST + "  attention_checks: fail\n")
    finish(client, "check-1", mark_gold=False)
    html = researcher_client.get("/research/").get_data(as_text=True)
    assert "<code>failed_checks</code> 1" in html
    assert 'failed_checks <span class="tag tag--flag">not completed</span>' in html
    study = researcher_client.get("/research/study").get_data(as_text=True)
    taxonomy = researcher_client.get("/research/taxonomy").get_data(as_text=True)
    for page in (study, taxonomy):
        assert f"<code>{PROLIFIC}C1A2B3C4</code>" in page
        assert "<code>CQ5R4S3T</code>" in page
        assert "<code>fail</code>" in page
        assert "manual review" not in page  # every named code is fixed
    use_taxonomy(app, tmp_path, f'  completion_url: "{PROLIFIC}{{code}}"\n')
    study = researcher_client.get("/research/study").get_data(as_text=True)
    assert "manual review" in study  # the first-wave template: a warning says why


def test_under_fail_an_ordinary_document_is_still_submitted_in_one_statement(
    app, client, documents, tmp_path
):
    use_taxonomy(app, tmp_path, CODES + CHECKS_FIRST + "  attention_checks: fail\n")
    sent: list[str] = []

    def record(conn, cursor, statement, parameters, context, executemany):
        sent.append(statement)

    for document, expected in (("doc-1", 1), ("check-1", None)):
        token = start(client, document, annotator=f"reader-of-{document}")
        read_to_the_end(client, token, len(PARAGRAPHS))
        db.session.commit()
        sent.clear()
        for engine in db.engines.values():
            event.listen(engine, "before_cursor_execute", record)
        try:
            answer = submit(client, token)
        finally:
            for engine in db.engines.values():
                event.remove(engine, "before_cursor_execute", record)
        assert answer.status_code == 200
        if expected:
            assert len(sent) == expected and sent[0].startswith("UPDATE annotation_sessions")
        else:  # the one statement declines a check document: its annotations decide
            assert len(sent) > 1 and "gold IS NULL" in sent[0]
        assert stored(token).outcome == ("completed" if document == "doc-1" else "failed_checks")


def test_the_migration_gives_earlier_submitted_sessions_the_outcome_completed(
    app, client, documents
):
    submitted, _ = finish(client, "doc-1", mark_gold=False)
    still_open = start(client, "check-1", annotator="still-reading")
    db.session.execute(db.update(AnnotationSession).values(outcome=None))
    db.session.commit()
    db.session.close()
    downgrade(revision="c01d82fceacd")
    upgrade()
    assert (stored(submitted).outcome, stored(still_open).outcome) == ("completed", None)
