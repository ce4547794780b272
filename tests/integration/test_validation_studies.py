"""Validation studies (issue 30): a study of kind validation judges an annotation study,
holds its rounds, and its /study/<slug>/start leads validators to their items and ends on
its own completion codes (SQLite and PostgreSQL)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from app.core.extensions import db
from app.core.security import capability_csrf_token
from app.models import (
    Document,
    ValidationConsentDecision,
    ValidationItem,
    ValidationRound,
    ValidationSession,
)
from app.research.round_pages import _create_from_export
from app.research.study_data import judgment_records
from app.studies import require_study, use_study
from tests.support.signed_links import sign
from tests.support.taxonomies import taxonomy_variant, use_taxonomy
from tests.support.validation import judge, next_item
from tests.support.validation_study import (
    ANNOTATION_CODE,
    PROLIFIC,
    create_round,
    judged_study,
    validation_study,
)
from tests.support.worker_api import token_from

KEY = "test-secret-key"  # tests/support/apps.py make_test_config's SECRET_KEY
PROLIFIC_ARGS = {"PROLIFIC_PID": "p-val-1", "STUDY_ID": "s-val", "SESSION_ID": "x-val-1"}


@pytest.fixture
def checks(app, runner, tmp_path):
    """The validation study `checks` judging the default study, with a round `r1` of
    alice's two annotations; the export's path."""
    export = judged_study(app, runner, tmp_path)
    validation_study(runner, tmp_path, "checks", {"completed": "VDONE111"})
    create_round(runner, "checks", "r1", export)
    return export


def _judge_all(client, token: str) -> dict:
    while (answer := next_item(client, token))["item"] is not None:
        assert judge(client, token, answer["item"]["id"], "agree").status_code == 201
    return answer


def test_a_validator_ends_on_the_validation_studys_own_code(client, checks):
    """The reported bug: validators were sent to the annotation study's `completed` code.
    Fails before: the round could not be made in the validation study (its documents
    are the judged study's), and its start link handed out no items."""
    token = token_from(client.get("/study/checks/start", query_string=PROLIFIC_ARGS))
    answer = _judge_all(client, token)
    assert answer["progress"] == {"done": 2, "total": 2}
    assert answer["shown_code"] == "VDONE111" != ANNOTATION_CODE
    assert answer["completion_url"] == PROLIFIC + "VDONE111"
    assert answer["outcome"] == "completed"


def test_create_round_prints_the_validation_studys_links(runner, checks):
    args = ["validation", "create-round", "r9", "--items", str(checks), "--study", "checks"]
    made = runner.invoke(args=args)
    assert made.exit_code == 0, made.output
    assert "Validators' link: /study/checks/validate/r9" in made.output
    assert "/study/checks/start" in made.output
    listed = runner.invoke(
        args=["validation", "list-rounds", "--study", "checks", "--annotator", "t"]
    )
    assert listed.exit_code == 0, listed.output
    signed = f"/study/checks/start?annotator=t&sig={sign(KEY, 'checks/start', 't')}"
    assert signed in listed.output


def test_a_validation_studys_round_judges_the_annotation_studys_annotations(app, checks):
    checks_study = require_study("checks")
    round_ = db.session.scalars(db.select(ValidationRound).filter_by(name="r1")).one()
    assert round_.study_id == checks_study.id
    items = db.session.scalars(db.select(ValidationItem).filter_by(round_id=round_.id)).all()
    assert len(items) == 2 and all(item.annotation_id is not None for item in items)
    # The documents are the judged study's: none was copied into the validation study.
    documents = {db.session.get(Document, item.document_id).study_id for item in items}
    assert documents == {require_study("default").id}
    assert (
        db.session.scalar(
            db.select(db.func.count(Document.id)).where(Document.study_id == checks_study.id)
        )
        == 0
    )


def test_start_leads_to_the_items_and_reopening_resumes(client, checks):
    first = token_from(client.get("/study/checks/start", query_string=PROLIFIC_ARGS))
    item = next_item(client, first)["item"]
    assert item is not None and item["document"]["id"] == "doc-a"
    again = token_from(client.get("/study/checks/start", query_string=PROLIFIC_ARGS))
    assert again == first
    # A researcher's signed link to the study's start (target "start", the slug signed).
    name = "tester"
    signed = {"annotator": name, "sig": sign(KEY, "checks/start", name)}
    assert token_from(client.get("/study/checks/start", query_string=signed)) != first
    forged = {"annotator": name, "sig": sign(KEY, "start", name)}
    assert client.get("/study/checks/start", query_string=forged).status_code == 403


def test_no_open_round_is_a_clear_page_with_the_way_back(app, client, runner, tmp_path):
    judged_study(app, runner, tmp_path)
    validation_study(runner, tmp_path, "empty", {"no_consent": "VRETURN1"})
    response = client.get("/study/empty/start", query_string=PROLIFIC_ARGS)
    page = response.get_data(as_text=True)
    assert response.status_code == 200
    assert "Nothing to check right now" in page
    assert f'href="{PROLIFIC}VRETURN1"' in page


def test_a_round_judged_enough_is_closed_to_a_new_validator(client, checks):
    _judge_all(client, token_from(client.get("/study/checks/start", query_string=PROLIFIC_ARGS)))
    other = {**PROLIFIC_ARGS, "PROLIFIC_PID": "p-val-2", "SESSION_ID": "x-val-2"}
    response = client.get("/study/checks/start", query_string=other)
    assert response.status_code == 200
    assert "Nothing to check right now" in response.get_data(as_text=True)
    # The validator who finished comes back to their end, with their code.
    token = token_from(client.get("/study/checks/start", query_string=PROLIFIC_ARGS))
    assert next_item(client, token)["shown_code"] == "VDONE111"


def test_the_least_judged_open_round_comes_first(app, client, runner, checks):
    create_round(runner, "checks", "r2", checks, "--judgments-per-item", "2")
    first = token_from(client.get("/study/checks/start", query_string=PROLIFIC_ARGS))
    _judge_all(client, first)
    # r1 (1 per item) is now judged enough; r2 still needs judges: a new validator gets r2.
    other = {**PROLIFIC_ARGS, "PROLIFIC_PID": "p-val-2", "SESSION_ID": "x-val-2"}
    second = token_from(client.get("/study/checks/start", query_string=other))
    assert second != first
    answer = _judge_all(client, second)
    assert answer["progress"]["done"] == 2


def test_two_validation_studies_of_one_annotation_study_keep_their_judgments_apart(
    app, client, runner, tmp_path, checks
):
    validation_study(runner, tmp_path, "recheck", {"completed": "VDONE222"})
    create_round(runner, "recheck", "r1", checks)  # the same round name, another study
    one = token_from(client.get("/study/checks/start", query_string=PROLIFIC_ARGS))
    assert _judge_all(client, one)["shown_code"] == "VDONE111"
    two = token_from(client.get("/study/recheck/start", query_string=PROLIFIC_ARGS))
    assert two != one
    answer = _judge_all(client, two)
    assert answer["progress"] == {"done": 2, "total": 2}  # recheck's items, unjudged there
    assert answer["shown_code"] == "VDONE222"
    for slug in ("checks", "recheck"):
        use_study(require_study(slug))
        records = list(judgment_records())
        assert len(records) == 2 and {r["round"] for r in records} == {"r1"}
        rounds = db.session.scalars(
            db.select(ValidationRound.id).filter_by(study_id=require_study(slug).id)
        ).all()
        assert len(rounds) == 1
    use_study(require_study("default"))
    assert list(judgment_records()) == []
    report = runner.invoke(args=["validation", "report", "r1", "--study", "recheck"])
    assert report.exit_code == 0, report.output


def test_an_annotation_studys_start_still_hands_out_documents(client, checks):
    response = client.get("/start", query_string={"annotator": "bob"})
    assert response.status_code == 302
    assert response.headers["Location"].startswith("/s/")


CONSENT = "consent: |\n  **Checking annotations.** Your verdicts are kept. <b>raw</b>\n"


@pytest.fixture
def with_consent(app, runner, tmp_path):
    """The validation study `asked` (with a consent section) judging the default study,
    with a round of alice's annotations."""
    export = judged_study(app, runner, tmp_path)
    codes = {"completed": "VDONE333", "no_consent": "VNOCON33"}
    validation_study(runner, tmp_path, "asked", codes, append=CONSENT)
    create_round(runner, "asked", "r1", export)


def _consent(client, token: str, decision: str):
    return client.post(
        f"/v/{token}/consent",
        data={"decision": decision, "csrf_token": capability_csrf_token("validate", token)},
    )


def test_the_consent_comes_first_when_the_study_has_one(client, with_consent):
    token = token_from(client.get("/study/asked/start", query_string=PROLIFIC_ARGS))
    page = client.get(f"/v/{token}")
    assert page.status_code == 303 and page.headers["Location"] == f"/v/{token}/consent"
    shown = client.get(f"/v/{token}/consent").get_data(as_text=True)
    assert "Checking annotations." in shown and "&lt;b&gt;raw&lt;/b&gt;" in shown
    assert client.get(f"/api/validators/{token}/next").status_code == 409
    forged = client.post(f"/v/{token}/consent", data={"decision": "agree"})
    assert forged.status_code == 400
    assert _consent(client, token, "agree").headers["Location"] == f"/v/{token}"
    decision = db.session.get(ValidationConsentDecision, _session_id(token))
    assert decision.agreed and len(decision.consent_version) == 16
    assert client.get(f"/v/{token}").status_code == 200
    assert _judge_all(client, token)["shown_code"] == "VDONE333"
    # A second decision, from another tab, changes nothing.
    _consent(client, token, "decline")
    assert db.session.get(ValidationConsentDecision, _session_id(token)).agreed


def test_declining_ends_on_the_studys_no_consent_code(client, with_consent):
    token = token_from(client.get("/study/asked/start", query_string=PROLIFIC_ARGS))
    _consent(client, token, "decline")
    page = client.get(f"/v/{token}").get_data(as_text=True)
    assert "You did not agree to take part" in page and f'href="{PROLIFIC}VNOCON33"' in page
    assert client.get(f"/api/validators/{token}/next").status_code == 409
    assert db.session.get(ValidationConsentDecision, _session_id(token)).agreed is False


def test_a_study_without_consent_asks_none(client, checks):
    token = token_from(client.get("/study/checks/start", query_string=PROLIFIC_ARGS))
    assert client.get(f"/v/{token}").status_code == 200
    assert client.get(f"/v/{token}/consent").status_code == 303


def _session_id(token: str) -> int:
    db.session.expire_all()
    return db.session.scalars(db.select(ValidationSession.id).filter_by(token=token)).one()


def test_the_consoles_round_of_a_validation_study_judges_the_named_studys_annotations(
    app, runner, tmp_path
):
    """The console makes a round from our export: for a validation study, the export of
    the study it judges (the validation study has no annotations of its own)."""
    judged_study(app, runner, tmp_path)
    validation_study(runner, tmp_path, "checks", {"completed": "VDONE111"})

    def field(value):
        return SimpleNamespace(data=value)

    form = SimpleNamespace(
        name=field("console-1"),
        judgments_per_item=field(1),
        sample=field(None),
        seed=field(3),
        include_unsubmitted=field(False),
    )
    with app.test_request_context("/research/rounds"):
        use_study(require_study("checks"))
        summary = _create_from_export(form)
    assert summary.total == 2
    round_ = db.session.scalars(db.select(ValidationRound).filter_by(name="console-1")).one()
    assert round_.study_id == require_study("checks").id


def test_a_round_of_an_annotation_study_asks_no_consent(app, client, runner, tmp_path):
    """The annotators' consent is theirs: the default study's own rounds go straight to
    the items even when its taxonomy has a consent section."""
    export = judged_study(app, runner, tmp_path)
    use_taxonomy(app, taxonomy_variant(tmp_path, append=CONSENT, name="with-consent.yaml"))
    made = runner.invoke(args=["validation", "create-round", "own", "--items", str(export)])
    assert made.exit_code == 0, made.output
    token = token_from(client.get("/validate/own", query_string={"annotator": "v1"}))
    assert client.get(f"/v/{token}").status_code == 200
    assert next_item(client, token)["item"] is not None


def test_mturk_arrivals_preview_then_judge_and_submit_the_hit(client, checks):
    preview = client.get(
        "/study/checks/start", query_string={"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE"}
    )
    assert preview.status_code == 200 and "Preview" in preview.get_data(as_text=True)
    assert db.session.scalar(db.select(db.func.count(ValidationSession.id))) == 0
    mturk = {"workerId": "W7", "assignmentId": "A1", "hitId": "H1"}
    mturk["turkSubmitTo"] = "https://www.mturk.com"
    token = token_from(client.get("/study/checks/start", query_string=mturk))
    answer = _judge_all(client, token)
    assert answer["mturk"] == {
        "submit_to": "https://www.mturk.com/mturk/externalSubmit",
        "assignment_id": "A1",
    }
    assert answer["outcome"] == "completed" and answer["completion_code"]


def test_a_closed_validation_study_opens_nothing(client, runner, checks):
    assert runner.invoke(args=["study-status", "checks", "closed"]).exit_code == 0
    response = client.get("/study/checks/start", query_string=PROLIFIC_ARGS)
    assert response.status_code == 410
    assert "This study is closed" in response.get_data(as_text=True)
