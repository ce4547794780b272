"""Training before the task, through the app on SQLite and PostgreSQL: the practice page,
Check my answers, failing and passing, not training twice in a study, practice documents
kept out of /start and the figures, the training export."""

from __future__ import annotations

import csv
import io
import json

import pytest

from app.core.extensions import db
from app.core.security import capability_csrf_token
from app.crowd.settings import study_settings
from app.models import AnnotationSession, Document, TrainingAttempt
from app.research.dashboard import load_study
from tests.support.accounts import add_account
from tests.support.training import (
    PRACTICE_ID,
    answer,
    import_practice,
    right_answers,
    training_taxonomy,
)
from tests.support.worker_api import token_from

TASK = {"id": "task-1", "paragraphs": ["Anna met Bob.", "Then it rained."]}
TASK_2 = {"id": "task-2", "paragraphs": ["Carl left early.", "Nobody noticed."]}


@pytest.fixture
def study(make_app, tmp_path):
    app = make_app({"TAXONOMY_PATH": training_taxonomy(tmp_path, attempts=2)})
    with app.app_context():
        import_practice(app, tmp_path, TASK, TASK_2)
        yield app


def open_task(client, document="task-1", **params) -> str:
    params = {"annotator": "w1", **params}
    response = client.get(f"/annotate/{document}", query_string=params)
    assert response.status_code == 302
    return token_from(response)


def check(client, token, annotations, document_id=PRACTICE_ID, csrf=True):
    headers = {"X-CSRFToken": capability_csrf_token("annotate", token)} if csrf else {}
    return client.post(
        f"/api/sessions/{token}/training",
        json={"document_id": document_id, "annotations": annotations},
        headers=headers,
    )


def session_of(token) -> AnnotationSession:
    db.session.expire_all()
    return db.session.scalars(db.select(AnnotationSession).filter_by(token=token)).one()


def test_the_task_waits_for_training_and_the_practice_page_shows_the_practice(study):
    client = study.test_client()
    token = open_task(client)
    response = client.get(f"/s/{token}")
    assert response.status_code == 303
    assert response.headers["Location"] == f"/s/{token}/training"
    page = client.get(f"/s/{token}/training").get_data(as_text=True)
    assert 'role="region" aria-label="Practice"' in page
    assert "Check my answers" in page
    assert "Lord Findon bought three loaves." in page
    assert "Anna met Bob." not in page  # never the task's text
    assert "explanation" not in page  # nor the answers


def test_the_practice_page_is_in_the_workers_language(study):
    client = study.test_client()
    token = open_task(client)
    page = client.get(f"/s/{token}/training", headers={"Accept-Language": "de"})
    html = page.get_data(as_text=True)
    assert 'aria-label="Übung"' in html and ">Meine Antworten prüfen</button>" in html
    # The count the page updates stays a live element inside the translated sentence.
    assert 'Verbleibende Prüfungen: <span class="js-attempts-left">2</span> von 2.' in html
    assert "Gefunden" in html  # practice.mjs's words, in the page's JS catalogue
    assert "Check my answers" not in html


def test_failing_every_attempt_ends_with_failed_training(study):
    client = study.test_client()
    token = open_task(client)
    first = check(client, token, [answer(0, 0, 4, "new-person")])
    assert first.status_code == 200, first.get_json()
    body = first.get_json()
    assert body["passed"] is False and body["failed"] is False
    assert body["attempts_left"] == 1 and body["next_url"] is None
    # A check left: counts and kinds only, never where the errors are nor why (issue 26).
    assert body["revealed"] is False and body["feedback"] == []
    assert body["summary"] == {"gold": 2, "found": 0, "wrong_category": 0, "missed": 2, "extra": 1}
    assert "Findon" not in first.get_data(as_text=True)
    second = check(client, token, []).get_json()
    assert second["failed"] is True and second["attempts_left"] == 0
    # The last check shows the answers.
    assert second["revealed"] is True
    assert [item["kind"] for item in second["feedback"]] == ["missed", "missed"]
    assert second["feedback"][0]["explanation"] == "Lord Findon appears without any introduction."
    assert second["next_url"] == f"/s/{token}/end"
    session = session_of(token)
    assert session.outcome == "failed_training" and session.status == "abandoned"
    # Never the task: its page and the practice page lead to the end of the study.
    for url in (f"/s/{token}", f"/s/{token}/training"):
        assert client.get(url, follow_redirects=True).request.path == f"/s/{token}/end"
    end = client.get(f"/s/{token}/end").get_data(as_text=True)
    assert "The practice was not passed" in end
    assert "Anna met Bob." not in end
    assert session_of(token).status == "abandoned"  # the visits did not revive it
    assert check(client, token, right_answers()).status_code == 409
    attempts = db.session.scalars(db.select(TrainingAttempt).order_by(TrainingAttempt.attempt))
    assert [(a.attempt, a.passed) for a in attempts] == [(1, False), (2, False)]


