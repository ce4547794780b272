"""`flask import-annotations` and `flask study-report` on BooookScore's released human
annotations (the six incremental and six hierarchical summaries in tests/fixtures).

The expected figures are computed here from the raw JSON files, independently of the
importer, the locator, the splitter and the report, by the release's own rule
(`Scorer.get_score` in booookscore/legacy/get_booookscore_v1.py): per book,
``1 - (len(singles) + len(relations)) / len(sent_tokenize(summary))``, the sentences being
NLTK's own splits of each summary (punkt-sentences.json, made outside the project), the
mean over books; Table 1's rates are label occurrences over all those sentences.
"""

from __future__ import annotations

import json

import pytest

from app.core.extensions import db
from app.models import Annotation, AnnotationSession, ValidationItem
from tests.support.apps import BOOOOKSCORE_TAXONOMY, app_in_context
from tests.support.booookscore import single, write_human_file
from tests.support.worker_api import delete_all_work

FILES = {"inc-": "human-annotations.json", "hier-": "human-annotations-hier.json"}


@pytest.fixture
def app(database_uri):
    """The app with BooookScore's taxonomy (its eight error types as category keys)."""
    yield from app_in_context(database_uri, TAXONOMY_PATH=BOOOOKSCORE_TAXONOMY)


def _expected(data: dict, nltk_sentences: dict[str, list[str]]) -> dict:
    """The release's BooookScore per book and Table 1's rates, from the raw file."""
    books, occurrences, all_sentences = {}, {}, 0
    for book, entry in data.items():
        confusing = len(entry["singles"]) + len(entry["relations"])
        sentences = len(nltk_sentences[book])
        books[book] = (sentences, confusing)
        all_sentences += sentences
        for annotation in entry["singles"] + entry["relations"]:
            labels = annotation.get("labels", annotation.get("shared_labels"))
            for label in dict.fromkeys(labels):
                occurrences[label] = occurrences.get(label, 0) + 1
    scores = [
        1 - confusing / sentences if confusing else 1 for sentences, confusing in books.values()
    ]
    return {
        "books": books,
        "booookscore": 100 * sum(scores) / len(scores),
        "rates": {
            "-".join(label.split()): 100 * count / all_sentences
            for label, count in occurrences.items()
        },
        "rows": sum(occurrences.values()),
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
    nltk = json.loads((booookscore_sample / "punkt-sentences.json").read_text("utf-8"))
    for prefix in FILES:
        result = _import(runner, booookscore_sample, prefix)
        data = json.loads((booookscore_sample / FILES[prefix]).read_text("utf-8"))
        expected = _expected(data, nltk[prefix.rstrip("-")])
        assert f"Imported {expected['rows']} annotation(s) in {len(data)} " in result.output
        report = _study_report(runner, "--id-prefix", prefix)
        got = {d["document_id"]: d for d in report["documents"]}
        assert set(got) == {prefix + book for book in data}
        for book, (sentences, confusing) in expected["books"].items():
            row = got[prefix + book]
            assert (row["sentences"], row["error_sentences"]) == (sentences, confusing), book
            assert row["booookscore"] == pytest.approx(100 * (1 - confusing / sentences))
        # To the last digit: the same arithmetic on the same counts.
        assert report["booookscore"] == pytest.approx(expected["booookscore"], abs=1e-9)
        rates = {k: v for k, v in report["errors_per_sentence"].items() if v}
        assert rates == pytest.approx(expected["rates"])
        assert report["annotators"] == 1
        assert report["excluded"] == {"documents": [], "annotators": []}
        assert report["suggestions"] == {} and report["gold"] == {}
        assert all(d["mqm_per_100_words"] is None for d in report["documents"])
    both = _study_report(runner)
    assert len(both["documents"]) == 12 and both["annotators"] == 2
    table = runner.invoke(args=["study-report", "--id-prefix", "inc-"]).stdout
    assert "BooookScore (mean over documents; 100 x (1 - error units / sentences)" in table
    csv_text = runner.invoke(args=["study-report", "--format", "csv"]).stdout
    assert csv_text.startswith("section,key,sentences,error_sentences,value")


def test_our_export_imports_back_to_the_same_export(app, runner, booookscore_sample, tmp_path):
    _import(runner, booookscore_sample, "inc-")
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    result = runner.invoke(args=["export-annotations", "--format", "jsonl", "--output", first])
    assert result.exit_code == 0, result.output
    delete_all_work()
    result = runner.invoke(args=["import-annotations", str(first), "--format", "auto"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(args=["export-annotations", "--format", "jsonl", "--output", second])
    assert result.exit_code == 0, result.output

    def records(path):
        rows = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
        units: dict[int, int] = {}
        for row in rows:
            del row["session_id"], row["created_at"]
            # unit_id is a database id, like session_id; which rows share one is kept.
            row["unit_id"] = units.setdefault(row["unit_id"], len(units))
        return rows

    assert records(first) and records(second) == records(first)
    # A released span with several labels: one row per label, one unit.
    assert len({r["unit_id"] for r in records(first)}) < len(records(first))


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
    path = write_human_file(
        tmp_path / "human.json", "Anna met Bob. They left.", [single("1", "Anna", ["who"])]
    )
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
    # The command computes the analyses the download reads (a download never computes).
    report = _study_report(runner)
    response = researcher_client.get("/research/export/study-report.json")
    assert response.status_code == 200
    assert "attachment" in response.headers["Content-Disposition"]
    assert response.get_json() == report
    response = researcher_client.get("/research/export/study-report.csv")
    assert response.status_code == 200 and response.mimetype == "text/csv"
    assert "hier-the-night-travelers.epub" in response.get_data(as_text=True)
    page = researcher_client.get("/research/").get_data(as_text=True)
    assert "/research/export/study-report.json" in page


def test_skip_rejected_leaves_out_unlocatable_spans(app, runner, tmp_path):
    path = write_human_file(
        tmp_path / "human.json",
        "Anna met Bob. Anna left.",
        [single("1", "Anna", ["entity omission"]), single("2", "Carol", ["entity omission"])],
    )
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


def _labelless_file(booookscore_sample, tmp_path, name: str = "summary-gpt4-4096-hier.json"):
    """One released book whose first relation has empty shared_labels (as two relations of
    the-true-love-experiment.epub have in the full release) and whose first single has two
    labels."""
    data = json.loads((booookscore_sample / FILES["hier-"]).read_text("utf-8"))
    book = "the-night-travelers.epub"  # one single, two relations
    entry = data[book]
    entry["relations"][0]["shared_labels"] = []
    entry["singles"][0]["labels"] = ["discontinuity", "salience"]
    path = tmp_path / name
    path.write_text(json.dumps({book: entry}), "utf-8")
    return path, book, entry


def test_a_relation_without_labels_is_imported_counted_and_in_no_category(
    app, runner, researcher_client, booookscore_sample, tmp_path
):
    path, book, entry = _labelless_file(booookscore_sample, tmp_path)
    # The recipe of docs/importing-data.md ("Scoring BooookScore's release"), without
    # --skip-rejected (it exited 1 before).
    result = runner.invoke(args=["import-annotations", str(path), "--id-prefix", "hier-"])
    assert result.exit_code == 0, result.output
    assert f"{path.name}:{book} relations[0]: shared_labels: empty: imported without" in (
        result.output
    )
    rows = db.session.scalars(db.select(Annotation).order_by(Annotation.id)).all()
    labelless = [row for row in rows if row.category is None]
    assert len(labelless) == 1 and labelless[0].paired_text is not None
    # The two labels of one single: two rows, one unit.
    first = [row for row in rows if row.comment == entry["singles"][0]["questions"]]
    assert sorted(row.category for row in first) == ["discontinuity", "salience"]
    assert first[0].unit_id == first[1].unit_id == first[0].id

    report = _study_report(runner, "--id-prefix", "hier-")
    (document,) = report["documents"]
    units = len(entry["singles"]) + len(entry["relations"])
    nltk = json.loads((booookscore_sample / "punkt-sentences.json").read_text("utf-8"))
    sentences = len(nltk["hier"][book])
    assert (document["sentences"], document["error_sentences"]) == (sentences, units)
    assert report["booookscore"] == pytest.approx(100 * (1 - units / sentences))
    occurrences = sum(len(a.get("labels", a.get("shared_labels"))) for a in entry["singles"])
    occurrences += sum(len(a["shared_labels"]) for a in entry["relations"])
    rates = report["errors_per_sentence"]
    assert None not in rates and "" not in rates
    assert sum(rates.values()) == pytest.approx(100 * occurrences / sentences)

    # Every export form says category null, and unit_id.
    for fmt in ("jsonl", "csv"):
        out = tmp_path / f"export.{fmt}"
        result = runner.invoke(args=["export-annotations", "--format", fmt, "--output", out])
        assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in (tmp_path / "export.jsonl").read_text().splitlines()]
    (null,) = [r for r in records if r["category"] is None]
    assert (null["category_name"], null["category_type"]) == (None, None)
    assert null["unit_id"] == labelless[0].id
    assert len({r["unit_id"] for r in records}) == units
    download = researcher_client.get("/research/export/annotations.jsonl").get_data(as_text=True)
    assert [json.loads(line) for line in download.splitlines()] == records
    csv_text = (tmp_path / "export.csv").read_text("utf-8-sig")
    assert "unit_id" in csv_text.splitlines()[0]

    # The researcher's pages, validation rounds, gamma and adjudication take it.
    document_row = db.session.scalars(db.select(AnnotationSession)).one()
    for url in (
        "/research/",
        f"/research/documents/hier-{book}",
        f"/research/sessions/{document_row.id}",
        f"/research/documents/hier-{book}/adjudicate",
    ):
        response = researcher_client.get(url)
        assert response.status_code == 200, url
    result = runner.invoke(
        args=["validation", "create-round", "r1", "--items", str(tmp_path / "export.jsonl")]
    )
    assert result.exit_code == 0, result.output
    second, _, _ = _labelless_file(booookscore_sample, tmp_path, "second-annotator.json")
    result = runner.invoke(args=["import-annotations", str(second), "--id-prefix", "hier-"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(args=["agreement", "--gamma", "--samples", "2", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["documents"][0]["gamma"] is not None
    report = _study_report(runner, "--id-prefix", "hier-")
    assert report["agreement"]["mean_pairwise_span_f1"]["value"] == pytest.approx(100.0)
    assert report["agreement"]["mean_pairwise_span_f1_same_category"]["value"] == (
        pytest.approx(100.0)
    )
    # The round trip keeps the null category and the units.
    export = tmp_path / "again.jsonl"
    runner.invoke(args=["export-annotations", "--format", "jsonl", "--output", export])
    db.session.execute(db.delete(ValidationItem))
    db.session.execute(db.delete(Annotation))
    db.session.execute(db.delete(AnnotationSession))
    db.session.commit()
    result = runner.invoke(args=["import-annotations", str(export)])
    assert result.exit_code == 0, result.output
    assert _study_report(runner, "--id-prefix", "hier-")["documents"][0]["error_sentences"] == units
