"""Severities through the app (issue 18 point 4), on SQLite and PostgreSQL: the API stores,
returns and refuses them, every export path writes them, the study report scores them."""

from __future__ import annotations

import csv
import io
import json
import uuid
from typing import Any

import pytest

from app import create_app
from app.core.extensions import db
from app.imports.document_formats import DocumentInput
from app.imports.document_store import import_documents
from app.models import Annotation
from tests.support.apps import dispose_engines, make_test_config
from tests.support.severities import severity_taxonomy
from tests.support.worker_api import delete_all_work, read_to_the_end, save, start, submit

# 20 words in all: one weight point is 5 per 100 words.
PARAGRAPHS = (
    "The ship left at dawn and Łukasz waved at the ship.",
    "Later he said nothing about the ship at all.",
)


@pytest.fixture
def app(database_uri, tmp_path):
    """The app with the severity taxonomy (tests/support/severities.py)."""
    application = create_app(
        make_test_config(database_uri, TAXONOMY_PATH=severity_taxonomy(tmp_path))
    )
    with application.app_context():
        import_documents([DocumentInput("doc-1", "A voyage", PARAGRAPHS)])
        yield application
        db.session.remove()
        dispose_engines()


def annotation(needle: str, category: str = "new-person", **fields: Any) -> dict[str, Any]:
    """A singleton annotation of `needle` in paragraph 0."""
    start = PARAGRAPHS[0].index(needle)
    span = {"paragraph_id": 0, "start": start, "end": start + len(needle), "text": needle}
    body = {"id": str(uuid.uuid4()), "category": category, "span": span, "comment": None}
    return {**body, **fields}


def error(response) -> tuple[str, str]:
    details = response.get_json()["error"]
    return details["code"], details["details"]["field"]


def test_the_api_stores_returns_and_refuses_severities(app):
    client = app.test_client()
    token = start(client, "doc-1")
    state = client.get(f"/api/sessions/{token}").get_json()
    assert [s["key"] for s in state["taxonomy"]["severities"]] == ["minor", "major"]
    assert state["taxonomy"]["category_severities"]["ungrammatical"] == ["minor"]

    sent = annotation("Łukasz", severity="major")
    created = save(client, token, sent)
    assert created.status_code == 201
    assert created.get_json()["severity"] == "major"
    assert save(client, token, sent).status_code == 200  # a replay
    changed = save(client, token, {**sent, "severity": "minor"})
    assert changed.status_code == 409  # same id, other body
    stored = db.session.scalars(db.select(Annotation)).one()
    assert stored.severity == "major"

    missing = save(client, token, annotation("ship"))
    assert missing.status_code == 422
    assert error(missing) == ("severity_required", "severity")
    assert "minor, major" in missing.get_json()["error"]["message"]
    unknown = save(client, token, annotation("ship", severity="fatal"))
    assert error(unknown) == ("unknown_severity", "severity")
    not_offered = save(client, token, annotation("ship", "ungrammatical", severity="major"))
    assert error(not_offered) == ("unknown_severity", "severity")
    wrong_type = save(client, token, annotation("ship", severity=5))
    assert error(wrong_type) == ("invalid_field", "severity")
    assert db.session.scalar(db.select(db.func.count(Annotation.id))) == 1  # nothing half-saved

    assert save(client, token, annotation("dawn", "ungrammatical", severity="minor")).status_code
    reloaded = client.get(f"/api/sessions/{token}").get_json()["annotations"]
    assert sorted(a["severity"] for a in reloaded) == ["major", "minor"]


def test_without_severities_the_api_takes_none(database_uri):
    application = create_app(make_test_config(database_uri))  # the default taxonomy
    with application.app_context():
        import_documents([DocumentInput("doc-1", "A voyage", PARAGRAPHS)])
        client = application.test_client()
        token = start(client, "doc-1")
        assert "severities" not in client.get(f"/api/sessions/{token}").get_json()["taxonomy"]
        plain = save(client, token, annotation("Łukasz"))
        assert plain.status_code == 201 and plain.get_json()["severity"] is None
        refused = save(client, token, annotation("ship", severity="minor"))
        assert error(refused) == ("severity_not_used", "severity")
        db.session.remove()
        dispose_engines()


@pytest.fixture
def scored(app):
    """Two submitted sessions: alice marks a major and a minor error, bob one minor."""
    client = app.test_client()
    for worker, marks in (("alice", [("Łukasz", "major"), ("dawn", "minor")]), ("bob", [])):
        token = start(client, "doc-1", annotator=worker)
        for needle, severity in marks or [("ship", "minor")]:
            assert save(client, token, annotation(needle, severity=severity)).status_code == 201
        read_to_the_end(client, token, len(PARAGRAPHS))
        assert submit(client, token).status_code == 200
    return client


