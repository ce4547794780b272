"""`flask import-annotations` and `flask study-report` on BooookScore's released human
annotations (the six incremental and six hierarchical summaries in tests/fixtures).

The expected figures are computed here from the raw JSON files, independently of the
importer, the locator and the report: paragraphs by cutting the summary at blank lines,
spans by `str.find`, the footnote-12 count and Table 1's rates written out below. Only
the sentence splitter is the app's (`split_sentences`, unit-tested on its own), because
the paper's figures depend on a splitter and the app documents its own.
"""

from __future__ import annotations

import json

import pytest

from app import create_app
from app.extensions import db
from app.metrics import split_sentences
from app.models import Annotation, AnnotationSession, Annotator
from tests.support.apps import ROOT, dispose_engines, make_test_config

BOOOOKSCORE_TAXONOMY = ROOT / "config" / "taxonomies" / "booookscore.yaml"
FILES = {"inc-": "human-annotations.json", "hier-": "human-annotations-hier.json"}


@pytest.fixture
def app(database_uri):
    """The app with BooookScore's taxonomy (its eight error types as category keys)."""
    application = create_app(make_test_config(database_uri, TAXONOMY_PATH=BOOOOKSCORE_TAXONOMY))
    with application.app_context():
        yield application
        db.session.remove()
        dispose_engines()


def _first(paragraphs: list[str], text: str, after: tuple[int, int, int] | None = None):
    """The first (paragraph, start, end) of text, optionally after and apart from `after`."""
    for pid, paragraph in enumerate(paragraphs):
        start = paragraph.find(text)
        while start != -1:
            place = (pid, start, start + len(text))
            if after is None or (place > after and (pid != after[0] or start >= after[2])):
                return place
            start = paragraph.find(text, start + 1)
    raise AssertionError(f"{text!r} not in the summary")


def _expected(data: dict) -> dict:
    """BooookScore per book (footnote 12) and Table 1's rates, from the raw file."""
    books, occurrences, all_sentences = {}, {}, 0
    for book, entry in data.items():
        paragraphs = [p.strip() for p in entry["summary"].split("\n\n") if p.strip()]
        sentences = [(pid, s, e) for pid, p in enumerate(paragraphs) for s, e in split_sentences(p)]
        units = []  # the places each annotation highlights: one, or two for a relation
        for single in entry["singles"]:
            units.append([_first(paragraphs, single["span"].strip())])
            for label in dict.fromkeys(single["labels"]):
                occurrences[label] = occurrences.get(label, 0) + 1
        for relation in entry["relations"]:
            a, b = relation["span_a"].strip(), relation["span_b"].strip()
            place_a, place_b = _first(paragraphs, a), _first(paragraphs, b)
            if place_a[0] == place_b[0] and place_a[1] < place_b[2] and place_b[1] < place_a[2]:
                place_a = _first(paragraphs, a, after=place_b)  # same text: the next one
            units.append([place_a, place_b])
            for label in dict.fromkeys(relation["shared_labels"]):
                occurrences[label] = occurrences.get(label, 0) + 1
        # Footnote 12: the sentences one annotation covers are one sentence.
        group = list(range(len(sentences)))

        def top(i, group=group):
            while group[i] != i:
                i = group[i]
            return i

        errors = []
        for places in units:
            covered = [
                i
                for pid, start, end in places
                for i, (p, s, e) in enumerate(sentences)
                if p == pid and s < end and start < e
            ]
            for i in covered:
                group[top(i)] = top(covered[0])
            errors.append(covered[0])
        merged = {top(i) for i in range(len(sentences))}
        books[book] = (len(sentences), len(merged), len({top(i) for i in errors}))
        all_sentences += len(sentences)
    return {
        "books": books,
        "booookscore": sum(100 * (1 - e / n) for _, n, e in books.values()) / len(books),
        "rates": {
            "-".join(label.split()): 100 * count / all_sentences
            for label, count in occurrences.items()
        },
        "annotations": sum(occurrences.values()),
    }


def _import(runner, booookscore_sample, prefix: str):
    path = booookscore_sample / FILES[prefix]
    result = runner.invoke(args=["import-annotations", str(path), "--id-prefix", prefix])
    assert result.exit_code == 0, result.output
    return result


