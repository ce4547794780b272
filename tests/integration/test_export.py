"""Exports (CLI and downloads) read back equal the database, on both databases."""

from __future__ import annotations

import csv
import io
import json
import threading
from datetime import UTC, datetime, timedelta

import pytest

from app.core.extensions import db
from app.exports import postgres_copy as export_copy
from app.exports import record as export_record
from app.exports.record import (
    ANNOTATION_CSV_COLUMNS,
    FALTE_COLUMNS,
    FIELDS,
    ExportFilter,
    Field,
    annotation_csv_columns,
    annotation_record,
    category_lookup,
    flatten_annotation,
    iter_annotation_lines,
    iter_annotation_records,
)
from app.exports.session_rows import SESSION_COLUMNS
from app.models import Annotation, AnnotationSession, Annotator, Document
from app.research.downloads import command_exports
from app.taxonomy import current_taxonomy
from tests.support.validation import add_annotation, make_documents, make_session

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
        "severity",  # docs/contracts.md#annotation-export-records: null without severities
        "annotator_id",
        "platform",
        "session_id",
        "unit_id",  # issue 28: every worker's Add is a unit of its own
        "submitted",
        "created_at",
        "taxonomy_version",
        "origin",
        "suggestion_id",
        "flagged",
        "decoy",  # issue 32: made from a decoy suggestion
    }
    assert len({r["unit_id"] for r in records}) == len(records)
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
    # The same records in the same order, whatever the options.
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


def _copy_lines(flt) -> list[str]:
    """The COPY path's lines for `flt` (PostgreSQL), through the file writer and the stream."""
    written = io.StringIO()
    export_copy.copy_annotations_jsonl(written, current_taxonomy(), flt)
    streamed = b"".join(export_copy.stream_annotations_jsonl(current_taxonomy(), flt))
    assert streamed.decode("utf-8") == written.getvalue()
    return written.getvalue().splitlines()


@pytest.mark.parametrize(
    "flt",
    [ExportFilter(), ExportFilter(include_removed=True), ExportFilter("doc-a", True)],
    ids=["all", "include-removed", "document-submitted"],
)
def test_the_forms_of_the_record_agree(app, stored, flt):
    # The dict, the JSON written key by key, PostgreSQL's row_to_json and the CSV row
    # all come from app.exports.record.FIELDS: the same keys, values and order.
    _assert_forms_agree(flt)


def test_a_field_added_to_the_table_reaches_every_form(app, stored, monkeypatch):
    added = Field("probe", Annotation.comment)  # as origin, suggestion_id, severity will be
    monkeypatch.setattr(export_record, "FIELDS", (*export_record.FIELDS, added))
    records = _assert_forms_agree(ExportFilter())
    assert [r["probe"] for r in records] == [r["comment"] for r in records]
    assert annotation_csv_columns(ExportFilter())[-1] == "probe"
    assert "probe" in annotation_record(category_lookup(), probe="x")


def _assert_forms_agree(flt):
    records = list(iter_annotation_records(flt))
    assert records
    assert all(list(r) == [f.key for f in flt.fields] for r in records)
    lines = list(iter_annotation_lines(flt))
    assert lines == [json.dumps(r, ensure_ascii=False, separators=(", ", ": ")) for r in records]
    if export_copy.supported():
        copied = [json.loads(line) for line in _copy_lines(flt)]
        assert copied == records
        assert all(list(r) == [f.key for f in flt.fields] for r in copied)  # the keys' order
    columns = annotation_csv_columns(flt)
    assert all(set(flatten_annotation(r)) == set(columns) for r in records)
    return records


def test_a_record_made_outside_the_database_has_every_field(app):
    record = annotation_record(
        category_lookup(),
        document_id="doc-a",
        category="repetition",
        span=(0, 1, 4, "abc"),
        created_at=datetime(2024, 5, 1, 12, tzinfo=UTC),
    )
    assert list(record) == [f.key for f in FIELDS]
    assert record["paragraph_id"] == 0  # the span's
    assert record["comment"] is None  # not given: null
    assert record["span"] == {"paragraph_id": 0, "start": 1, "end": 4, "text": "abc"}
    assert record["paired_span"] is None
    assert (record["category_name"], record["category_type"]) == ("Repetition", "paired")
    assert record["created_at"] == "2024-05-01T12:00:00.000000+00:00"
    with pytest.raises(TypeError, match="not export fields: colour"):
        annotation_record(category_lookup(), colour="red")


def test_download_is_the_cli_export_byte_for_byte(app, runner, researcher_client, stored):
    # On PostgreSQL both are written by COPY (app.exports.postgres_copy), elsewhere by
    # app.exports.record.
    for options, query in (
        ([], ""),
        (["--include-removed"], "include_removed=1"),
        (["--submitted-only", "--document", "doc-a"], "submitted_only=1&document=doc-a"),
    ):
        cli = runner.invoke(args=["export-annotations", "--format", "jsonl", *options])
        assert cli.exit_code == 0, cli.output
        response = researcher_client.get(f"/research/export/annotations.jsonl?{query}")
        assert response.status_code == 200
        assert response.get_data() == cli.stdout_bytes


def test_every_export_of_the_table_downloads_as_the_command_writes_it(
    app, runner, researcher_client, stored
):
    # One table (app/research/downloads.py) behind the one route and the command (issue 29
    # point 4): each export, in each format it comes in, is the same bytes both ways.
    exports = command_exports("export-annotations")
    assert set(exports) == {
        "annotations",
        "sessions",
        "paragraphs",
        "surveys",
        "training",
        "suggestions",
    }
    for what, export in exports.items():
        for fmt in export.formats:
            cli = runner.invoke(args=["export-annotations", "--what", what, "--format", fmt])
            assert cli.exit_code == 0, cli.output
            response = researcher_client.get(f"/research/export/{what}.{fmt}")
            assert response.status_code == 200, (what, fmt)
            assert response.get_data() == cli.stdout_bytes, (what, fmt)
            disposition = response.headers["Content-Disposition"]
            assert disposition == f'attachment; filename="{what}.{fmt}"'
    for missing in ("nothing.csv", "suggestions.csv", "annotations.json", "gold.txt"):
        assert researcher_client.get(f"/research/export/{missing}").status_code == 404, missing
    refused = runner.invoke(args=["export-annotations", "--what", "suggestions", "--format", "csv"])
    assert refused.exit_code == 2
    assert "suggestions export as jsonl only" in refused.output


@pytest.mark.parametrize("database_uri", ["postgresql"], indirect=True)  # COPY is PostgreSQL's
def test_a_download_left_early_stops_the_copy(app, researcher_client, stored, monkeypatch):
    assert export_copy.supported()
    monkeypatch.setattr(export_copy, "CHUNK_BYTES", 1)  # one line a chunk
    monkeypatch.setattr(export_copy, "QUEUE_CHUNKS", 1)
    whole = researcher_client.get("/research/export/annotations.jsonl").get_data()
    response = researcher_client.get("/research/export/annotations.jsonl", buffered=False)
    chunks = iter(response.response)
    first = next(chunks)
    assert whole.startswith(first)
    assert len(first) < len(whole)
    response.close()  # the client goes away: the COPY is cancelled and its thread ends
    assert not [t for t in threading.enumerate() if t.name == "export-copy"]
    again = researcher_client.get("/research/export/annotations.jsonl")
    assert again.get_data() == whole
