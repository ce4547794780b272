"""CSV formula injection: no cell of any CSV the app writes starts a spreadsheet formula.

Text from documents, workers, URL parameters and item files that begins with `=`, `+`,
`-`, `@`, a tab or a carriage return gets a leading `'` (OWASP) in every CSV (CLI and
downloads, annotations, sessions, the validation report); JSON lines keep the raw text,
on SQLite and on PostgreSQL (where the CLI's JSONL is written by COPY)."""

from __future__ import annotations

import csv
import io
import json

import pytest

from app.imports.document_formats import DocumentInput
from app.imports.document_store import import_documents
from app.rules.csv_safety import safe_cell
from tests.support.worker_api import body, save, start

DOC = "@doc"
PARAGRAPH = "=SUM(A1)+1 said the keeper, +then -left."
COMMENT = "-2+3 or =cmd|' /C calc'!A0"
URL_PARAMS = {"PROLIFIC_PID": "-pid", "STUDY_ID": "=HYPERLINK(1)", "SESSION_ID": "@sess"}
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("=1+2", "'=1+2"),
        ("+1", "'+1"),
        ("-1", "'-1"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tx", "'\tx"),
        ("\rx", "'\rx"),
        ("plain", "plain"),
        ("a=b", "a=b"),
        ("", ""),
        (-3, -3),  # numbers the app writes itself are not text
        (None, None),
    ],
)
def test_safe_cell(value, expected):
    assert safe_cell(value) == expected


@pytest.fixture
def hostile(app, client, tmp_path, runner):
    """A document, a worker session opened with formula-like URL parameters and an
    annotation whose span and comment start formulas, and a judged validation round."""
    import_documents([DocumentInput(DOC, None, (PARAGRAPH, "Second paragraph."))])
    token = start(client, DOC, **URL_PARAMS)
    formula = {"paragraph_id": 0, "start": 0, "end": 10, "text": "=SUM(A1)+1"}
    response = save(client, token, body(span=formula, comment=COMMENT))
    assert response.status_code == 201, response.get_json()

    items = tmp_path / "items.jsonl"
    item = {
        "id": "+item",
        "source": "=source()",
        "document_id": DOC,
        "span": {"text": "+then -left"},
        "question": "-why?",
        "labels": ["@label"],
    }
    items.write_text(json.dumps(item) + "\n", encoding="utf-8")
    result = runner.invoke(args=["validation", "create-round", "r1", "--items", str(items)])
    assert result.exit_code == 0, result.output
    judgments = tmp_path / "judgments.jsonl"
    judgment = {"item_id": "+item", "validator": "-validator", "verdict": "agree"}
    judgments.write_text(json.dumps(judgment) + "\n", encoding="utf-8")
    result = runner.invoke(args=["validation", "import-judgments", "r1", str(judgments)])
    assert result.exit_code == 0, result.output


def _cells(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text.lstrip("\ufeff"), newline="")))


def _assert_no_formula(rows: list[list[str]]) -> None:
    for row in rows:
        for cell in row:
            assert not cell.startswith(FORMULA_START), (cell, row)


def test_annotation_and_session_csv_neutralise_formulas(hostile, runner, researcher_client):
    outputs = {
        "cli annotations": runner.invoke(args=["export-annotations", "--format", "csv"]).stdout,
        "cli sessions": runner.invoke(
            args=["export-annotations", "--format", "csv", "--what", "sessions"]
        ).stdout,
        "download annotations": researcher_client.get("/research/export/annotations.csv").get_data(
            as_text=True
        ),
        "download sessions": researcher_client.get("/research/export/sessions.csv").get_data(
            as_text=True
        ),
    }
    for name, text in outputs.items():
        rows = _cells(text)
        assert len(rows) == 2, (name, rows)
        _assert_no_formula(rows)
    annotations = dict(zip(*_cells(outputs["cli annotations"]), strict=True))
    assert annotations["span_text"] == "'=SUM(A1)+1"
    assert annotations["comment"] == "'" + COMMENT
    assert annotations["document_id"] == "'" + DOC
    assert annotations["span_start"] == "0"
    assert annotations["annotator_id"] == "prolific:-pid"  # starts with a letter: unchanged
    sessions = dict(zip(*_cells(outputs["cli sessions"]), strict=True))
    assert sessions["study_id"] == "'=HYPERLINK(1)"  # URL parameters copied into sessions.csv
    assert sessions["platform_session_id"] == "'@sess"
    assert _cells(outputs["download annotations"]) == _cells(outputs["cli annotations"])
    assert _cells(outputs["download sessions"]) == _cells(outputs["cli sessions"])


def test_jsonl_keeps_the_raw_text(hostile, runner, researcher_client):
    # On PostgreSQL the CLI's JSONL is written by COPY; the download is the Python path.
    cli = [
        json.loads(line) for line in runner.invoke(args=["export-annotations"]).stdout.splitlines()
    ]
    download = researcher_client.get("/research/export/annotations.jsonl").get_data(as_text=True)
    for records in (cli, [json.loads(line) for line in download.splitlines()]):
        assert [r["comment"] for r in records] == [COMMENT]
        assert [r["span"]["text"] for r in records] == ["=SUM(A1)+1"]
        assert [r["document_id"] for r in records] == [DOC]


def test_validation_report_csv_neutralises_formulas(hostile, runner, researcher_client):
    cli = runner.invoke(args=["validation", "report", "r1", "--format", "csv"])
    assert cli.exit_code == 0, cli.output
    download = researcher_client.get("/research/rounds/r1/report.csv").get_data(as_text=True)
    for text in (cli.stdout, download):
        rows = _cells(text)
        _assert_no_formula(rows)
        names = {row[1] for row in rows[1:]}
        assert {"'=source()", "'@label", "'" + DOC} <= names, names