def test_every_export_path_writes_the_severity(app, runner, scored, tmp_path):
    out = tmp_path / "annotations.jsonl"  # on PostgreSQL: the COPY path (app.exports.postgres_copy)
    assert runner.invoke(args=["export-annotations", "--output", str(out)]).exit_code == 0
    copied = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    streamed = [
        json.loads(line) for line in runner.invoke(args=["export-annotations"]).stdout.splitlines()
    ]
    assert copied == streamed
    assert [(r["span"]["text"], r["severity"]) for r in copied] == [
        ("dawn", "minor"),
        ("Łukasz", "major"),
        ("ship", "minor"),
    ]
    assert list(copied[0]).index("severity") == list(copied[0]).index("comment") + 1
    table = runner.invoke(args=["export-annotations", "--format", "csv"]).stdout
    rows = list(csv.DictReader(io.StringIO(table.removeprefix("\ufeff"))))
    assert [row["severity"] for row in rows] == ["minor", "major", "minor"]
    download = scored.get("/research/export/annotations.jsonl")  # not logged in
    assert download.status_code in (302, 401)


def test_study_report_and_dashboard_give_mqm_per_100_words(app, runner, researcher, scored):
    report = json.loads(runner.invoke(args=["study-report", "--format", "json"]).stdout)
    [document] = report["documents"]
    # alice: 5 + 1 = 6 points over 20 words = 30; bob: 1 point = 5; mean 17.5.
    assert document["mqm_per_100_words"] == pytest.approx(17.5)
    assert document["booookscore"] is not None
    table = runner.invoke(args=["study-report"]).stdout
    assert "MQM/100 words" in table and "17.50" in table
    rows = runner.invoke(args=["study-report", "--format", "csv"]).stdout
    assert "mqm_per_100_words,doc-1,,,17.5" in rows
    client = app.test_client()
    with client.session_transaction() as session:
        session["_user_id"] = str(researcher.id)
        session["_fresh"] = True
    page = client.get("/research/").get_data(as_text=True)
    assert '<abbr title="Severity-weighted errors per 100 words">MQM</abbr>' in page
    assert "17.50" in page
    alice = db.session.scalars(db.select(Annotation).where(Annotation.severity == "major")).one()
    viewer = client.get(f"/research/sessions/{alice.session_id}").get_data(as_text=True)
    assert '<th scope="col">Severity</th>' in viewer and "<td>major</td>" in viewer
    assert 'data-severity="major"' in viewer  # the step the page's table reads names from
    preview = client.get("/research/taxonomy").get_data(as_text=True)
    assert 'aria-labelledby="severities-heading"' in preview and "Major (5)" in preview


def test_without_severities_the_report_has_no_mqm_score(database_uri, tmp_path):
    application = create_app(make_test_config(database_uri))
    with application.app_context():
        import_documents([DocumentInput("doc-1", "A voyage", PARAGRAPHS)])
        client = application.test_client()
        token = start(client, "doc-1")
        assert save(client, token, annotation("Łukasz")).status_code == 201
        read_to_the_end(client, token, len(PARAGRAPHS))
        assert submit(client, token).status_code == 200
        runner = application.test_cli_runner()
        report = json.loads(runner.invoke(args=["study-report", "--format", "json"]).stdout)
        assert report["documents"][0]["mqm_per_100_words"] is None
        assert "MQM" not in runner.invoke(args=["study-report"]).stdout
        assert "mqm" not in runner.invoke(args=["study-report", "--format", "csv"]).stdout
        db.session.remove()
        dispose_engines()


def test_our_export_with_severities_imports_back_the_same(app, runner, scored, tmp_path):
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    assert runner.invoke(args=["export-annotations", "--output", str(first)]).exit_code == 0
    delete_all_work()
    result = runner.invoke(args=["import-annotations", str(first)])
    assert result.exit_code == 0, result.output
    assert runner.invoke(args=["export-annotations", "--output", str(second)]).exit_code == 0

    def records(path):
        rows = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
        for row in rows:
            # Database ids and times; every row here is a unit of its own (unit_id = id).
            del row["session_id"], row["created_at"], row["unit_id"]
        return rows

    assert records(first) and records(second) == records(first)
    assert {r["severity"] for r in records(second)} == {"minor", "major"}

    bad = tmp_path / "bad.jsonl"
    line = json.loads(first.read_text("utf-8").splitlines()[0])
    bad.write_text(json.dumps({**line, "severity": "fatal"}) + "\n", encoding="utf-8")
    refused = runner.invoke(args=["import-annotations", str(bad)])
    assert refused.exit_code != 0
    assert "severity: 'fatal' is no severity of the taxonomy (minor, major)" in refused.output
