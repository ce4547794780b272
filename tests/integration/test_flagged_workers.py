"""Issue 28, points 5 and 6, on SQLite and PostgreSQL: workers left out by their checks
(app.crowd.checks.flagged) get no more documents at /start and count in no figure unless asked
(study-report, the dashboard, `flask agreement`); exports keep them with `flagged`;
attention-check documents stay out of `flask agreement --gamma` and of validation
rounds, which say how many they left out."""

from __future__ import annotations

import csv
import io
import json
import re
import uuid

import pytest

from app.core.extensions import db
from app.crowd.checks.flagged import left_out_workers
from app.crowd.settings import study_settings
from app.imports.document_formats import DocumentInput
from app.imports.document_store import import_documents
from app.jobs import queue as analysis_queue
from app.models import AnnotationSession, ValidationItem, ValidationRound
from tests.support.flagged import GOOD, LEFT_OUT, PARAGRAPHS, seed_flagged_study
from tests.support.worker_api import read_to_the_end, save, submit, token_from


@pytest.fixture
def study(app):
    """The study of tests/support/flagged.py."""
    analysis_queue.wait_for_background()  # the previous test's jobs are done
    return seed_flagged_study()


def _json(runner, *args: str) -> dict:
    result = runner.invoke(args=[*args, "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout[result.stdout.index("{") :])


# --- who is left out -----------------------------------------------------------------------


def test_one_rule_names_the_workers_left_out_and_why(study):
    found = left_out_workers(study_settings())
    assert [worker.as_report() for worker in found.values()] == LEFT_OUT
    assert [worker.by_checks for worker in found.values()] == [True, True, False]


# --- point 5: no figure counts them, unless asked ---------------------------------------


def test_study_report_leaves_flagged_workers_out_and_names_them(study, runner):
    report = _json(runner, "study-report")
    assert report["excluded"] == {"documents": ["check-1"], "annotators": LEFT_OUT}
    assert report["annotators"] == 2
    documents = {d["document_id"]: d for d in report["documents"]}
    # good-1 and good-2 each mark one sentence of three: 66.67 on both documents.
    assert documents["doc-1"]["booookscore"] == pytest.approx(200 / 3)
    assert report["booookscore"] == pytest.approx(200 / 3)
    # Table 1: 2 "new-person" occurrences over 2 sessions x 3 sentences x 2 documents.
    assert report["errors_per_sentence"]["new-person"] == pytest.approx(100 * 2 / 12)
    agreement = report["agreement"]
    assert agreement["krippendorff_alpha_sentences"]["value"] == pytest.approx(1.0)
    assert agreement["mean_pairwise_span_f1"]["value"] == pytest.approx(100.0)
    assert sorted(report["gold"]) == sorted(GOOD)
    assert report["suggestions"]["gpt-4"]["accepted"] == 100.0
    assert report["suggestions"]["gpt-4"]["rejected"] == 0.0
    table = runner.invoke(args=["study-report"]).stdout
    assert "direct:lazy (flagged)" in table and "direct:quitter (failed_training)" in table
    rows = list(
        csv.reader(io.StringIO(runner.invoke(args=["study-report", "--format", "csv"]).stdout))
    )
    assert ["excluded_annotator", "direct:failer", "", "", "failed_checks"] in rows

    counted = _json(runner, "study-report", "--include-flagged")
    assert counted["excluded"] == {"documents": ["check-1"], "annotators": []}
    assert counted["annotators"] == 4
    documents = {d["document_id"]: d for d in counted["documents"]}
    # lazy marks every sentence of doc-1: (2/3 + 2/3 + 0) / 3.
    assert documents["doc-1"]["booookscore"] == pytest.approx(400 / 9)
    assert counted["errors_per_sentence"]["new-person"] == pytest.approx(100 * 6 / 18)
    assert counted["agreement"]["krippendorff_alpha_sentences"]["value"] < 1.0
    assert sorted(counted["gold"]) == [
        "direct:failer",
        "direct:good-1",
        "direct:good-2",
        "direct:lazy",
    ]
    assert counted["suggestions"]["gpt-4"]["rejected"] == 50.0


def test_the_dashboard_switch_counts_them_again(study, researcher_client):
    page = researcher_client.get("/research/").get_data(as_text=True)
    assert "3 workers left out of every figure" in page
    assert "direct:failer (failed checks)" in page
    assert "direct:quitter (failed training)" in page
    assert ">66.7%<" in page and ">44.4%<" not in page  # doc-1's BooookScore
    switch = re.search(r'<a href="([^"]+)">Count flagged workers</a>', page).group(1)
    counted = researcher_client.get(switch).get_data(as_text=True)
    assert "Every figure on this page counts the 3 workers otherwise left out" in counted
    assert ">44.4%<" in counted
    # The downloads follow the same switch.
    download = researcher_client.get("/research/export/study-report.json?include_flagged=1")
    assert json.loads(download.data)["annotators"] == 4
    assert (
        json.loads(researcher_client.get("/research/export/study-report.json").data)["annotators"]
        == 2
    )
    # A document's page says which of its sessions count in no figure.
    document = researcher_client.get("/research/documents/doc-1").get_data(as_text=True)
    assert "1 session of workers left out" in document and ">66.7%<" in document
    assert 'href="/research/documents/doc-1?include_flagged=1">Count flagged workers' in document
    document = researcher_client.get("/research/documents/doc-1?include_flagged=1")
    assert ">44.4%<" in document.get_data(as_text=True)


# --- point 6 and point 5: flask agreement --gamma ----------------------------------------


def test_agreement_leaves_attention_checks_and_flagged_workers_out(study, runner):
    report = _json(runner, "agreement", "--gamma")
    # check-1 (three submitted sessions) is no part of it: the same documents as
    # study-report, the same gamma.
    assert [row["document_id"] for row in report["documents"]] == ["doc-1", "doc-2"]
    assert [row["annotators"] for row in report["documents"]] == [2, 2]
    assert report["left_out"] == {"documents": ["check-1"], "annotators": LEFT_OUT}
    study_gamma = _json(runner, "study-report")["agreement"]["gamma"]
    assert report["agreement"]["gamma"]["documents"] == study_gamma["documents"] == 2
    assert report["agreement"]["gamma"]["value"] == pytest.approx(study_gamma["value"])
    table = runner.invoke(args=["agreement", "--gamma"]).stdout
    assert "Left out: 1 attention-check document(s) (check-1)" in table
    assert "Left out: the sessions of 3 worker(s)" in table

    counted = _json(runner, "agreement", "--gamma", "--include-flagged")
    assert [row["annotators"] for row in counted["documents"]] == [3, 3]
    assert counted["left_out"]["annotators"] == []
    refused = runner.invoke(args=["agreement", "--gamma", "--document", "check-1"])
    assert refused.exit_code == 2 and "is an attention check" in refused.output


# --- exports keep them ---------------------------------------------------------------------


def test_exports_keep_flagged_workers_and_mark_them(study, runner, tmp_path):
    path = tmp_path / "annotations.jsonl"
    result = runner.invoke(args=["export-annotations", "--format", "jsonl", "--output", str(path)])
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    flagged = {(r["annotator_id"], r["flagged"]) for r in records}
    assert flagged == {
        ("direct:good-1", False),
        ("direct:good-2", False),
        ("direct:lazy", True),
        ("direct:failer", True),
    }
    assert sum(r["annotator_id"] == "direct:lazy" for r in records) == 4  # all kept
    path = tmp_path / "annotations.csv"
    runner.invoke(args=["export-annotations", "--format", "csv", "--output", str(path)])
    rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8-sig"))))
    assert {(r["annotator_id"], r["flagged"]) for r in rows} == {
        (a, "true" if a in ("direct:lazy", "direct:failer") else "false") for a, _ in flagged
    }
    path = tmp_path / "sessions.csv"
    runner.invoke(
        args=["export-annotations", "--what", "sessions", "--format", "csv", "--output", str(path)]
    )
    sessions = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8-sig"))))
    assert {r["annotator_id"] for r in sessions if r["flagged"] == "true"} == {
        "direct:lazy",
        "direct:failer",
        "direct:quitter",
    }


# --- validation rounds: point 6 (checks) and point 5 (flagged workers) -------------------


def _export(runner, path, keep_flagged_key: bool = True):
    result = runner.invoke(args=["export-annotations", "--format", "jsonl", "--output", str(path)])
    assert result.exit_code == 0, result.output
    if not keep_flagged_key:  # an export made before the field existed
        lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        for line in lines:
            del line["flagged"]
        path.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")


def _items(name: str) -> list[ValidationItem]:
    round_ = db.session.scalars(db.select(ValidationRound).filter_by(name=name)).one()
    return db.session.scalars(db.select(ValidationItem).filter_by(round_id=round_.id)).all()


@pytest.mark.parametrize("keep_flagged_key", [True, False])
def test_create_round_leaves_out_checks_and_flagged_workers(
    study, runner, tmp_path, keep_flagged_key
):
    path = tmp_path / "annotations.jsonl"
    _export(runner, path, keep_flagged_key)
    result = runner.invoke(args=["validation", "create-round", "r1", "--items", str(path)])
    assert result.exit_code == 0, result.output
    # 11 annotations: 3 on check-1, lazy's 3 on doc-1 and failer's 1 on doc-2 left out.
    assert "Created round 'r1': 4 items" in result.output
    assert "Left out: 3 item(s) on attention-check documents" in result.output
    assert "Left out: 4 annotation(s) of workers left out of the study's figures" in result.output
    items = _items("r1")
    assert sorted(item.origin_annotator for item in items) == sorted(GOOD * 2)
    assert study["check-1"].id not in {item.document_id for item in items}


def test_the_console_round_form_leaves_them_out_and_says_so(study, researcher_client):
    page = researcher_client.get("/research/rounds").get_data(as_text=True)
    token = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', page).group(1)
    form = {"name": "console", "judgments_per_item": "1", "csrf_token": token}
    response = researcher_client.post("/research/rounds", data=form, follow_redirects=True)
    html = response.get_data(as_text=True)
    assert "Created round console: 4 item(s)" in html
    assert "Left out 3 item(s) on attention-check documents." in html
    assert "Left out 4 annotation(s) of workers left out of the study&#39;s figures" in html
    assert len(_items("console")) == 4


# --- point 5: /start stops --------------------------------------------------------------


CODES = "{completed: CDONE, failed_checks: CQ5R4S3T}"
CHECK_GOLD = [{"paragraph_id": 0, "start": 0, "end": 4, "category": "new-person"}]


def _do_the_check(client, params: dict, span: tuple[int, int], url: str = "/start") -> None:
    """Open `url` (/start gives the first arrival the check), mark `span` of paragraph 0,
    Submit."""
    response = client.get(url, query_string=params)
    assert response.status_code == 302, response.data
    token = token_from(response)
    session = db.session.scalars(db.select(AnnotationSession).filter_by(token=token)).one()
    assert session.is_attention_check
    read_to_the_end(client, token, len(PARAGRAPHS))
    start, end = span
    body = {
        "id": str(uuid.uuid4()),
        "category": "new-person",
        "span": {"paragraph_id": 0, "start": start, "end": end, "text": PARAGRAPHS[0][start:end]},
    }
    assert save(client, token, body).status_code == 201
    assert submit(client, token).status_code == 200


@pytest.fixture
def arriving(make_app):
    app = make_app(attention_check_share=0.5, completion=CODES)
    with app.app_context():
        import_documents(
            [
                DocumentInput("doc-1", None, tuple(PARAGRAPHS)),
                DocumentInput("check-1", None, tuple(PARAGRAPHS), gold=CHECK_GOLD),
            ]
        )
        db.session.commit()
        yield app


def test_start_hands_a_flagged_worker_nothing_more(arriving):
    client = arriving.test_client()
    lazy = {"PROLIFIC_PID": "l" * 24, "STUDY_ID": "s" * 24, "SESSION_ID": "x" * 24}
    _do_the_check(client, lazy, (0, 26))  # the whole paragraph: flagged
    sessions = db.session.scalar(db.select(db.func.count(AnnotationSession.id)))
    (checked,) = db.session.scalars(db.select(AnnotationSession.token)).all()
    # The same submission reopened: its own session at its step (one SESSION_ID, one
    # session), never a new document.
    page = client.get("/start", query_string=lazy)
    assert page.status_code == 302
    assert token_from(page).split("/")[0] == checked
    assert db.session.scalar(db.select(db.func.count(AnnotationSession.id))) == sessions

    direct = client.application.test_client()
    careful = {"annotator": "careful"}
    _do_the_check(direct, careful, (0, 4), "/annotate/check-1")  # "Anna": found
    assert direct.get("/start", query_string=careful).status_code == 302  # doc-1
    lazy = {"annotator": "lazy-direct"}
    _do_the_check(direct, lazy, (0, 13), "/annotate/check-1")  # a sentence: flagged
    page = direct.get("/start", query_string=lazy)
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert "No tasks left" in html
    assert "no more documents for you in this study" in html
    assert "submissions/complete" not in html  # completion URLs are Prolific's
    assert (
        db.session.scalar(db.select(db.func.count(AnnotationSession.id))) == sessions + 3
    )  # the two checks and careful's doc-1
