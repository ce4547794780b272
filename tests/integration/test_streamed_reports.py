"""study-report and the W3C export stream (issue 31): the download arrives in pieces
written as the report is encoded, never as one string built first; the command writes
the same text piece by piece."""

from __future__ import annotations

import json

from app.core.extensions import db
from app.research import study_report
from app.taxonomy import current_taxonomy
from tests.support.synthetic_study import seed_study


def seeded(monkeypatch) -> None:
    seed_study(40, 2, 3, categories=current_taxonomy().keys, check_documents=2)
    db.session.commit()
    monkeypatch.setattr(study_report, "CHUNK", 1024, raising=False)  # small pieces


def test_study_report_download_is_streamed(researcher_client, monkeypatch):
    seeded(monkeypatch)
    for fmt in ("json", "csv"):
        response = researcher_client.get(f"/research/export/study-report.{fmt}", buffered=False)
        assert response.status_code == 200 and response.is_streamed
        chunks = list(response.response)
        assert len(chunks) > 3, len(chunks)  # before: one chunk, the whole report
        text = b"".join(c if isinstance(c, bytes) else c.encode() for c in chunks).decode()
        if fmt == "json":  # the text json.dumps wrote before, byte for byte
            report = json.loads(text)
            assert text == json.dumps(report, indent=2, ensure_ascii=False)
            assert len(report["documents"]) == 38  # the 2 attention checks are excluded
        else:
            lines = text.split("\r\n")
            assert lines[0] == "section,key,sentences,error_sentences,value"
            assert sum(line.startswith("document,") for line in lines) == 38


def test_w3c_download_is_streamed(researcher_client, monkeypatch):
    seeded(monkeypatch)
    response = researcher_client.get("/research/export/annotations-w3c.jsonl", buffered=False)
    assert response.status_code == 200
    chunks = list(response.response)
    lines = b"".join(c if isinstance(c, bytes) else c.encode() for c in chunks).splitlines()
    assert len(chunks) == len(lines) > 1  # a line at a time, not one joined string


def test_study_report_command_writes_the_same_text(app, runner, monkeypatch):
    seeded(monkeypatch)
    pieces: list[str] = []
    real = study_report.iter_json

    def counted(report):
        for piece in real(report):
            pieces.append(piece)
            yield piece

    monkeypatch.setattr("app.research.cli.iter_json", counted)
    result = runner.invoke(args=["study-report", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert len(pieces) > 3
    assert result.stdout == "".join(pieces) + "\n"
    assert json.loads(result.stdout)["documents"]