def test_whole_paragraphs_fail_the_practice_and_near_exact_spans_pass(study):
    # docs/training.md's worked example through the API: each paragraph highlighted whole
    # with the right error types surrounds both errors but locates neither.
    client = study.test_client()
    token = open_task(client)
    whole = [answer(0, 0, 64, "new-person"), answer(1, 0, 63, "repetition", paired=(0, 0, 31))]
    body = check(client, token, whole).get_json()
    assert (body["passed"], body["recall"], body["precision"]) == (False, 0.0, 0.0)
    near = [answer(0, 37, 43, "new-person"), answer(1, 32, 62, "repetition", paired=(0, 0, 31))]
    body = check(client, token, near).get_json()
    assert (body["passed"], body["recall"], body["precision"]) == (True, 1.0, 1.0)


def test_failed_training_sends_a_prolific_worker_to_the_outcome_code(make_app, tmp_path):
    completion = "  completion: {completed: CDONE, failed_training: CTRAIN}\n"
    path = training_taxonomy(tmp_path, attempts=1, study_lines=completion)
    app = make_app({"TAXONOMY_PATH": str(path)})
    with app.app_context():
        import_practice(app, tmp_path, TASK)
        client = app.test_client()
        params = {"PROLIFIC_PID": "p" * 24, "STUDY_ID": "s" * 24, "SESSION_ID": "x" * 24}
        response = client.get("/start", query_string=params)  # a study with codes starts here
        token = token_from(response)
        assert check(client, token, []).get_json()["failed"] is True
        end = client.get(f"/s/{token}/end").get_data(as_text=True)
        assert "Return to the study" in end
        assert 'href="https://app.prolific.com/submissions/complete?cc=CTRAIN"' in end


def test_passing_leads_to_the_task_and_is_not_asked_again_in_the_study(study):
    client = study.test_client()
    token = open_task(client)
    wrong = check(client, token, [answer(0, 32, 43, "missing-info")]).get_json()
    assert wrong["feedback"] == [] and wrong["revealed"] is False
    assert wrong["summary"] == {"gold": 2, "found": 0, "wrong_category": 1, "missed": 1, "extra": 0}
    body = check(client, token, right_answers()).get_json()
    assert body["passed"] and body["finished"] and body["next_url"] == f"/s/{token}"
    assert body["revealed"] is True  # after a pass: the spans and explanations
    assert [item["kind"] for item in body["feedback"]] == ["found", "found"]
    assert body["feedback"][1]["explanation"] == "The first sentence of the text is said again."
    assert body["recall"] == 1.0 and body["precision"] == 1.0
    task = client.get(f"/s/{token}")
    assert task.status_code == 200 and "Anna met Bob." in task.get_data(as_text=True)
    assert session_of(token).outcome is None
    # The same worker's next task in the same study: no practice.
    second = open_task(client, "task-2")
    assert client.get(f"/s/{second}").status_code == 200
    # The same worker in another study (another platform study id) practises again.
    other = client.get(
        "/annotate/task-2",
        query_string={"PROLIFIC_PID": "p" * 24, "STUDY_ID": "a" * 24, "SESSION_ID": "b" * 24},
    )
    other_token = token_from(other)
    assert client.get(f"/s/{other_token}").headers["Location"].endswith("/training")
    # Passing ends no session: a later visit of the practice page goes to the task.
    assert client.get(f"/s/{token}/training").headers["Location"] == f"/s/{token}"


def test_a_worker_who_failed_is_not_trained_again_in_the_study(study):
    client = study.test_client()
    token = open_task(client)
    check(client, token, [])
    check(client, token, [])
    second = open_task(client, "task-2")
    assert client.get(f"/s/{second}/training").headers["Location"] == f"/s/{second}/end"
    assert session_of(second).outcome == "failed_training"


