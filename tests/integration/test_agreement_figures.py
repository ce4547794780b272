"""Agreement figures with bootstrap intervals on the dashboard and in study-report, gamma
cached by content; study-report against adjudicated gold; the gold export through
import-annotations. On SQLite and PostgreSQL."""

from __future__ import annotations

import json
import re
from statistics import fmean

import pytest

from app.adjudication import gamma_cache
from app.adjudication.boundary_agreement import document_units
from app.adjudication.gamma import gamma
from app.core.extensions import db
from app.jobs import queue as analysis_queue
from app.models import (
    AdjudicationDecision,
    AnalysisResult,
    Annotation,
    AnnotationSession,
    Annotator,
)
from app.rules.intervals import bootstrap_mean_ci
from tests.support.adjudication import (
    PARAGRAPHS,
    SECOND_MARKS,
    SECOND_PARAGRAPHS,
    adjudicate_all,
    seed_adjudication_document,
    seed_document,
)
from tests.support.servers import free_port

SECOND = "adj-doc-2"
# ann-2 marks the snow sentence too.
SECOND_MARKS_TOO = [*SECOND_MARKS, ("ann-2", "abrupt-transition", (1, 0, 4), None, None)]


@pytest.fixture
def two_documents(app):
    """The adjudication sample and a second document, three annotators each."""
    analysis_queue.wait_for_background()  # the previous test's jobs are done
    first = seed_adjudication_document()
    second = seed_document(SECOND, SECOND_PARAGRAPHS, SECOND_MARKS_TOO)
    return first, second


