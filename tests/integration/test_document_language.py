"""A document's language: stored at import, changed by a re-import, given to the page and the
API, and used to split sentences for the study's figures (SQLite and PostgreSQL)."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import select

from app.core.extensions import db
from app.models import Document
from app.rules.metrics import document_sentences
from tests.support.worker_api import start

ARABIC = "وصل Karim إلى القاهرة عام 2019. هل رأى الأهرامات؟ نعم، رآها مع Sarah."


def import_file(runner, tmp_path: Path, record: dict) -> str:
    """Import one JSON-lines record with the CLI; its output."""
    path = tmp_path / "doc.jsonl"
    path.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    result = runner.invoke(args=["import-documents", str(path)])
    assert result.exit_code == 0, result.output
    return result.stdout


def stored(external_id: str) -> Document:
    """The document as stored now."""
    db.session.expire_all()
    return db.session.scalars(select(Document).filter_by(external_id=external_id)).one()


def test_language_is_stored_and_a_reimport_changes_only_it(runner, tmp_path):
    import_file(runner, tmp_path, {"id": "ar-1", "text": ARABIC, "language": "ar"})
    document = stored("ar-1")
    assert (document.language, document.direction) == ("ar", "rtl")
    assert document.paragraphs[0].text == ARABIC  # no bidi marks added
    output = import_file(runner, tmp_path, {"id": "ar-1", "text": ARABIC, "language": "ar-EG"})
    assert "0 new, 1 updated, 0 unchanged" in output
    assert stored("ar-1").language == "ar-EG"
    output = import_file(runner, tmp_path, {"id": "ar-1", "text": ARABIC})
    assert "0 new, 1 updated, 0 unchanged" in output
    assert stored("ar-1").language is None


def test_a_malformed_tag_is_refused_with_file_line_and_field(runner, tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"id": "x", "text": "Text.", "language": "en_GB"}) + "\n", "utf-8")
    result = runner.invoke(args=["import-documents", str(path)])
    assert result.exit_code != 0
    assert "bad.jsonl:1: language: 'en_GB' is not a BCP 47 language tag" in result.stderr
    assert db.session.scalar(select(Document.id)) is None


def test_the_page_and_the_api_carry_the_language(client, runner, tmp_path):
    import_file(runner, tmp_path, {"id": "ar-1", "text": ARABIC, "language": "ar"})
    import_file(runner, tmp_path, {"id": "plain", "text": "No language given."})
    token = start(client, "ar-1")
    page = client.get(f"/s/{token}").get_data(as_text=True)
    assert 'js-current-body" tabindex="0" lang="ar" dir="rtl"' in page
    assert 'js-context-body" tabindex="0" lang="ar" dir="rtl"' in page
    state = client.get(f"/api/sessions/{token}").get_json()
    assert state["document"]["language"] == "ar"
    plain = start(client, "plain")
    assert 'dir="rtl"' not in client.get(f"/s/{plain}").get_data(as_text=True)
    assert client.get(f"/api/sessions/{plain}").get_json()["document"]["language"] is None


def test_the_study_report_counts_sentences_by_the_language(runner, tmp_path):
    import_file(runner, tmp_path, {"id": "ar-1", "text": ARABIC, "language": "ar"})
    import_file(runner, tmp_path, {"id": "ar-2", "text": ARABIC})
    result = runner.invoke(args=["study-report", "--format", "json"])
    assert result.exit_code == 0, result.output
    sentences = {d["document_id"]: d["sentences"] for d in json.loads(result.stdout)["documents"]}
    # Without a language the English splitter (NLTK's Punkt) ends a sentence at the full
    # stop but knows no Arabic question mark.
    assert sentences == {"ar-1": 3, "ar-2": 2}
    assert len(document_sentences([ARABIC], "ar")) == 3