def test_check_refuses_bad_answers_without_storing_them(study):
    client = study.test_client()
    token = open_task(client)
    assert check(client, token, right_answers(), csrf=False).status_code in (400, 403)
    bad = answer(0, 32, 43, "new-person")
    bad["span"]["text"] = "Lord Finnon"
    response = check(client, token, [bad])
    assert response.status_code == 422
    assert response.get_json()["error"]["details"]["field"] == "annotations[0].span.text"
    unknown = check(client, token, [answer(0, 32, 43, "no-such-category")])
    assert unknown.status_code == 422
    assert check(client, token, right_answers(), document_id="task-1").status_code == 409
    not_a_list = client.post(
        f"/api/sessions/{token}/training",
        json={"document_id": PRACTICE_ID, "annotations": "all"},
        headers={"X-CSRFToken": capability_csrf_token("annotate", token)},
    )
    assert not_a_list.status_code == 422
    assert db.session.scalar(db.select(db.func.count(TrainingAttempt.id))) == 0


def test_practice_documents_are_never_assigned_nor_counted(study, tmp_path):
    client = study.test_client()
    assert client.get(f"/annotate/{PRACTICE_ID}?annotator=w9").status_code == 404
    given = set()
    for worker in range(6):
        response = client.get("/start", query_string={"annotator": f"s{worker}"})
        token = token_from(response)
        given.add(session_of(token).document.external_id)
    assert given == {"task-1", "task-2"}
    study_figures = load_study(study_settings())
    assert PRACTICE_ID not in {d.external_id for d in study_figures.documents}
    assert PRACTICE_ID not in study_figures.excluded
    listed = study.test_cli_runner().invoke(args=["list-documents"]).output
    assert "(practice)" in listed and f"/annotate/{PRACTICE_ID}" not in listed
    assert "/annotate/task-1" in listed


def test_training_export_has_one_row_per_attempt(study, tmp_path):
    client = study.test_client()
    token = open_task(client)
    check(client, token, [answer(0, 0, 4, "new-person")])
    check(client, token, right_answers())
    runner = study.test_cli_runner()
    result = runner.invoke(args=["export-annotations", "--what", "training", "--format", "jsonl"])
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in result.output.splitlines()]
    assert [(r["attempt"], r["passed"], r["extra"], r["found"]) for r in records] == [
        (1, False, 1, 0),
        (2, True, 0, 2),
    ]
    assert records[0]["document_id"] == PRACTICE_ID and records[0]["annotator_id"] == "direct:w1"
    assert records[1]["spans"][0]["span"]["text"] == "Lord Findon"
    output = tmp_path / "training.csv"
    result = runner.invoke(
        args=[
            "export-annotations",
            "--what",
            "training",
            "--format",
            "csv",
            "--output",
            str(output),
        ]
    )
    assert result.exit_code == 0 and "Wrote 2 training" in result.output
    rows = list(csv.DictReader(io.StringIO(output.read_text(encoding="utf-8-sig"))))
    assert [row["passed"] for row in rows] == ["false", "true"]
    assert json.loads(rows[1]["spans"])[1]["category"] == "repetition"


def test_taxonomy_page_names_missing_practice_documents(study):
    account = add_account("r@example.org", "pw")
    db.session.commit()
    client = study.test_client()
    with client.session_transaction() as session:
        session["_user_id"] = account.get_id()
        session["_fresh"] = True
    token = open_task(client)
    check(client, token, [])
    check(client, token, right_answers())
    dashboard = client.get("/research/").get_data(as_text=True)
    assert 'id="training-heading"' in dashboard
    assert "<td>1</td>" in dashboard and "2.0" in dashboard  # one worker, passed at check 2
    page = client.get("/research/taxonomy").get_data(as_text=True)
    assert "Every practice document is imported" in page
    assert "in at most 2 attempts" in page
    practice = db.update(Document).where(Document.external_id == PRACTICE_ID)
    db.session.execute(practice.values(external_id="gone"))
    db.session.commit()
    page = client.get("/research/taxonomy").get_data(as_text=True)
    assert "practice-1: not imported" in page


def test_the_task_api_stays_closed_before_and_after_failed_training(study):
    client = study.test_client()
    token = open_task(client)
    headers = {"X-CSRFToken": capability_csrf_token("annotate", token)}
    pending = client.get(f"/api/sessions/{token}")
    assert pending.status_code == 409
    assert pending.get_json()["error"]["code"] == "step_pending"
    assert "Anna met Bob." not in pending.get_data(as_text=True)
    assert client.post(f"/api/sessions/{token}/submit", json={}, headers=headers).status_code == 409
    check(client, token, [])
    check(client, token, [])
    ended = client.post(f"/api/sessions/{token}/submit", json={}, headers=headers)
    assert ended.status_code == 409 and ended.get_json()["error"]["code"] == "study_ended"
    assert session_of(token).outcome == "failed_training"
    # Once passed, the API opens as before.
    second = open_task(client, "task-2", annotator="w2")
    check(client, second, right_answers())
    assert client.get(f"/api/sessions/{second}").status_code == 200