def _study_report(runner, *args) -> dict:
    result = runner.invoke(args=["study-report", "--format", "json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_booookscore_samples_through_import_and_study_report(app, runner, booookscore_sample):
    for prefix in FILES:
        result = _import(runner, booookscore_sample, prefix)
        data = json.loads((booookscore_sample / FILES[prefix]).read_text("utf-8"))
        expected = _expected(data)
        assert f"Imported {expected['annotations']} annotation(s) in {len(data)} " in result.output
        report = _study_report(runner, "--id-prefix", prefix)
        got = {d["document_id"]: d for d in report["documents"]}
        assert set(got) == {prefix + book for book in data}
        for book, (sentences, merged, errors) in expected["books"].items():
            row = got[prefix + book]
            assert row["sentences"] == sentences, book
            assert (row["footnote12_sentences"], row["error_sentences"]) == (merged, errors), book
            assert row["booookscore"] == pytest.approx(100 * (1 - errors / merged))
        assert report["booookscore"] == pytest.approx(expected["booookscore"])
        rates = {k: v for k, v in report["errors_per_sentence"].items() if v}
        assert rates == pytest.approx(expected["rates"])
        assert report["annotators"] == 1
        assert report["excluded"] == {"documents": [], "annotators": []}
        assert report["suggestions"] == {} and report["gold"] == {}
        assert all(d["mqm_per_100_words"] is None for d in report["documents"])
    both = _study_report(runner)
    assert len(both["documents"]) == 12 and both["annotators"] == 2
    table = runner.invoke(args=["study-report", "--id-prefix", "inc-"]).stdout
    assert "BooookScore (mean over documents, 0-100)" in table
    csv_text = runner.invoke(args=["study-report", "--format", "csv"]).stdout
    assert csv_text.startswith("section,key,sentences,footnote12_sentences,error_sentences,value")


def test_our_export_imports_back_to_the_same_export(app, runner, booookscore_sample, tmp_path):
    _import(runner, booookscore_sample, "inc-")
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    result = runner.invoke(args=["export-annotations", "--format", "jsonl", "--output", first])
    assert result.exit_code == 0, result.output
    db.session.execute(db.delete(Annotation))
    db.session.execute(db.delete(AnnotationSession))
    db.session.execute(db.delete(Annotator))
    db.session.commit()
    result = runner.invoke(args=["import-annotations", str(first), "--format", "auto"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(args=["export-annotations", "--format", "jsonl", "--output", second])
    assert result.exit_code == 0, result.output

    def records(path):
        rows = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
        for row in rows:
            del row["session_id"], row["created_at"]
        return rows

    assert records(first) and records(second) == records(first)


def test_errors_are_by_line_and_nothing_is_written(app, runner, tmp_path):
    path = tmp_path / "bad.jsonl"
    record = {
        "document_id": "missing-doc",
        "category": "entity-omission",
        "span": {"paragraph_id": 0, "start": 0, "end": 4, "text": "Anna"},
        "paired_span": None,
        "comment": None,
        "annotator_id": "direct:w1",
        "platform": "direct",
    }
    path.write_text(json.dumps(record) + "\n" + "{not json\n", "utf-8")
    result = runner.invoke(args=["import-annotations", str(path)])
    assert result.exit_code == 1
    assert "bad.jsonl:2: not valid JSON" in result.output
    assert "bad.jsonl:1: document 'missing-doc' is not imported" in result.output
    assert db.session.scalar(db.select(db.func.count(AnnotationSession.id))) == 0


def test_labels_need_a_key_or_a_map(app, runner, tmp_path):
    data = {
        "book": {
            "summary": "Anna met Bob. They left.",
            "singles": [{"id": "1", "span": "Anna", "questions": "Who?", "labels": ["who"]}],
            "relations": [],
        }
    }
    path = tmp_path / "human.json"
    path.write_text(json.dumps(data), "utf-8")
    result = runner.invoke(args=["import-annotations", str(path)])
    assert result.exit_code == 1
    assert "human.json:book singles[0]: category: 'who' is no category" in result.output
    mapping = tmp_path / "map.yaml"
    mapping.write_text("who: entity-omission\n", "utf-8")
    result = runner.invoke(args=["import-annotations", str(path), "--taxonomy-map", str(mapping)])
    assert result.exit_code == 0, result.output
    annotation = db.session.scalars(db.select(Annotation)).one()
    assert (annotation.category, annotation.span_text, annotation.comment) == (
        "entity-omission",
        "Anna",
        "Who?",
    )


def test_falte_dump_makes_one_session_per_survey_code(app, runner, tmp_path):
    docs = tmp_path / "docs.json"
    docs.write_text(json.dumps({"s1": ["Anna met Bob.", "Anna met Bob again. He left."]}))
    assert runner.invoke(args=["import-documents", str(docs)]).exit_code == 0
    dump = tmp_path / "annotation_v2.csv"
    dump.write_text(
        "storyid,segmentid,error,span1,span1_start,span1_end,span2,span2_start,span2_end,"
        "survey_code,feedback,annotator\n"
        "s1,1,Duplication,Anna met Bob,3,15,Anna met Bob,0,12,c1,,w1\n"
        "s1,1,Entity omission, He,0,0,,,,c1,who?,w1\n"
        "s1,0,no-error,,,,,,,c2,,w2\n",
        "utf-8",
    )
    result = runner.invoke(args=["import-annotations", str(dump), "--format", "falte"])
    assert result.exit_code == 0, result.output
    sessions = db.session.scalars(db.select(AnnotationSession)).all()
    assert len(sessions) == 2 and all(s.status == "submitted" for s in sessions)
    rows = db.session.scalars(db.select(Annotation).order_by(Annotation.span_start)).all()
    duplication = next(a for a in rows if a.category == "duplication")
    # The span is in segment 1, its paired span the earlier text in segment 0.
    assert (duplication.paragraph_id, duplication.span_start) == (1, 0)
    assert (duplication.paired_paragraph_id, duplication.paired_start) == (0, 0)
    omission = next(a for a in rows if a.category == "entity-omission")
    assert omission.span_text == "He" and omission.comment == "who?"


def test_research_offers_the_study_report_as_downloads(
    app, researcher_client, runner, booookscore_sample
):
    # (Anonymous requests are refused by the blueprint's check: tests/security covers it.)
    _import(runner, booookscore_sample, "hier-")
    response = researcher_client.get("/research/export/study-report.json")
    assert response.status_code == 200
    assert "attachment" in response.headers["Content-Disposition"]
    assert response.get_json() == _study_report(runner)
    response = researcher_client.get("/research/export/study-report.csv")
    assert response.status_code == 200 and response.mimetype == "text/csv"
    assert "hier-the-night-travelers.epub" in response.get_data(as_text=True)
    page = researcher_client.get("/research/").get_data(as_text=True)
    assert "/research/export/study-report.json" in page


def test_skip_rejected_leaves_out_unlocatable_spans(app, runner, tmp_path):
    data = {
        "book": {
            "summary": "Anna met Bob. Anna left.",
            "singles": [
                {"id": "1", "span": "Anna", "questions": "Who?", "labels": ["entity omission"]},
                {"id": "2", "span": "Carol", "questions": "Who?", "labels": ["entity omission"]},
            ],
            "relations": [],
        }
    }
    path = tmp_path / "human.json"
    path.write_text(json.dumps(data), "utf-8")
    result = runner.invoke(args=["import-annotations", str(path)])
    assert result.exit_code == 1
    assert "human.json:book singles[1]: span: text 'Carol' not found" in result.output
    assert db.session.scalar(db.select(db.func.count(AnnotationSession.id))) == 0
    result = runner.invoke(args=["import-annotations", str(path), "--skip-rejected"])
    assert result.exit_code == 0, result.output
    assert "Rejected (left out): 1" in result.output
    assert "human.json:book singles[0]: span occurs 2 times" in result.output  # ambiguous
    assert [a.span_text for a in db.session.scalars(db.select(Annotation))] == ["Anna"]
    assert runner.invoke(args=["import-annotations", "--help"]).exit_code == 0
    assert runner.invoke(args=["study-report", "--help"]).exit_code == 0
