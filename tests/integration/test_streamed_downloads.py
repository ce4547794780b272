"""The exchange formats' downloads stream (issue 31, point 3), on SQLite and PostgreSQL:
the W3C lines as the records are read, and the brat, dataset and payments zips as they
are written (the first piece leaves before the study is read to its end), each a valid
zip whose every file is what the command writes into a folder. The W3C download is byte
for byte the text the formatter gives the whole list of records and every document
(what the download sent before it streamed)."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from app.core.extensions import db
from app.exports.record import ExportFilter, iter_annotation_records
from app.interop import w3c
from app.models import Document, Paragraph
from app.research import interop_files
from app.research.study_data import document_texts
from app.taxonomy import current_taxonomy
from tests.support.synthetic_study import seed_study

DOCUMENTS = 100


class Counted:
    """A function of app.research.interop_files wrapped to count what it gives: calls,
    and the items of the iterators it returns."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
        self.real = getattr(interop_files, name)
        self.calls = self.items = 0
        monkeypatch.setattr(interop_files, name, self)

    def __call__(self, *args, **kwargs):
        self.calls += 1
        found = self.real(*args, **kwargs)
        return found if isinstance(found, dict) else self._counted(found)

    def _counted(self, items) -> Iterator:
        for item in items:
            self.items += 1
            yield item


@pytest.fixture
def study(app, monkeypatch):
    seeded(4, monkeypatch)


def seeded(annotations: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """DOCUMENTS documents read by 2 annotators, `annotations` annotations a reading."""
    seed_study(DOCUMENTS, 2, annotations, categories=current_taxonomy().keys)
    db.session.commit()
    monkeypatch.setattr(interop_files, "CHUNK", 512)  # small pieces


def as_bytes(chunk: str | bytes) -> bytes:
    return chunk if isinstance(chunk, bytes) else chunk.encode("utf-8")


def download(client, path: str) -> tuple[Iterator, bytes]:
    """The response's generator and its first piece (nothing more read yet)."""
    response = client.get(path, buffered=False)
    assert response.status_code == 200 and response.is_streamed
    chunks = iter(response.response)
    return chunks, as_bytes(next(chunks))


def rest(chunks: Iterator, first: bytes) -> bytes:
    return first + b"".join(as_bytes(chunk) for chunk in chunks)


def same_as_folder(data: bytes, top: str, folder: Path) -> None:
    """The zip is valid and holds exactly the folder's files under `top`, byte for byte."""
    archive = zipfile.ZipFile(io.BytesIO(data))
    assert archive.testzip() is None
    files = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
    assert sorted(archive.namelist()) == [f"{top}/{name}" for name in files]
    for name in files:
        assert archive.read(f"{top}/{name}") == (folder / name).read_bytes(), name


def test_w3c_download_reads_the_records_one_by_one_and_writes_the_same_text(
    app, study, runner, tmp_path, researcher_client, monkeypatch
):
    expected = "".join(  # the whole list and every text, as before the stream
        line + "\n"
        for line in w3c.export_lines(
            list(iter_annotation_records(ExportFilter())),
            document_texts(),
            study=interop_files.study_name(),
            pseudonymise=interop_files.pseudonyms(),
        )
    )
    records = Counted(monkeypatch, "annotation_records")
    texts = Counted(monkeypatch, "document_texts")
    chunks, first = download(researcher_client, "/research/export/annotations-w3c.jsonl")
    assert 0 < texts.calls < DOCUMENTS  # before: every document's text read first
    total = records.items
    data = rest(chunks, first)
    assert total < records.items  # before: the list of records read before the first line
    assert texts.calls == DOCUMENTS  # one query per document, each read once
    assert data.decode("utf-8") == expected
    result = runner.invoke(
        args=["export-annotations", "--format", "w3c", "--output", str(tmp_path / "w3c.jsonl")]
    )
    assert result.exit_code == 0, result.output
    assert (tmp_path / "w3c.jsonl").read_bytes() == data


def test_brat_download_is_a_zip_written_document_by_document(
    app, study, runner, tmp_path, researcher_client, monkeypatch
):
    result = runner.invoke(
        args=["export-annotations", "--format", "brat", "--output", str(tmp_path / "brat")]
    )
    assert result.exit_code == 0, result.output
    texts = Counted(monkeypatch, "document_texts")
    chunks, first = download(researcher_client, "/research/export/annotations-brat.zip")
    assert 0 < texts.calls < DOCUMENTS  # before: the whole folder built, then zipped
    same_as_folder(rest(chunks, first), "annotations-brat", tmp_path / "brat")
    assert texts.calls == DOCUMENTS


def test_dataset_download_is_a_zip_written_a_line_at_a_time(
    app, runner, tmp_path, researcher_client, monkeypatch
):
    seeded(12, monkeypatch)  # enough rows for deflate to send a block before the file ends
    result = runner.invoke(args=["export-dataset", str(tmp_path / "dataset")])
    assert result.exit_code == 0, result.output
    records = Counted(monkeypatch, "annotation_records")
    sessions = Counted(monkeypatch, "session_records")
    chunks, first = download(researcher_client, "/research/export/dataset.zip")
    read = records.items
    assert sessions.items == 0  # before: every configuration read whole first
    data = rest(chunks, first)
    assert 0 < read < records.items  # the annotations sent as they are read
    same_as_folder(data, "dataset", tmp_path / "dataset")


def test_payments_download_is_a_streamed_zip_of_the_sheets(
    app, study, runner, tmp_path, researcher_client
):
    result = runner.invoke(
        args=["payments", "--platform", "prolific", "--output", str(tmp_path / "pay")]
    )
    assert result.exit_code == 0, result.output
    chunks, first = download(researcher_client, "/research/export/payments-prolific.zip")
    same_as_folder(rest(chunks, first), "payments-prolific", tmp_path / "pay")


def test_a_refused_brat_export_leaves_the_folder_as_it_was(app, study, runner, tmp_path):
    """The command writes the folder document by document: a record refused on the last
    document leaves no half-written folder."""
    last = db.session.scalar(select(Document).order_by(Document.external_id.desc()).limit(1))
    for paragraph in db.session.scalars(select(Paragraph).filter_by(document_id=last.id)):
        paragraph.text = "changed " * 20  # the spans no longer quote the document
    db.session.commit()
    output = tmp_path / "brat"
    output.mkdir()
    result = runner.invoke(args=["export-annotations", "--format", "brat", "--output", str(output)])
    assert result.exit_code == 1, result.output
    assert "The brat export was refused:" in result.output
    assert list(output.iterdir()) == []
