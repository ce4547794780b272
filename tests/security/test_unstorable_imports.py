"""The importers refuse text that cannot be stored (a NUL, a lone surrogate) with
FILE:LINE: field: message and exit 1, never a traceback, and write nothing."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import func, select

from app.core.extensions import db
from app.imports.document_formats import DocumentInput
from app.imports.document_store import import_documents
from app.models import Document, ValidationItem, ValidationJudgment

NUL = "\\u0000"  # as written in a JSON file
SURROGATE = "\\ud800"


def _refused(result, expected: str) -> None:
    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit), result.exception  # not a traceback
    assert "Traceback" not in result.output
    assert "\x00" not in result.output  # bad text is shown escaped, never printed as is
    assert expected in result.output, result.output


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        (
            "docs.jsonl",
            '{"id": "d1", "paragraphs": ["fine"]}\n'
            f'{{"id": "d2", "paragraphs": ["ok", "bad{NUL}text"]}}\n',
            "docs.jsonl:2: paragraphs[1]: contains a NUL character",
        ),
        (
            "docs.json",
            f'[\n  {{"id": "d1",\n   "title": "x{SURROGATE}",\n   "text": "t"}}\n]\n',
            "docs.json:3: [0].title: contains a lone surrogate",
        ),
        (
            "falte.json",
            f'{{"d{SURROGATE}": ["para"]}}',
            "falte.json:1: d\\ud800: contains a lone surrogate",
        ),
        ("notes.txt", "First paragraph.\n\nSecond \x00 one.\n", "notes.txt:3: paragraphs: "),
    ],
)
def test_import_documents(runner, tmp_path, name, content, expected):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    _refused(runner.invoke(args=["import-documents", str(path)]), expected)
    assert db.session.scalar(select(func.count()).select_from(Document)) == 0


@pytest.fixture
def document(app):
    import_documents([DocumentInput("doc-1", None, ("Zoë met the keeper at dawn.",))])


def test_create_round(runner, tmp_path, document):
    items = tmp_path / "items.jsonl"
    good = {"id": "i1", "source": "m", "document_id": "doc-1", "span": {"text": "keeper"}}
    bad = '{"id": "i2", "source": "m", "document_id": "doc-1", "span": {"text": "Zo"}, '
    bad += f'"question": "why{SURROGATE}?"}}'
    items.write_text(json.dumps(good) + "\n" + bad + "\n", encoding="utf-8")
    result = runner.invoke(args=["validation", "create-round", "r1", "--items", str(items)])
    _refused(result, "items.jsonl:2: question: contains a lone surrogate")
    assert db.session.scalar(select(func.count()).select_from(ValidationItem)) == 0


def test_import_judgments(runner, tmp_path, document):
    items = tmp_path / "items.jsonl"
    item = {"id": "i1", "source": "m", "document_id": "doc-1", "span": {"text": "keeper"}}
    items.write_text(json.dumps(item) + "\n", encoding="utf-8")
    result = runner.invoke(args=["validation", "create-round", "r1", "--items", str(items)])
    assert result.exit_code == 0, result.output
    judgments = tmp_path / "judgments.jsonl"
    judgments.write_text(
        '{"item_id": "i1", "validator": "v1", "verdict": "agree"}\n'
        f'{{"item_id": "i1", "validator": "v2", "verdict": "agree", "explanation": "a{NUL}"}}\n',
        encoding="utf-8",
    )
    result = runner.invoke(args=["validation", "import-judgments", "r1", str(judgments)])
    _refused(result, "judgments.jsonl:2: explanation: contains a NUL character")
    assert db.session.scalar(select(func.count()).select_from(ValidationJudgment)) == 0
