"""`flask import-documents` and import_documents() on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from sqlalchemy import event, func, select

from app.core.extensions import db
from app.imports.document_formats import DocumentInput, parse_documents
from app.imports.document_store import DocumentImportRefused, import_documents
from app.models import (
    Annotation,
    AnnotationSession,
    Annotator,
    Document,
    Paragraph,
    ValidationItem,
    ValidationRound,
    utcnow,
)
from app.studies import current_study_id
from tests.support.rows import add_span, direct_annotator

ROOT = Path(__file__).resolve().parent.parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "documents"
DEMO = ROOT / "data" / "demo"


def counts() -> tuple[int, int]:
    """(documents, paragraphs) in the database."""
    documents = db.session.scalar(select(func.count(Document.id)))
    paragraphs = db.session.scalar(select(func.count(Paragraph.id)))
    db.session.rollback()
    return documents, paragraphs


def stored(external_id: str) -> Document:
    """A document as stored now (not a stale copy from the identity map)."""
    db.session.expire_all()
    return db.session.scalars(select(Document).filter_by(external_id=external_id)).one()


def texts(external_id: str) -> list[str]:
    """The stored paragraph texts of a document, in order."""
    return [p.text for p in stored(external_id).paragraphs]


def write_jsonl(path: Path, *records: dict) -> Path:
    """A JSON-lines file, one record a line."""
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), "utf-8")
    return path


def annotate(external_id: str, *, deleted: bool = False, how_many: int = 1) -> None:
    """Give a document a session with annotations, as a worker would."""
    annotator = Annotator(platform="direct", external_id=f"worker-{external_id}")
    session = AnnotationSession(
        document=stored(external_id),
        annotator=annotator,
        taxonomy_version="test",
        platform="direct",
    )
    db.session.add(session)
    for n in range(how_many):
        db.session.add(
            Annotation(
                session=session,
                client_id=f"00000000-0000-4000-8000-{n:012d}",
                paragraph_id=0,
                span_start=0,
                span_end=3,
                span_text="One",
                category="repetition",
                deleted_at=utcnow() if deleted else None,
            )
        )
    db.session.commit()


def test_cli_imports_a_file(runner):
    result = runner.invoke(args=["import-documents", str(FIXTURES / "records.json")])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == (
        f"Imported 3 documents: 3 new, 0 updated, 0 unchanged ({FIXTURES / 'records.json'})"
    )
    assert counts() == (3, 6)
    document = stored("rec-3")
    assert document.paragraph_count == 1
    assert document.gold == [{"paragraph_id": 0, "start": 0, "end": 4, "category": "new-person"}]
    assert document.is_attention_check
    assert document.content_hash == DocumentInput("x", None, ("Gold here.",)).content_hash
    assert texts("rec-2") == ["Alpha.", "Beta.", "Gamma."]
    assert [p.position for p in stored("rec-2").paragraphs] == [0, 1, 2]
    # No gold is SQL NULL (not the JSON value null), so queries can find ordinary documents.
    ordinary = select(Document.external_id).where(Document.gold.is_(None))
    assert sorted(db.session.scalars(ordinary)) == ["rec-1", "rec-2"]


def test_gold_removed_on_update_is_sql_null(runner, tmp_path):
    gold = [{"paragraph_id": 0, "start": 0, "end": 3, "category": "new-person"}]
    path = write_jsonl(tmp_path / "d.jsonl", {"id": "d", "paragraphs": ["One."], "gold": gold})
    runner.invoke(args=["import-documents", str(path)])
    assert stored("d").is_attention_check
    write_jsonl(path, {"id": "d", "paragraphs": ["One."]})
    result = runner.invoke(args=["import-documents", str(path)])
    assert "0 new, 1 updated, 0 unchanged" in result.stdout
    ordinary = select(Document.external_id).where(Document.gold.is_(None))
    assert db.session.scalars(ordinary).all() == ["d"]


def test_cli_imports_every_format(runner):
    for name in ("falte.json", "records.jsonl", "plain.txt", "folder"):
        result = runner.invoke(args=["import-documents", str(FIXTURES / name)])
        assert result.exit_code == 0, result.output
    assert counts() == (8, 13)
    document = stored("with-metadata")
    assert (document.title, document.entities) == ("A story", ["Anna", "Bo"])
    assert document.meta == {"model": "gpt-4", "chunk": 4096}
    assert document.gold is None
    assert texts("plain") == ["The first paragraph\nspans two lines.", "The second one."]


def test_reimport_changes_nothing_and_says_so(runner):
    path = str(FIXTURES / "falte.json")
    runner.invoke(args=["import-documents", path])
    before = {d.external_id: (d.id, d.updated_at) for d in db.session.scalars(select(Document))}
    paragraph_ids = db.session.scalars(select(Paragraph.id).order_by(Paragraph.id)).all()
    db.session.rollback()
    result = runner.invoke(args=["import-documents", path])
    assert result.exit_code == 0, result.output
    assert "Imported 2 documents: 0 new, 0 updated, 2 unchanged" in result.stdout
    db.session.expire_all()
    after = {d.external_id: (d.id, d.updated_at) for d in db.session.scalars(select(Document))}
    assert after == before
    assert db.session.scalars(select(Paragraph.id).order_by(Paragraph.id)).all() == paragraph_ids


def test_bad_file_writes_nothing(runner, tmp_path):
    runner.invoke(args=["import-documents", str(FIXTURES / "plain.txt")])
    before = counts()
    result = runner.invoke(args=["import-documents", str(FIXTURES / "bad.jsonl")])
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        f"{FIXTURES / 'bad.jsonl'}: 2 problems; nothing imported:",
        "  bad.jsonl:2: id: empty id",
        "  bad.jsonl:3: paragraphs[1]: empty paragraph",
    ]
    assert counts() == before


def test_missing_path_is_a_usage_error(runner, tmp_path):
    result = runner.invoke(args=["import-documents", str(tmp_path / "nope.json")])
    assert result.exit_code == 2
    assert "does not exist" in result.stderr


def test_metadata_change_updates_in_place(runner, tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", {"id": "d", "paragraphs": ["One two.", "Three."]})
    runner.invoke(args=["import-documents", str(path)])
    paragraph_ids = [p.id for p in stored("d").paragraphs]
    annotate("d")
    record = {"id": "d", "paragraphs": ["One two.", "Three."], "title": "New", "entities": ["X"]}
    write_jsonl(path, record | {"meta": {"v": 2}})
    result = runner.invoke(args=["import-documents", str(path)])
    assert result.exit_code == 0, result.output
    assert "1 document: 0 new, 1 updated, 0 unchanged" in result.stdout
    document = stored("d")
    assert (document.title, document.entities, document.meta) == ("New", ["X"], {"v": 2})
    assert [p.id for p in document.paragraphs] == paragraph_ids


def test_changed_text_refused_when_annotations_point_into_it(runner, tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", {"id": "doc-1", "paragraphs": ["One.", "Two."]})
    runner.invoke(args=["import-documents", str(path)])
    annotate("doc-1", how_many=2)
    # Another worker's annotation there, removed.
    session = AnnotationSession(
        document=stored("doc-1"),
        annotator=direct_annotator("other"),
        taxonomy_version="test",
        platform="direct",
    )
    db.session.add(session)
    db.session.flush()
    add_span(session.id, 1, 0, "Two", "ungrammatical", deleted_at=utcnow())
    db.session.commit()
    before = counts()
    write_jsonl(
        path,
        {"id": "new-doc", "paragraphs": ["Would be new."]},
        {"id": "doc-1", "paragraphs": ["One.", "Two, changed."]},
    )
    result = runner.invoke(args=["import-documents", str(path)])
    assert result.exit_code == 1, result.exception
    assert result.stderr.splitlines()[1:] == [
        "  doc-1: text changed but 3 annotations point into it; "
        "import under a new id or remove them first"
    ]
    assert counts() == before
    assert texts("doc-1") == ["One.", "Two."]


def test_removed_annotations_and_validation_items_count_too(app, tmp_path):
    import_documents(parse_documents(write_jsonl(tmp_path / "a.jsonl", {"id": "a", "text": "x"})))
    import_documents(parse_documents(write_jsonl(tmp_path / "b.jsonl", {"id": "b", "text": "y"})))
    annotate("a", deleted=True)
    validation_round = ValidationRound(name="r1", study_id=current_study_id())
    db.session.add(
        ValidationItem(
            round=validation_round,
            external_id="item-1",
            source="gpt-4",
            document=stored("b"),
            order_key=0,
            span_text="y",
        )
    )
    db.session.commit()
    changed = [DocumentInput("a", None, ("x2",)), DocumentInput("b", None, ("y2",))]
    with pytest.raises(DocumentImportRefused) as refused:
        import_documents(changed)
    assert refused.value.problems == [
        "a: text changed but 1 annotation points into it; "
        "import under a new id or remove them first",
        "b: text changed but 1 validation item points into it; "
        "import under a new id or remove them first",
    ]
    assert texts("a") == ["x"]
    assert texts("b") == ["y"]


def test_changed_text_replaced_when_nothing_points_into_it(runner, tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", {"id": "d", "paragraphs": ["A.", "B.", "C."]})
    runner.invoke(args=["import-documents", str(path)])
    # A worker who read all three paragraphs but annotated nothing.
    session = AnnotationSession(
        document=stored("d"),
        annotator=Annotator(platform="direct", external_id="reader"),
        taxonomy_version="test",
        platform="direct",
        position=2,
        furthest=2,
    )
    db.session.add(session)
    db.session.commit()
    write_jsonl(path, {"id": "d", "paragraphs": ["A, rewritten.", "B."]})
    result = runner.invoke(args=["import-documents", str(path)])
    assert result.exit_code == 0, result.output
    assert "1 document: 0 new, 1 updated, 0 unchanged" in result.stdout
    document = stored("d")
    assert texts("d") == ["A, rewritten.", "B."]
    assert document.paragraph_count == 2
    assert document.content_hash == DocumentInput("d", None, ("A, rewritten.", "B.")).content_hash
    assert counts() == (1, 2)
    db.session.refresh(session)
    assert (session.position, session.furthest) == (1, 1)


def test_dry_run_reports_and_writes_nothing(runner, tmp_path):
    runner.invoke(args=["import-documents", str(FIXTURES / "records.jsonl")])
    before = counts()
    path = write_jsonl(
        tmp_path / "d.jsonl",
        {"id": "line-1", "paragraphs": ["Hello.", "World."], "title": "Now titled"},
        {"id": "line-2", "text": "Solo paragraph."},
        {"id": "brand-new", "text": "New."},
    )
    result = runner.invoke(args=["import-documents", "--dry-run", str(path)])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == (
        "Dry run: would import 3 documents: 1 new, 1 updated, 1 unchanged "
        f"({path}); nothing written"
    )
    assert counts() == before
    assert stored("line-1").title is None


def test_dry_run_reports_refusals(runner, tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", {"id": "d", "paragraphs": ["One."]})
    runner.invoke(args=["import-documents", str(path)])
    annotate("d")
    write_jsonl(path, {"id": "d", "paragraphs": ["Changed."]})
    result = runner.invoke(args=["import-documents", "--dry-run", str(path)])
    assert result.exit_code == 1
    assert "d: text changed but 1 annotation points into it" in result.stderr


def test_demo_folder_imports_five_documents(runner):
    result = runner.invoke(args=["import-documents", str(DEMO)])
    assert result.exit_code == 0, result.output
    assert "Imported 5 documents: 5 new, 0 updated, 0 unchanged" in result.stdout
    documents = {d.external_id: d for d in db.session.scalars(select(Document))}
    assert sorted(documents) == [
        "harbour-library",
        "night-train",
        "orchard-dispute",
        "skarvik-lighthouse",
        "west-lake-teahouse",
    ]
    assert all(5 <= d.paragraph_count <= 10 for d in documents.values())
    assert documents["harbour-library"].language == "ar"
    assert documents["harbour-library"].direction == "rtl"
    assert documents["west-lake-teahouse"].language == "zh-Hans"
    assert documents["skarvik-lighthouse"].language is None
    skarvik = documents["skarvik-lighthouse"]
    assert skarvik.title == "The Lighthouse at Skarvik"
    assert "Łukasz" in skarvik.entities
    assert "📷" in skarvik.paragraphs[2].text
    again = runner.invoke(args=["import-documents", str(DEMO)])
    assert "5 documents: 0 new, 0 updated, 5 unchanged" in again.stdout


def test_demo_readme_spans_match_the_stored_text(runner):
    runner.invoke(args=["import-documents", str(DEMO)])
    readme = (DEMO / "README.md").read_text("utf-8")
    row = re.compile(r'\[(\d+):(\d+)\] "(.+?)"')
    checked = 0
    for section in readme.split("\n### ")[1:]:
        paragraphs = texts(section.split()[0])
        for line in section.splitlines():
            if not line.startswith("| ") or "[" not in line:
                continue
            cells = line.split(" | ")
            paragraph_id = int(cells[0].strip("| "))
            for cell in cells[2:]:
                for start, end, quote in row.findall(cell):
                    if cell.startswith("¶"):
                        paragraph_id = int(cell[1 : cell.index(" ")])
                    assert paragraphs[paragraph_id][int(start) : int(end)] == quote
                    checked += 1
    assert checked == 5 * 7 + 10  # one span per category, plus the paired spans


def test_many_documents_show_progress_and_use_few_statements(runner, tmp_path, app):
    paragraphs = [f"Paragraph {n} of a longer text." for n in range(40)]
    records = [{"id": f"doc-{n}", "paragraphs": paragraphs} for n in range(250)]
    path = write_jsonl(tmp_path / "many.jsonl", *records)
    statements = []

    def count(conn, cursor, statement, *args):
        statements.append(statement)

    event.listen(db.engine, "before_cursor_execute", count)
    try:
        result = runner.invoke(args=["import-documents", str(path)])
    finally:
        event.remove(db.engine, "before_cursor_execute", count)
    assert result.exit_code == 0, result.output
    assert "Importing documents" in result.stderr
    assert "Imported 250 documents: 250 new, 0 updated, 0 unchanged" in result.stdout
    assert counts() == (250, 10_000)
    # Not one statement per paragraph: batched documents, executemany for paragraphs.
    assert len(statements) < 30


def test_faltes_own_stories_json_imports_as_text_with_its_entities(app, runner):
    path = ROOT / "tests" / "fixtures" / "falte" / "stories.json"
    result = runner.invoke(args=["import-documents", str(path)])
    assert result.exit_code == 0, result.output
    document = db.session.scalars(select(Document).filter_by(external_id="test0")).one()
    texts = [p.text for p in sorted(document.paragraphs, key=lambda p: p.position)]
    assert texts[0].startswith("John Fenwick, an aspiring artist, accepts a loan from Mr. Morrison")
    assert not any("<" in text or "ne-" in text for text in texts)
    assert document.entities == ["John", "Fenwick", "Morrison"]

    bad = ROOT / "tests" / "fixtures" / "falte" / "bad-markup.json"
    result = runner.invoke(args=["import-documents", str(bad)])
    assert result.exit_code != 0
    assert "bad-markup.json:record 1 (story): sentences[1]: markup other than" in result.output
    assert db.session.scalar(select(func.count(Document.id)).filter_by(external_id="story")) == 0