def _report(runner) -> dict:
    result = runner.invoke(args=["study-report", "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _expected_results(*documents) -> list:
    """Each document's gamma computed here, with GAMMA_SAMPLES (100) random continua."""
    samples = gamma_cache.DEFAULT_GAMMA_SAMPLES
    results = []
    for document in documents:
        units, _, annotators = document_units(document.id)
        results.append(gamma(units, samples=samples, seed=0, annotators=annotators))
    return results


def _expected_gammas(*documents) -> list[float]:
    return [result.gamma for result in _expected_results(*documents)]


def test_dashboard_never_computes_gamma_and_shows_it_once_cached(two_documents, researcher_client):
    with gamma_cache._runner_lock:  # the background thread waits before computing
        page = researcher_client.get("/research/")
        document = researcher_client.get(f"/research/documents/{SECOND}")
    assert page.status_code == 200
    # The page answered before gamma existed: both documents pending, no value.
    assert "γ is being computed for 2 documents" in page.text
    gamma_row = re.search(r'<tr data-figure="gamma">.*?</tr>', page.text, re.S).group(0)
    assert "2 pending" in gamma_row
    assert ">pending</span>" in document.text
    analysis_queue.wait_for_background()
    stored = db.session.scalars(db.select(AnalysisResult)).all()
    assert [(row.kind, row.status, row.attempts) for row in stored] == [("gamma", "done", 1)] * 2

    document = researcher_client.get(f"/research/documents/{SECOND}")
    assert "pending" not in document.text  # the same cache serves the document page
    page = researcher_client.get("/research/")
    assert "being computed" not in page.text
    expected = _expected_gammas(*two_documents)
    gamma_row = re.search(r'<tr data-figure="gamma">.*?</tr>', page.text, re.S).group(0)
    assert f">{fmean(expected):.2f} <" in gamma_row  # then its Monte-Carlo error
    low, high = bootstrap_mean_ci(expected)
    assert f"{low:.2f} to {high:.2f}" in gamma_row
    for name in ("krippendorff_alpha_sentences", "mean_pairwise_span_f1"):
        row = re.search(rf'<tr data-figure="{name}">.*?</tr>', page.text, re.S).group(0)
        assert " to " in row, row
    # The interval's rule is said once, above the table.
    assert "percentile bootstrap (Efron), whole documents resampled 1000 times" in page.text
    # Linked pairs exist on one document only: a value (percent), no interval.
    row = re.search(r'<tr data-figure="linked_pair_f1">.*?</tr>', page.text, re.S).group(0)
    assert ">33.3%<" in row and ">–<" in row


def test_study_report_gives_five_figures_with_intervals(two_documents, runner):
    report = _report(runner)
    agreement = report["agreement"]
    assert list(agreement) == [
        "krippendorff_alpha_sentences",
        "mean_pairwise_span_f1",
        "mean_pairwise_span_f1_same_category",
        "gamma",
        "linked_pair_f1",
    ]
    # The category-aware span F1 sits beside the span-overlap one (here every overlapping
    # pair of spans shares its category: the same value).
    same = agreement["mean_pairwise_span_f1_same_category"]
    assert same["value"] == pytest.approx(agreement["mean_pairwise_span_f1"]["value"])
    assert "category in common" in same["unit"]
    expected = _expected_gammas(*two_documents)
    assert agreement["gamma"]["value"] == pytest.approx(fmean(expected))
    assert agreement["gamma"]["ci95"] == pytest.approx(list(bootstrap_mean_ci(expected)))
    assert agreement["gamma"]["pending"] == 0 and agreement["gamma"]["documents"] == 2
    assert [d["gamma"] for d in report["documents"]] == expected  # adj-doc, adj-doc-2
    assert [d["linked_pair_f1"] for d in report["documents"]] == [pytest.approx(100 / 3), None]
    # Linked pairs: only the sample's repetition (ann-1 and ann-3 match: F1 1; pairs with
    # ann-2, who has none, 0): 1/3 on one document, in percent; no interval from one.
    pairs = agreement["linked_pair_f1"]
    assert pairs["value"] == pytest.approx(100 / 3) and pairs["documents"] == 1
    assert pairs["ci95"] is None
    for name, figure in agreement.items():
        assert set(figure) >= {"value", "ci95", "unit"}, name
        assert "percentile bootstrap" in figure["unit"], name
        if figure["ci95"] is not None:
            assert figure["ci95"][0] <= figure["value"] <= figure["ci95"][1], name
    assert "Mathet" in agreement["gamma"]["unit"]
    # The command stored what it computed: the agreement command reads it back.
    cached = runner.invoke(args=["agreement", "--gamma", "--format", "json"])
    rows = json.loads(cached.output[cached.output.index("{") :])["documents"]
    assert [row["gamma"] for row in rows] == expected
    table = runner.invoke(args=["study-report"]).stdout
    assert re.search(r"gamma: [-0-9.]+ \[95% CI [-0-9.]+, [-0-9.]+\]", table)
    csv_text = runner.invoke(args=["study-report", "--format", "csv"]).stdout
    assert "agreement_ci95_low,gamma" in csv_text and "agreement_unit,gamma" in csv_text
    assert f"document_gamma,adj-doc,,,{expected[0]}" in csv_text


def test_study_report_scores_annotators_against_adjudicated_gold(
    two_documents, researcher_client, runner
):
    assert _report(runner)["gold"] == {}
    adjudicate_all(researcher_client)  # gold: "met Bob at", "Then", the repetition
    gold = _report(runner)["gold"]
    # Attention-check rule (app.rules.spans.locates): same paragraph, character intersection
    # over union >= 0.5, same category.
    # ann-1: "Bob" (3 of the 10 characters of "met Bob at": not located), repetition
    # (matches), "all day" (ungrammatical: no gold of its category): precision 1/3;
    # recall 1/3.
    assert gold["direct:ann-1"] == pytest.approx({"precision": 100 / 3, "recall": 100 / 3})
    # ann-2: "met Bob" (7 of 10: matches), "the old mill" (rejected): precision 1/2,
    # recall 1/3.
    assert gold["direct:ann-2"] == pytest.approx({"precision": 50, "recall": 100 / 3})
    assert gold["direct:ann-3"] == pytest.approx({"precision": 100, "recall": 200 / 3})
    # Promoting copies the document as a new attention check: the original, its readings
    # and every figure stay as they were (issue 27.4).
    before = _report(runner)
    assert runner.invoke(args=["promote-gold", "adj-doc"]).exit_code == 0
    report = _report(runner)
    assert report["gold"] == gold
    assert report["agreement"] == before["agreement"] and report["documents"] == before["documents"]


def test_gold_export_round_trips_through_import_annotations(
    two_documents, researcher_client, runner, tmp_path
):
    adjudicate_all(researcher_client)
    gold_path, again_path = tmp_path / "gold.jsonl", tmp_path / "again.jsonl"
    assert runner.invoke(args=["export-gold", "--output", str(gold_path)]).exit_code == 0
    # Import into a study without the workers' sessions and decisions.
    db.session.execute(db.delete(AdjudicationDecision))
    db.session.execute(db.delete(Annotation))
    db.session.execute(db.delete(AnnotationSession))
    db.session.execute(db.delete(Annotator).where(Annotator.platform == "direct"))
    db.session.commit()
    result = runner.invoke(args=["import-annotations", str(gold_path)])
    assert result.exit_code == 0, result.output
    result = runner.invoke(args=["export-annotations", "--output", str(again_path)])
    assert result.exit_code == 0, result.output

    def records(path, drop):
        rows = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
        return [{k: v for k, v in row.items() if k not in drop} for row in rows]

    # Identical but session_id, created_at and unit_id (database ids, as for every export;
    # a gold record is a unit of its own, null), and provenance, which a session has no
    # place for (see app/adjudication/README.md).
    gold = records(gold_path, {"session_id", "created_at", "unit_id", "provenance"})
    assert len(gold) == 3
    assert records(again_path, {"session_id", "created_at", "unit_id"}) == gold
    assert {r["annotator_id"] for r in gold} == {"adjudication:gold"}
    assert PARAGRAPHS[1].startswith(gold[1]["span"]["text"])


def test_dashboard_works_when_the_queue_does_not_answer(two_documents, researcher_client):
    researcher_client.application.config["QUEUE_URL"] = f"redis://127.0.0.1:{free_port()}/0"
    page = researcher_client.get("/research/")
    assert page.status_code == 200  # the figures without gamma, never an error page
    assert "γ is being computed for 2 documents" in page.text
    assert "does not answer" in page.text


def test_span_f1_ignores_the_category_and_the_figure_beside_it_does_not(app, runner):
    # Two annotators overlap by one character ("a" of "Clara"/"a left"), in two categories.
    marks = [
        ("ann-1", "new-person", (0, 0, 5), None, None),
        ("ann-2", "abrupt-transition", (0, 4, 11), None, None),
    ]
    seed_document("f1-doc", SECOND_PARAGRAPHS, marks, annotators=("ann-1", "ann-2"))
    agreement = _report(runner)["agreement"]
    assert agreement["mean_pairwise_span_f1"]["value"] == pytest.approx(100.0)
    assert agreement["mean_pairwise_span_f1_same_category"]["value"] == pytest.approx(0.0)
    assert "one shared character" in agreement["mean_pairwise_span_f1"]["unit"]
