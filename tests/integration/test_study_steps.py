"""Consent and surveys on both databases: the worker's pages send them through the steps in
order, declining ends with `no_consent`, answers are stored once per session (a second
Finish changes nothing), and they come out in the surveys export and on the dashboard."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from flask_migrate import downgrade, upgrade
from sqlalchemy import func, inspect, select

from app.core.extensions import db
from app.core.security import capability_csrf_token
from app.imports.document_formats import DocumentInput
from app.imports.document_store import import_documents
from app.models import AnnotationSession, ConsentDecision, SurveyAnswer
from app.rules.statuses import SessionStatus
from tests.support.apps import ROOT
from tests.support.studies import use_taxonomy
from tests.support.worker_api import read_to_the_end, start, start_study, submit

PROLIFIC = "https://app.prolific.com/submissions/complete?cc="
WORKER = {"PROLIFIC_PID": "p-1", "STUDY_ID": "s-1", "SESSION_ID": "x-1"}
PARAGRAPHS = ("Anna met Bob at the harbour.", "Carol waved at the ship.")
STEPS = """\
study:
  completion:
    completed: C1A2B3C4
    no_consent: CN1M2L3K
consent: |
  **Taking part.** You will read a summary. <b>raw</b>
survey:
  before:
    - {key: native, type: choice, text: "Is English your first language?",
       options: ["Yes", "No"], required: true}
    - {key: tools, type: multi, text: "What will you use?", options: [Notes, Dictionary]}
  after:
    - {key: difficulty, type: likert, scale: 5, text: "How hard was the task?", required: true}
    - {key: feedback, type: text, text: "Anything else?", max_length: 200}
