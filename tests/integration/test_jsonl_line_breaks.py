"""JSON Lines survive any text (issue 26 point 6): U+2028, U+2029 and U+0085 are legal raw
inside a JSON string, but `str.splitlines()` ends a line at each, so a comment holding one
broke the app's own export for every reader that split lines so. Writers escape them
(\\u2028, ...); readers split on "\\n" only. Run on SQLite (Python writer) and PostgreSQL
(COPY writer)."""

from __future__ import annotations

import json
import re

from app.core.extensions import db
from app.imports.document_formats import DocumentInput
from app.imports.document_store import import_documents
from app.models import (
    ValidationItem,
    ValidationRound,
)
from app.rules.jsonl import json_object_lines
from tests.support.worker_api import delete_all_work, read_to_the_end, save, start, submit

BREAKS = "\u2028\u2029\x85"
PARAGRAPHS = ("First line\u2028second line of one paragraph.", "A paragraph\x85with a NEL.")
COMMENT = f"Odd breaks: [{BREAKS[0]}] [{BREAKS[1]}] [{BREAKS[2]}] end"


def _annotated(client) -> None:
    """A submitted session through the worker API, its span and comment holding the breaks."""
    import_documents([DocumentInput("breaks", "Breaks", PARAGRAPHS)])
    token = start(client, "breaks", annotator="breaker")
    text = PARAGRAPHS[0]
    span = {"paragraph_id": 0, "start": 6, "end": 17, "text": text[6:17]}
    assert "\u2028" in span["text"]
    body = {"id": "1b4e28ba-2fa1-11d2-883f-0016d3cca427", "category": "ungrammatical"}
    body |= {"span": span, "paired_span": None, "comment": COMMENT}
    assert save(client, token, body).status_code == 201
    read_to_the_end(client, token, len(PARAGRAPHS))
    # A second line (a file of one record is read whole, not line by line).
    span = {"paragraph_id": 1, "start": 0, "end": 11, "text": PARAGRAPHS[1][:11]}
    body = {"id": "2c5f39cb-3fb2-42e3-994f-1127e4ddb538", "category": "ungrammatical"}
    body |= {"span": span, "paired_span": None, "comment": "plain"}
    assert save(client, token, body).status_code == 201
    assert submit(client, token).status_code == 200


def _assert_safe_jsonl(text: str) -> list[dict]:
    """No raw line break but "\\n" in the file, and every line a record of the comment."""
    for character in BREAKS:
        assert character not in text
    assert len(text.splitlines()) == len(text.split("\n")) - 1  # the same lines either way
    records = [json.loads(line) for line in text.split("\n") if line]
    assert [r["comment"] for r in records] == [COMMENT, "plain"]
    assert records[0]["span"]["text"] == PARAGRAPHS[0][6:17]
    return records


def test_exports_escape_the_breaks(app, client, runner, researcher_client, tmp_path):
    _annotated(client)
    path = tmp_path / "export.jsonl"
    result = runner.invoke(args=["export-annotations", "--format", "jsonl", "--output", path])
    assert result.exit_code == 0, result.output
    _assert_safe_jsonl(path.read_text("utf-8"))
    download = researcher_client.get("/research/export/annotations.jsonl")
    _assert_safe_jsonl(download.get_data(as_text=True))
    for what in ("sessions", "paragraphs"):
        result = runner.invoke(args=["export-annotations", "--format", "jsonl", "--what", what])
        assert result.exit_code == 0, result.output
        for character in BREAKS:
            assert character not in result.output, what
        lines = [json.loads(line) for line in result.output.split("\n") if line.strip()]
        assert lines, what


def test_create_round_reads_the_export_from_the_cli_and_the_console(
    app, client, runner, researcher_client, tmp_path
):
    _annotated(client)
    path = tmp_path / "export.jsonl"
    runner.invoke(args=["export-annotations", "--format", "jsonl", "--output", path])
    result = runner.invoke(args=["validation", "create-round", "cli-round", "--items", str(path)])
    assert result.exit_code == 0, result.output

    page = researcher_client.get("/research/rounds").get_data(as_text=True)
    csrf = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', page)[1]
    form = {"name": "console-round", "judgments_per_item": "1", "csrf_token": csrf}
    response = researcher_client.post("/research/rounds", data=form, follow_redirects=True)
    assert "Created round console-round: 2 item(s)" in response.get_data(as_text=True)
    for name in ("cli-round", "console-round"):
        round_id = db.session.scalar(db.select(ValidationRound.id).filter_by(name=name))
        items = db.session.scalars(db.select(ValidationItem).filter_by(round_id=round_id))
        odd = [item for item in items if item.comment == COMMENT]
        assert [item.span_text for item in odd] == [PARAGRAPHS[0][6:17]], name


def test_import_annotations_reads_the_apps_own_export(app, client, runner, tmp_path):
    _annotated(client)
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    runner.invoke(args=["export-annotations", "--format", "jsonl", "--output", first])
    delete_all_work()
    result = runner.invoke(args=["import-annotations", str(first)])
    assert result.exit_code == 0, result.output
    runner.invoke(args=["export-annotations", "--format", "jsonl", "--output", second])
    assert _assert_safe_jsonl(second.read_text("utf-8"))[0]["comment"] == COMMENT


def test_readers_split_on_newline_only():
    raw = json.dumps({"comment": COMMENT}, ensure_ascii=False)  # the breaks unescaped
    text = f"{raw}\n\n{raw}\r\n"
    found = list(json_object_lines(text, "f.jsonl:"))
    assert found == [("f.jsonl:1", {"comment": COMMENT}), ("f.jsonl:3", {"comment": COMMENT})]
