"""Exports (CLI and downloads) read back equal the database, on both databases."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime, timedelta

import pytest

from app.export import ANNOTATION_CSV_COLUMNS, FALTE_COLUMNS, SESSION_COLUMNS
from app.extensions import db
from app.models import Annotation, AnnotationSession, Annotator, Document
from tests.integration.validation_support import add_annotation, make_documents, make_session

TRICKY_COMMENT = 'Line one, with "quotes"\nline two; ünïcödé 🚢'


@pytest.fixture
def stored(app):
    """Two documents, four sessions, annotations of every kind (paired, removed, unknown key)."""
    make_documents()
    alice = make_session(
        "doc-a",
        "alice",
        status="submitted",
        platform="prolific",
        params={"study_id": "S1", "session_id": "P1"},
        furthest=1,
    )
    bob = make_session("doc-a", "bob")
    idle = make_session(
        "doc-b", "carol", last_seen=datetime.now(UTC) - timedelta(days=2), furthest=1
    )
    make_session("doc-b", "dave", status="submitted", furthest=1)  # done, found nothing
    base = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
    add_annotation(alice, 1, "Łukasz", "new-person", comment=TRICKY_COMMENT, created=base)
    add_annotation(alice, 0, "Zoë", "new-person", occurrence=1, created=base)
    add_annotation(alice, 0, "🚢", "new-person", created=base)
    add_annotation(alice, 1, "he slept", "repetition", paired=(0, "Zoë smiled"), created=base)
    add_annotation(alice, 0, "harbour", "new-person", removed=True, created=base)
    add_annotation(bob, 0, "smiled", "retired-key", created=base)
    add_annotation(idle, 0, "Anna", "new-person", occurrence=1, created=base)
    return {"alice": alice, "bob": bob, "idle": idle}


def _db_rows(include_removed: bool = False):
    """The annotations as (document, annotator label, paragraph, start, end, text, paired...)."""
    query = (
        db.select(Annotation, Document.external_id, Annotator, AnnotationSession.status)
        .join(AnnotationSession, Annotation.session_id == AnnotationSession.id)
        .join(Document, AnnotationSession.document_id == Document.id)
        .join(Annotator, AnnotationSession.annotator_id == Annotator.id)
    )
    if not include_removed:
        query = query.where(Annotation.deleted_at.is_(None))
    rows = []
    for a, doc, who, status in db.session.execute(query):
        paired = None
        if a.paired_text is not None:
            paired = (a.paired_paragraph_id, a.paired_start, a.paired_end, a.paired_text)
        rows.append(
            (
                doc,
                who.label,
                str(a.session_id),
                a.paragraph_id,
                a.span_start,
                a.span_end,
                a.span_text,
                a.category,
                paired,
                a.comment,
                status == "submitted",
            )
        )
    return rows


def _from_record(r):
    span, paired = r["span"], r["paired_span"]
    return (
        r["document_id"],
        r["annotator_id"],
        r["session_id"],
        span["paragraph_id"],
        span["start"],
        span["end"],
        span["text"],
        r["category"],
        None
        if paired is None
        else (paired["paragraph_id"], paired["start"], paired["end"], paired["text"]),
        r["comment"],
        r["submitted"],
    )


def _from_csv_row(r):
    def number(value):
        return int(value) if value != "" else None

    paired = None
    if r["paired_text"]:
        paired = (
            number(r["paired_paragraph_id"]),
            number(r["paired_start"]),
            number(r["paired_end"]),
            r["paired_text"],
        )
    return (
        r["document_id"],
        r["annotator_id"],
        r["session_id"],
        int(r["paragraph_id"]),
        int(r["span_start"]),
        int(r["span_end"]),
        r["span_text"],
        r["error_category"],
        paired,
        r["comment"] or None,
        r["submitted"] == "true",
    )


def _ordered(rows):
    return sorted(rows, key=lambda r: (r[0], int(r[2]), r[3], r[4]))


def test_jsonl_export_reads_back_equal_to_the_database(app, runner, stored, tmp_path):
    out = tmp_path / "annotations.jsonl"
    result = runner.invoke(args=["export-annotations", "--format", "jsonl", "--output", str(out)])
    assert result.exit_code == 0, result.output
    lines = out.read_text("utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    assert len(records) == 6
    assert set(records[0]) == {
        "document_id",
        "paragraph_id",
        "category",
        "category_name",
        "category_type",
        "span",
        "paired_span",
        "comment",
        "annotator_id",
        "platform",
        "session_id",
        "submitted",
        "created_at",
        "taxonomy_version",
        "origin",
        "suggestion_id",
    }
    got = [_from_record(r) for r in records]
    # Ordered by document, session, paragraph, start, and equal to the stored rows.
    assert got == _ordered(_db_rows())
    for r in records:
        paragraphs = [
            p.text
            for p in db.session.scalars(db.select(Document).filter_by(external_id=r["document_id"]))
            .one()
            .paragraphs
        ]
        span = r["span"]
        assert paragraphs[span["paragraph_id"]][span["start"] : span["end"]] == span["text"]
        assert r["paragraph_id"] == span["paragraph_id"]
        assert datetime.fromisoformat(r["created_at"]) == datetime(2024, 5, 1, 12, tzinfo=UTC)
    by_category = {r["category"]: r for r in records}
    assert by_category["repetition"]["category_type"] == "paired"
    assert by_category["repetition"]["paired_span"]["text"] == "Zoë smiled"
    assert by_category["retired-key"]["category_name"] == "retired-key"
    assert by_category["retired-key"]["category_type"] == "unknown"
    assert "🚢" in out.read_text("utf-8")  # not \\u-escaped
    assert "Exporting" in result.stderr  # the progress bar goes to stderr
    assert all("removed_at" not in r for r in records)


def test_csv_export_reads_back_equal_to_the_database(app, runner, stored, tmp_path):
    out = tmp_path / "annotations.csv"
    result = runner.invoke(args=["export-annotations", "--format", "csv", "--output", str(out)])
    assert result.exit_code == 0, result.output
    raw = out.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")  # UTF-8 BOM for spreadsheets
    assert b"\r\n" in raw
    rows = list(csv.DictReader(io.StringIO(raw.decode("utf-8-sig"), newline="")))
    with out.open(encoding="utf-8-sig", newline="") as handle:
        header = next(csv.reader(handle))
    assert tuple(header[: len(FALTE_COLUMNS)]) == FALTE_COLUMNS
    assert tuple(header) == ANNOTATION_CSV_COLUMNS
    assert [_from_csv_row(r) for r in rows] == _ordered(_db_rows())
    assert any(r["comment"] == TRICKY_COMMENT for r in rows)  # newline, quotes survive


def test_filters_and_removed_annotations(app, runner, stored):
    result = runner.invoke(args=["export-annotations", "--submitted-only"])
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert {r["annotator_id"] for r in records} == {"prolific:alice"}
    assert all(r["submitted"] for r in records)

    result = runner.invoke(args=["export-annotations", "--document", "doc-b"])
    assert {json.loads(line)["document_id"] for line in result.stdout.splitlines()} == {"doc-b"}

    result = runner.invoke(args=["export-annotations", "--include-removed"])
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert [_from_record(r) for r in records] == _ordered(_db_rows(include_removed=True))
    removed = [r for r in records if r["removed_at"] is not None]
    assert [r["span"]["text"] for r in removed] == ["harbour"]
    assert all("removed_at" in r for r in records)

    result = runner.invoke(args=["export-annotations", "--document", "nope"])
    assert result.exit_code != 0
    assert "no document" in result.output


def test_sessions_export_tells_done_without_errors_from_never_done(app, runner, stored):
    result = runner.invoke(args=["export-annotations", "--what", "sessions", "--format", "csv"])
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout.lstrip("\ufeff"))))
    assert tuple(rows[0]) == SESSION_COLUMNS
    by_annotator = {r["annotator_id"]: r for r in rows}
    assert by_annotator["prolific:alice"]["status"] == "submitted"
    assert by_annotator["prolific:alice"]["annotations"] == "4"  # live ones only
    assert by_annotator["prolific:alice"]["study_id"] == "S1"
    assert by_annotator["prolific:alice"]["platform_session_id"] == "P1"
    assert by_annotator["direct:bob"]["status"] == "active"
    assert by_annotator["direct:carol"]["status"] == "abandoned"  # idle for two days
    assert by_annotator["direct:dave"]["status"] == "submitted"
    assert by_annotator["direct:dave"]["annotations"] == "0"
    assert by_annotator["direct:dave"]["furthest_paragraph"] == "1"
    assert by_annotator["direct:dave"]["completion_code"]

    result = runner.invoke(args=["export-annotations", "--what", "sessions"])
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(records) == 4
    assert {r["is_attention_check"] for r in records} == {False}


def test_downloads_need_a_researcher(client, stored):
    for path in (
        "/research/export/annotations.jsonl",
        "/research/export/annotations.csv",
        "/research/export/sessions.csv",
    ):
        response = client.get(path)
        assert response.status_code in (302, 401), path
        if response.status_code == 302:
            assert "/login" in response.headers["Location"]


def test_downloads_stream_the_same_records_as_the_cli(app, runner, researcher_client, stored):
    response = researcher_client.get("/research/export/annotations.jsonl")
    assert response.status_code == 200
    assert response.is_streamed
    assert 'attachment; filename="annotations.jsonl"' in response.headers["Content-Disposition"]
    assert len(response.get_data(as_text=True).splitlines()) == 6
    # On PostgreSQL the CLI's JSONL is written by COPY (app.export_copy), the download row
    # by row: the same records in the same order.
    for options in ([], ["--include-removed"], ["--submitted-only", "--document", "doc-a"]):
        cli = runner.invoke(args=["export-annotations", "--format", "jsonl", *options]).stdout
        query = "&".join(o.lstrip("-").replace("-", "_") + "=1" for o in options if o[:2] == "--")
        query = query.replace("document=1", "document=doc-a")
        streamed = researcher_client.get(f"/research/export/annotations.jsonl?{query}")
        downloaded = [json.loads(line) for line in streamed.get_data(as_text=True).splitlines()]
        assert downloaded == [json.loads(line) for line in cli.splitlines()]
        assert downloaded

    response = researcher_client.get("/research/export/annotations.csv?submitted_only=1")
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("text/csv")
    cli = runner.invoke(args=["export-annotations", "--format", "csv", "--submitted-only"])
    assert response.get_data() == cli.stdout_bytes

    response = researcher_client.get("/research/export/sessions.csv")
    assert response.status_code == 200
    assert 'filename="sessions.csv"' in response.headers["Content-Disposition"]
    assert response.get_data(as_text=True).count("\r\n") == 5  # header + 4 sessions

    assert (
        researcher_client.get("/research/export/annotations.csv?document=nope").status_code == 404
    )