"""


def use_steps(app, tmp_path: Path) -> None:
    """The default taxonomy with consent, both surveys and Prolific codes per outcome."""
    text = (ROOT / "config" / "taxonomy.yaml").read_text(encoding="utf-8")
    path = tmp_path / "taxonomy.yaml"
    path.write_text(f"{text[: text.index(chr(10) + 'study:' + chr(10))]}\n{STEPS}", "utf-8")
    use_taxonomy(app, path)


@pytest.fixture
def study(app, tmp_path):
    """The app with every step, and one two-paragraph document."""
    use_steps(app, tmp_path)
    import_documents([DocumentInput("doc-1", None, PARAGRAPHS)])
    db.session.commit()
    return app


def form(token: str, **fields) -> dict:
    return {"csrf_token": capability_csrf_token("annotate", token), **fields}


def where(response) -> str:
    assert response.status_code in (302, 303), response.data[:400]
    return response.headers["Location"]


def session_of(token: str) -> AnnotationSession:
    db.session.expire_all()
    return db.session.scalars(db.select(AnnotationSession).filter_by(token=token)).one()


def answers(token: str) -> dict[tuple[str, str], object]:
    db.session.expire_all()
    rows = db.session.scalars(
        select(SurveyAnswer).where(SurveyAnswer.session_id == session_of(token).id)
    )
    return {(row.survey, row.question_key): row.answer for row in rows}


def test_a_worker_goes_through_every_step_in_order(study, client):
    token = start_study(client, **WORKER)
    assert where(client.get(f"/s/{token}")) == f"/s/{token}/consent"
    assert session_of(token).page_loaded_at is None
    page = client.get(f"/s/{token}/consent").get_data(as_text=True)
    assert "<strong>Taking part.</strong>" in page and "&lt;b&gt;raw&lt;/b&gt;" in page
    # A worker reading the consent holds the document's place (app.crowd.assignment.claims).
    assert session_of(token).page_loaded_at is not None
    assert ">I agree</button>" in page and ">I do not agree</button>" in page
    # Not yet: the later steps send the worker back to consent.
    assert where(client.get(f"/s/{token}/survey/before")) == f"/s/{token}/consent"

    answer = client.post(f"/s/{token}/consent", data=form(token, decision="agree"))
    assert where(answer) == f"/s/{token}/survey/before"
    page = client.get(f"/s/{token}/survey/before").get_data(as_text=True)
    assert "Is English your first language?" in page and ">Continue</button>" in page

    answer = client.post(f"/s/{token}/survey/before", data=form(token, **{"q-native": "1"}))
    assert where(answer) == f"/s/{token}"
    assert client.get(f"/s/{token}").status_code == 200  # the task
    assert answers(token) == {("before", "native"): "No", ("before", "tools"): None}

    read_to_the_end(client, token, len(PARAGRAPHS))
    done = submit(client, token)
    assert done.status_code == 200
    assert done.get_json()["redirect_url"] == f"/s/{token}/survey/after"
    assert session_of(token).outcome == "completed"
    # The completion page and the task page wait for the after-survey.
    assert where(client.get(f"/s/{token}/complete")) == f"/s/{token}/survey/after"
    assert where(client.get(f"/s/{token}")) == f"/s/{token}/survey/after"
    page = client.get(f"/s/{token}/survey/after").get_data(as_text=True)
    assert ">Finish</button>" in page

    fields = {"q-difficulty": "4", "q-feedback": "Fine."}
    answer = client.post(f"/s/{token}/survey/after", data=form(token, **fields))
    assert where(answer) == f"/s/{token}/complete?follow=1"
    page = client.get(f"/s/{token}/complete?follow=1").get_data(as_text=True)
    assert f'href="{PROLIFIC}C1A2B3C4"' in page and "data-follow" in page
    assert "Return to the study" in page
    assert answers(token)[("after", "difficulty")] == 4
    # Every step done: the task page shows the submitted work again (read-only).
    assert client.get(f"/s/{token}").status_code == 200


def test_declining_ends_the_study_with_no_consent(study, client):
    token = start_study(client, **WORKER)
    answer = client.post(f"/s/{token}/consent", data=form(token, decision="decline"))
    assert where(answer) == f"/s/{token}/end"
    session = session_of(token)
    assert (session.outcome, session.status) == ("no_consent", SessionStatus.ABANDONED)
    page = client.get(f"/s/{token}/end").get_data(as_text=True)
    assert f'href="{PROLIFIC}CN1M2L3K"' in page and ">Return to the study</a>" in page
    assert session.completion_code not in page  # a code is earned by doing the task
    # Every other page of the session leads to the end; changing one's mind does not count.
    for path in ("", "/consent", "/survey/before", "/survey/after", "/complete"):
        assert where(client.get(f"/s/{token}{path}")) == f"/s/{token}/end", path
    again = client.post(f"/s/{token}/consent", data=form(token, decision="agree"))
    assert where(again) == f"/s/{token}/end"
    assert session_of(token).status == SessionStatus.ABANDONED  # the end page kept it released
    assert db.session.scalar(select(func.count()).select_from(ConsentDecision)) == 1


def test_a_form_without_its_csrf_token_changes_nothing(study, client):
    token = start_study(client, **WORKER)
    answer = client.post(f"/s/{token}/consent", data={"decision": "decline"})
    assert answer.status_code == 400
    assert "expired" in answer.get_data(as_text=True)
    wrong = client.post(f"/s/{token}/consent", data={"decision": "decline", "csrf_token": "0" * 64})
    assert wrong.status_code == 400
    unknown = client.post(f"/s/{token}/consent", data=form(token, decision="maybe"))
    assert unknown.status_code == 422
    assert "Choose I agree or I do not agree." in unknown.get_data(as_text=True)
    assert session_of(token).outcome is None
    assert db.session.scalar(select(func.count()).select_from(ConsentDecision)) == 0
    other = start(client, "doc-1", annotator="someone-else")
    stolen = client.post(f"/s/{token}/consent", data=form(other, decision="decline"))
    assert stolen.status_code == 400  # a token is bound to its own session


def test_survey_errors_name_each_field_and_keep_the_answers(study, client):
    token = start_study(client, **WORKER)
    where(client.post(f"/s/{token}/consent", data=form(token, decision="agree")))
    answer = client.post(f"/s/{token}/survey/before", data=form(token, **{"q-tools": ["1"]}))
    assert answer.status_code == 422
    page = answer.get_data(as_text=True)
    assert "There is a problem" in page
    assert 'href="#q-native-0"' in page and "Choose an answer." in page
    assert 'aria-describedby="q-native-error"' in page
    assert 'id="q-tools-1" name="q-tools" value="1" checked' in page  # kept
    assert answers(token) == {}
    forged = client.post(f"/s/{token}/survey/before", data=form(token, **{"q-native": "7"}))
    assert forged.status_code == 422
    assert "Choose one of the answers listed." in forged.get_data(as_text=True)


def test_the_form_messages_are_in_the_workers_language(study, client):
    """The per-field messages, the summary and the refusals from Python are translated."""
    german = {"Accept-Language": "de"}
    token = start_study(client, **WORKER)
    expired = client.post(f"/s/{token}/consent", data={"decision": "agree"}, headers=german)
    assert "Dieses Formular ist abgelaufen." in expired.get_data(as_text=True)
    unknown = client.post(f"/s/{token}/consent", data=form(token, decision="?"), headers=german)
    assert "Wählen Sie „Ich stimme zu“ oder „Ich stimme nicht zu“." in unknown.get_data(
        as_text=True
    )
    where(client.post(f"/s/{token}/consent", data=form(token, decision="agree")))
    answer = client.post(f"/s/{token}/survey/before", data=form(token), headers=german)
    page = answer.get_data(as_text=True)
    assert answer.status_code == 422
    assert "Wählen Sie eine Antwort." in page and "Choose an answer." not in page
    assert "There is a problem" not in page


def test_finishing_a_survey_twice_keeps_the_first_answers(study, client):
    token = start_study(client, **WORKER)
    where(client.post(f"/s/{token}/consent", data=form(token, decision="agree")))
    first = client.post(f"/s/{token}/survey/before", data=form(token, **{"q-native": "0"}))
    second = client.post(f"/s/{token}/survey/before", data=form(token, **{"q-native": "1"}))
    assert where(first) == where(second) == f"/s/{token}"
    assert answers(token)[("before", "native")] == "Yes"
    # A double click on I agree: one decision.
    where(client.post(f"/s/{token}/consent", data=form(token, decision="decline")))
    assert session_of(token).outcome is None


def test_a_taxonomy_without_steps_leaves_the_task_as_it_was(app, client):
    import_documents([DocumentInput("doc-1", None, PARAGRAPHS)])
    token = start(client, "doc-1", annotator="a")
    assert client.get(f"/s/{token}").status_code == 200
    assert where(client.get(f"/s/{token}/consent")) == f"/s/{token}"
    assert where(client.get(f"/s/{token}/survey/after")) == f"/s/{token}"
    read_to_the_end(client, token, len(PARAGRAPHS))
    assert submit(client, token).get_json()["redirect_url"] == f"/s/{token}/complete"


def finished_worker(client, token: str, feedback: str) -> None:
    where(client.post(f"/s/{token}/consent", data=form(token, decision="agree")))
    fields = {"q-native": "0", "q-tools": ["0", "1"]}
    where(client.post(f"/s/{token}/survey/before", data=form(token, **fields)))
    assert client.get(f"/api/sessions/{token}").status_code == 200  # the task, as the page reads it
    read_to_the_end(client, token, len(PARAGRAPHS))
    submit(client, token)
    fields = {"q-difficulty": "2", "q-feedback": feedback}
    where(client.post(f"/s/{token}/survey/after", data=form(token, **fields)))


def test_the_surveys_export_has_one_safe_row_per_session_and_question(study, client, runner):
    finished_worker(client, start_study(client, **WORKER), '=HYPERLINK("http://x")')
    result = runner.invoke(args=["export-annotations", "--what", "surveys", "--format", "csv"])
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.output.lstrip("\ufeff"))))
    assert [(r["survey"], r["question_key"]) for r in rows] == [
        ("before", "native"),
        ("before", "tools"),
        ("after", "difficulty"),
        ("after", "feedback"),
    ]
    by_key = {row["question_key"]: row for row in rows}
    assert by_key["tools"]["answer"] == '["Notes", "Dictionary"]'
    assert by_key["difficulty"]["answer"] == "2"
    assert by_key["feedback"]["answer"] == '\'=HYPERLINK("http://x")'  # never a formula
    assert by_key["native"]["question_text"] == "Is English your first language?"
    assert by_key["native"]["annotator_id"].startswith("prolific")
    jsonl = runner.invoke(args=["export-annotations", "--what", "surveys", "--format", "jsonl"])
    assert jsonl.exit_code == 0, jsonl.output
    assert len(jsonl.output.strip().splitlines()) == 4
    assert '"answer": "=HYPERLINK' in jsonl.output  # JSON keeps the raw text


def test_the_researcher_downloads_surveys_and_sees_the_summary(study, client, researcher_client):
    finished_worker(client, start_study(client, **WORKER), "Fine.")
    other = {"PROLIFIC_PID": "p-2", "STUDY_ID": "s-1", "SESSION_ID": "x-2"}
    finished_worker(client, start_study(client, **other), "")
    download = researcher_client.get("/research/export/surveys.csv")
    assert download.status_code == 200
    assert download.headers["Content-Type"].startswith("text/csv")
    assert len(download.get_data(as_text=True).strip().splitlines()) == 1 + 2 * 4
    page = researcher_client.get("/research/").get_data(as_text=True)
    assert 'aria-labelledby="surveys-heading"' in page
    difficulty = page[page.index('data-question="after.difficulty"') :].split("</tr>")[0]
    assert "mean 2.00" in difficulty and "2: 2" in difficulty
    feedback = page[page.index('data-question="after.feedback"') :].split("</tr>")[0]
    assert "1 free-text answer" in feedback
    preview = researcher_client.get("/research/taxonomy").get_data(as_text=True)
    assert "<strong>Taking part.</strong>" in preview and "How hard was the task?" in preview


def test_the_migration_creates_and_drops_the_tables(app):
    downgrade(revision="e18a00000003")
    tables = inspect(db.engine).get_table_names()
    assert "survey_answers" not in tables and "consent_decisions" not in tables
    upgrade()
    tables = inspect(db.engine).get_table_names()
    assert "survey_answers" in tables and "consent_decisions" in tables
