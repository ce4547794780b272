"""The analyses of issue 32 on the database (docs/analyses.md): the judge report on
BooookScore's sample, decoy suggestions taken through the real worker API, the recall
estimate and the planner from the study's readings, the commands' formats and
study-report's keys. The estimators' own arithmetic is tested in tests/unit/test_analysis_*."""

from __future__ import annotations

import csv
import io
import json
import re
import threading
import uuid
from functools import partial

import numpy as np
import pytest

from app.core.extensions import db
from app.jobs.queue import wait_for_background
from app.models import (
    AnalysisResult,
    Annotation,
    Annotator,
    Suggestion,
    ValidationItem,
)
from app.research import analysis_jobs
from tests.support.accounts import add_account
from tests.support.apps import BOOOOKSCORE_TAXONOMY, app_in_context, log_in_directly
from tests.support.assignment import add_documents
from tests.support.worker_api import csrf, move, save, start, submit

JUDGE_KEYS = {
    "judge",
    "unit",
    "documents",
    "humans",
    "overall",
    "per_category",
    "human_human",
    "alt_test",
    "alt_test_reason",
}


@pytest.fixture
def booookscore_app(database_uri):
    """The app with BooookScore's taxonomy (its eight error types as category keys)."""
    yield from app_in_context(database_uri, TAXONOMY_PATH=BOOOOKSCORE_TAXONOMY)


def _json(runner, *args) -> dict:
    result = runner.invoke(args=[*args, "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _within(figure: dict) -> None:
    value, (low, high) = figure["value"], figure["ci95"]
    assert 0 <= low <= value <= high <= 100


# --- judge report on BooookScore's sample -----------------------------------------------


def test_gpt4_against_the_humans_of_booookscore_by_sentence(booookscore_app, booookscore_sample):
    runner = booookscore_app.test_cli_runner()
    human = booookscore_sample / "human-annotations.json"
    model = booookscore_sample / "model-annotations.json"
    assert runner.invoke(args=["import-annotations", str(human)]).exit_code == 0
    result = runner.invoke(args=["import-suggestions", str(model), "--source", "gpt-4"])
    assert result.exit_code == 0, result.output

    report = _json(runner, "judge-report", "--judge", "gpt-4", "--unit", "sentence")
    assert set(report) >= JUDGE_KEYS
    assert (report["judge"], report["unit"], report["documents"], report["humans"]) == (
        "gpt-4",
        "sentence",
        6,
        1,
    )
    for name in ("precision", "recall", "f1"):
        _within(report["overall"][name])
    # Against the raw files: precision exactly; recall within a point (the importer places
    # the two spans of a duplication whose texts overlap apart, app.imports.locate's
    # place_pair, where the first occurrence would put them together: one unit more).
    judge_units, human_units, both = _sentence_units(booookscore_sample)
    assert report["overall"]["precision"]["value"] == pytest.approx(100 * both / judge_units)
    assert report["overall"]["recall"]["value"] == pytest.approx(100 * both / human_units, abs=1)
    # Per category, with intervals where the category occurs in two documents or more.
    assert set(report["per_category"]) >= {"entity-omission", "discontinuity"}
    for scores in report["per_category"].values():
        assert set(scores) == {"precision", "recall", "f1"}
    # One human per summary: no human-human figure and no alt-test, and it says why.
    assert report["human_human"] is None and report["alt_test"] is None
    assert "at least 3 human annotators" in report["alt_test_reason"]

    # By span, GPT-4's whole sentences rarely reach IoU 0.5 with humans' short spans.
    by_span = _json(runner, "judge-report", "--judge", "gpt-4")
    assert by_span["overall"]["recall"]["value"] < report["overall"]["recall"]["value"]

    table = runner.invoke(args=["judge-report", "--judge", "gpt-4", "--unit", "sentence"])
    assert table.exit_code == 0 and "Alternative Annotator Test: not run." in table.stdout
    rows = list(
        csv.reader(
            io.StringIO(
                runner.invoke(
                    args=[
                        "judge-report",
                        "--judge",
                        "gpt-4",
                        "--unit",
                        "sentence",
                        "--format",
                        "csv",
                    ]
                ).stdout
            )
        )
    )
    assert rows[0] == ["section", "key", "value", "ci95_low", "ci95_high"]
    assert ["judge", "humans", "1", "", ""] in rows

    # The judge may also be an annotator of its own (import-annotations); an unknown one
    # is refused with the names that exist.
    unknown = runner.invoke(args=["judge-report", "--judge", "gpt-5"])
    assert unknown.exit_code == 1
    assert "No suggestions from source 'gpt-5'" in unknown.output and "gpt-4" in unknown.output
    annotator = next(iter({a for a in _annotators()}))
    as_annotator = _json(runner, "judge-report", "--judge", annotator)
    assert as_annotator["humans"] == 0 and as_annotator["documents"] == 0


def _sentence_units(booookscore_sample) -> tuple[int, int, int]:
    """(GPT-4's units, the humans' units, units both have) of the six incremental books,
    from the raw files alone: a unit is (sentence, category), the sentences NLTK's own
    splits (punkt-sentences.json), a span standing for every sentence it touches where its
    text first occurs; a relation's span is its later one (as the importer stores it)."""
    human = json.loads((booookscore_sample / "human-annotations.json").read_text("utf-8"))
    model = json.loads((booookscore_sample / "model-annotations.json").read_text("utf-8"))
    punkt = json.loads((booookscore_sample / "punkt-sentences.json").read_text("utf-8"))

    judge_units = human_units = both = 0
    for book, entry in human.items():
        summary, at, bounds = entry["summary"], 0, []
        for sentence in punkt["inc"][book]:
            at = summary.index(sentence, at)
            bounds.append((at, at + len(sentence)))
            at += len(sentence)
        units = partial(_units, summary, bounds)
        humans = set()
        for single in entry["singles"]:
            humans |= units(single["span"], single["labels"])
        for relation in entry["relations"]:
            later = max((relation["span_a"], relation["span_b"]), key=summary.index)
            humans |= units(later, relation["shared_labels"])
        judge = set()
        for sentence, value in model[book].items():
            judge |= units(sentence, value["types"])
        judge_units, human_units = judge_units + len(judge), human_units + len(humans)
        both += len(judge & humans)
    return judge_units, human_units, both


def _units(summary: str, bounds: list, text: str, labels: list | None) -> set:
    """The (sentence, category) units of a span's text where it first occurs."""
    start = summary.index(text)
    touched = [k for k, (a, b) in enumerate(bounds) if a < start + len(text) and start < b]
    return {
        (k, "-".join(label.split()) if label else None)
        for k in touched
        for label in labels or [None]
    }


def _annotators() -> set[str]:
    return {f"{a.platform}:{a.external_id}" for a in db.session.scalars(db.select(Annotator))}


# --- decoys through the worker API ------------------------------------------------------

DECOYS = [  # on add_documents' text: "Anna met Bob. They talked." / "Then it rained."
    {"id": "decoy-1", "category": "new-person", "span": {"text": "Anna", "paragraph_id": 0}},
    {"id": "decoy-2", "category": "missing-info", "span": {"text": "They talked."}},
    {"id": "decoy-3", "category": "ungrammatical", "span": {"text": "Then it rained."}},
]
REAL = [{"id": "real-1", "category": "new-person", "span": {"text": "Bob", "paragraph_id": 0}}]
TAKE_RATE = 0.35  # the simulated workers' chance of taking a decoy
WORKERS = 12


def _items(tmp_path, name: str, items: list[dict]) -> str:
    path = tmp_path / name
    lines = [json.dumps({"document_id": "doc-000", **item}) for item in items]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def _suggestions(client, token: str) -> list[dict]:
    answer = client.get(f"/api/sessions/{token}/suggestions")
    assert answer.status_code == 200, answer.data
    return answer.get_json()["suggestions"]


def _decide(client, token: str, suggestion: dict, take: bool, edit: bool) -> None:
    if take:
        body = {
            "id": str(uuid.uuid4()),
            "category": "missing-info" if edit else suggestion["category"],
            "span": suggestion["span"],
            "paired_span": suggestion["paired_span"],
            "comment": suggestion["comment"],
            "suggestion_id": suggestion["id"],
        }
        answer = save(client, token, body)
        assert answer.status_code == 201, answer.data
    else:
        answer = client.post(
            f"/api/sessions/{token}/suggestions/{suggestion['id']}/rejection",
            json={"id": str(uuid.uuid4())},
            headers=csrf(token),
        )
        assert answer.status_code == 201, answer.data


def test_decoys_are_taken_at_the_simulated_rate(make_app, tmp_path):
    app = make_app({"GAMMA_SAMPLES": 2}, annotators_per_document=100, suggestions="show")
    client, runner = app.test_client(), app.test_cli_runner()
    rng = np.random.default_rng(32)
    with app.app_context():
        add_documents(1)
        real = runner.invoke(
            args=["import-suggestions", _items(tmp_path, "real.jsonl", REAL), "--source", "m"]
        )
        assert real.exit_code == 0, real.output
        args = ["import-suggestions", _items(tmp_path, "d.jsonl", DECOYS), "--source", "m"]
        decoys = runner.invoke(args=[*args, "--decoy"])
        assert decoys.exit_code == 0, decoys.output
        assert "Imported 3 decoy suggestion(s) from 'm'" in decoys.output
        assert sorted(db.session.scalars(db.select(Suggestion.decoy))) == [False, True, True, True]
        # Importing the same file as real suggestions is other content: refused, atomic.
        again = runner.invoke(args=args)
        assert again.exit_code == 1 and "is stored with other content" in again.output

        taken = 0
        for number in range(WORKERS):
            token = start(client, "doc-000", annotator=f"w{number}")
            assert client.get(f"/s/{token}").status_code == 200  # chooses the arm: show
            for paragraph in (0, 1):
                if paragraph:
                    moved = move(client, token, 1)
                    assert moved.status_code == 200, moved.data
                for suggestion in _suggestions(client, token):
                    if suggestion["decision"] is not None:
                        continue
                    is_decoy = suggestion["span"]["text"] != "Bob"
                    take = bool(rng.random() < (TAKE_RATE if is_decoy else 0.9))
                    taken += take and is_decoy
                    _decide(client, token, suggestion, take, edit=bool(rng.random() < 0.3))
            assert submit(client, token).status_code == 200

        report = _json(runner, "study-report")
        decoys = report["decoys"]
        assert (decoys["shown"], decoys["taken"]) == (3 * WORKERS, taken)
        assert decoys["rate"]["value"] == pytest.approx(100 * taken / (3 * WORKERS))
        low, high = decoys["rate"]["ci95"]
        assert low <= 100 * TAKE_RATE <= high  # the simulated rate is within the interval
        assert sum(w["taken"] for w in decoys["per_worker"].values()) == taken

        # No figure counts what was taken from a decoy: each session holds only the real
        # suggestion's annotation (when taken) in the figures.
        rows = db.session.execute(db.select(Annotation.suggestion_id)).scalars().all()
        from_decoys = len([r for r in rows if r is not None]) - report_real_taken(report)
        assert from_decoys == taken
        sentences = report["documents"][0]["sentences"]
        units = report["documents"][0]["error_sentences"]
        assert units == pytest.approx(report_real_taken(report) / WORKERS)
        assert report["documents"][0]["booookscore"] == pytest.approx(100 * (1 - units / sentences))
        assert set(report["suggestions"]) == {"m"}  # the real one's shares only
        assert report["suggestion_arms"] is None  # one arm

        # Exports mark them; a validation round made from the export leaves them out.
        exported = runner.invoke(args=["export-annotations", "--format", "jsonl"])
        records = [json.loads(line) for line in exported.stdout.splitlines()]
        assert sum(r["decoy"] for r in records) == taken
        assert all(r["decoy"] is False for r in records if r["suggestion_id"] == "real-1")
        path = tmp_path / "export.jsonl"
        path.write_text(exported.stdout, encoding="utf-8")
        result = runner.invoke(args=["validation", "create-round", "r", "--items", str(path)])
        assert result.exit_code == 0, result.output
        assert f"{taken} decoy suggestion(s) or annotation(s) made from one" in result.output
        # A round made from the suggestions export leaves the decoys themselves out.
        exported = runner.invoke(args=["export-annotations", "--what", "suggestions"])
        records = [json.loads(line) for line in exported.stdout.splitlines()]
        assert sorted(r["decoy"] for r in records) == [False, True, True, True]
        path.write_text(exported.stdout, encoding="utf-8")
        result = runner.invoke(args=["validation", "create-round", "s", "--items", str(path)])
        assert result.exit_code == 0, result.output
        assert "Created round 's': 1 items" in result.output
        assert "3 decoy suggestion(s) or annotation(s) made from one" in result.output


def report_real_taken(report: dict) -> int:
    """Annotations made from the real suggestion, from the figures' own counts."""
    return round(report["documents"][0]["error_sentences"] * WORKERS)


# --- recall estimate, planner and study-report keys on a small study --------------------

SPANS = {  # on "Anna met Bob. They talked." / "Then it rained."
    "anna": (0, 0, 4, "new-person"),
    "bob": (0, 5, 12, "missing-info"),
    "talked": (0, 14, 26, "repetition"),
    "then": (1, 0, 4, "abrupt-transition"),
    "rained": (1, 8, 15, "ungrammatical"),
}
TEXTS = ("Anna met Bob. They talked.", "Then it rained.")
MARKED = {  # what each annotator marked on every regular document
    "import:a": ("anna", "talked", "then"),
    "import:b": ("anna", "bob", "then"),
    "import:c": ("talked", "rained", "then"),
    "model:judge": ("anna", "talked", "rained"),
}


def _record(document: str, annotator: str, key: str) -> dict:
    paragraph, start, end, category = SPANS[key]
    text = TEXTS[paragraph][start:end]
    span = {"paragraph_id": paragraph, "start": start, "end": end, "text": text}
    return {"document_id": document, "annotator_id": annotator, "category": category, "span": span}


@pytest.fixture
def small_study(app, tmp_path):
    """Four documents and a planted check, each read by three humans and a model."""
    add_documents(4, checks=1)
    lines = [
        json.dumps(_record(document, annotator, key))
        for document in ("doc-000", "doc-001", "doc-002", "doc-003")
        for annotator, keys in MARKED.items()
        for key in keys
    ]
    # On the check, everyone but c finds the planted error (and marks nothing else).
    lines += [json.dumps(_record("check-004", a, "anna")) for a in MARKED if a != "import:c"]
    lines.append(json.dumps(_record("check-004", "import:c", "then")))
    path = tmp_path / "readings.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = app.test_cli_runner().invoke(args=["import-annotations", str(path)])
    assert result.exit_code == 0, result.output
    return app.test_cli_runner()


def test_recall_estimate_command_and_study_report(small_study):
    runner = small_study
    report = _json(runner, "recall-estimate")
    assert set(report) >= {"method", "documents", "study", "planted"}
    assert report["method"] == "loglinear-mt"  # four readers per document
    # Per document: five distinct errors found (the judge's marks are readings too).
    assert [d["found"] for d in report["documents"]] == [5, 5, 5, 5]
    study = report["study"]
    assert study["found"] == 20 and study["estimated"] >= 20
    low, high = study["ci95"]
    assert 20 <= low <= study["estimated"] <= high
    assert study["share_found"] == pytest.approx(100 * 20 / study["estimated"])
    # The check's one planted error ("Anna"), found by every reader the figures count (c,
    # who missed it, failed the check and is left out): estimated 1 of 1.
    assert report["planted"] == {"planted": 1, "estimated": pytest.approx(1.0), "ci95": [1, 1]}
    chapman = _json(runner, "recall-estimate", "--method", "chao")
    assert chapman["method"] == "chao"

    full = _json(runner, "study-report")
    assert full["recall_estimate"] == study
    assert full["suggestion_arms"] is None
    assert full["decoys"]["shown"] == 0 and full["decoys"]["rate"]["value"] is None
    table = runner.invoke(args=["study-report"]).stdout
    assert "estimated (capture-recapture)" in table
    rows = list(
        csv.reader(io.StringIO(runner.invoke(args=["study-report", "--format", "csv"]).stdout))
    )
    assert ["recall_estimate", "found", "", "", "20"] in rows

    text = runner.invoke(args=["recall-estimate"]).stdout
    assert "method loglinear-mt" in text and "doc-003" in text
    rows = list(
        csv.reader(io.StringIO(runner.invoke(args=["recall-estimate", "--format", "csv"]).stdout))
    )
    assert rows[0] == ["section", "key", "value", "ci95_low", "ci95_high"]
    assert ["study_found", "study", "20", "", ""] in rows


def test_judge_report_for_an_imported_annotator(small_study):
    report = _json(small_study, "judge-report", "--judge", "model:judge", "--epsilon", "0.2")
    # c failed the attention check and counts in no figure: the humans are a and b.
    assert (report["documents"], report["humans"]) == (4, 2)
    # Per document, the judge's spans matched, summed over the humans: against a, anna and
    # talked (2 of 3); against b, anna (1 of 3) -> precision 3 / 6; recall alike.
    assert report["overall"]["precision"]["value"] == pytest.approx(50.0)
    assert report["overall"]["recall"]["value"] == pytest.approx(50.0)
    assert report["per_category"]["new-person"]["recall"]["value"] == pytest.approx(100.0)
    assert report["human_human"]["f1"]["value"] is not None
    assert report["alt_test"] is None
    assert "30 documents or more" in report["alt_test_reason"]


def test_plan_study_command(small_study):
    runner = small_study
    plan = _json(
        runner,
        "plan-study",
        "--figure",
        "error-rate",
        "--half-width",
        "20",
        "--hourly-rate",
        "12",
        "--fee-percent",
        "33",
    )
    assert (plan["figure"], plan["half_width"]) == ("error-rate", 20.0)
    assert [p["annotators_per_document"] for p in plan["plans"]] == [2, 3, 4, 5, 6]
    for row in plan["plans"]:
        assert set(row) >= {
            "annotators_per_document",
            "documents",
            "expected_half_width",
            "worker_minutes",
            "cost",
        }
        assert row["expected_half_width"] <= 20
    # Three readers count (c failed the check): 4-6 are extrapolated.
    assert [p["extrapolated"] for p in plan["plans"]] == [False, False, True, True, True]
    table = runner.invoke(args=["plan-study", "--figure", "booookscore", "--half-width", "5"])
    assert table.exit_code == 0 and "annotators/doc" in table.stdout
    text = runner.invoke(
        args=["plan-study", "--figure", "error-rate", "--half-width", "20", "--format", "csv"]
    ).stdout
    assert text.startswith("figure,half_width,annotators_per_document,documents,")
    gamma = _json(runner, "plan-study", "--figure", "gamma", "--half-width", "0.2")
    # Gamma needs two readings of a document: known for 2 and 3 annotators only.
    assert [p["extrapolated"] for p in gamma["plans"]] == [False, False, True, True, True]
    refused = runner.invoke(args=["plan-study", "--figure", "precision", "--half-width", "5"])
    assert refused.exit_code == 1 and "judged annotations in a validation round" in refused.output
    bad = runner.invoke(args=["plan-study", "--figure", "kappa", "--half-width", "5"])
    assert bad.exit_code == 2


def _token(client) -> str:
    page = client.get("/research/analyses")
    assert page.status_code == 200, page.headers.get("Location")
    return re.search(r'name="csrf_token" value="([^"]+)"', page.get_data(as_text=True))[1]


def _counting(monkeypatch, name: str) -> list[str]:
    """Count the calls of an analysis the queue's kinds make (by the thread that made
    them): the page's request thread must never be one."""
    threads: list[str] = []
    original = getattr(analysis_jobs, name)

    def counted(*args, **kwargs):
        threads.append(threading.current_thread().name)
        return original(*args, **kwargs)

    monkeypatch.setattr(analysis_jobs, name, counted)
    return threads


def test_the_analyses_page_never_computes_and_shares_results_with_the_command(
    small_study, app, researcher_client, monkeypatch
):
    # The queue does not answer (no worker, no Redis): what the page asks for waits.
    app.config["QUEUE_URL"] = "redis://127.0.0.1:9/0"
    calls = _counting(monkeypatch, "compute_recall_estimate")
    token = _token(researcher_client)
    asked = researcher_client.post(
        "/research/analyses", data={"csrf_token": token, "analysis": "recall"}
    )
    assert asked.status_code == 303 and calls == []
    address = asked.headers["Location"]
    key = re.search(r"recall=([0-9a-f]{64})#recall-heading$", address)[1]
    page = researcher_client.get(address)
    assert page.status_code == 200 and calls == []
    text = page.get_data(as_text=True)
    assert 'data-analysis-pending="recall"' in text and "is being computed" in text
    assert f'href="/research/analyses?recall={key}#recall-heading">refresh the page' in text
    assert 'data-module="analyses"' in text and "doc-003" not in text
    assert 'data-analysis-queue="unreachable"' in text
    status = researcher_client.get(f"/research/analyses/status?recall={key}").get_json()
    assert status == {
        "analyses": {"recall": {"state": "pending", "computed_at": None}},
        "ready": False,
    }
    download = json.loads(researcher_client.get("/research/export/study-report.json").data)
    assert download["recall_estimate"]["pending"] is True and calls == []

    # The command finds nothing stored under the page's key: computes it, stores it.
    report = _json(small_study, "recall-estimate")
    assert len(calls) == 1
    shown = researcher_client.get(address).get_data(as_text=True)
    assert "doc-003" in shown and 'data-analysis-done="recall"' in shown
    assert "being computed" not in shown
    status = researcher_client.get(f"/research/analyses/status?recall={key}").get_json()
    assert status["ready"] is True and status["analyses"]["recall"]["state"] == "done"
    again = researcher_client.post(
        f"/research/analyses?recall={key}", data={"csrf_token": token, "analysis": "recall"}
    )
    assert again.headers["Location"] == address and len(calls) == 1
    download = json.loads(researcher_client.get("/research/export/study-report.json").data)
    assert download["recall_estimate"] == report["study"]
    assert _json(small_study, "study-report")["recall_estimate"] == report["study"]
    assert len(calls) == 1  # the page, the download and both commands: one computation

    bad = researcher_client.post(
        "/research/analyses",
        data={"csrf_token": token, "analysis": "plan", "figure": "error-rate", "half_width": "x"},
    )
    assert bad.status_code == 422 and b"half width: give a number" in bad.data
    assert (
        researcher_client.post("/research/analyses", data={"analysis": "recall"}).status_code == 400
    )


def test_new_readings_are_a_new_key_never_the_old_value(small_study, app, tmp_path):
    recall = analysis_jobs.asked("recall", {"method": None})
    assert analysis_jobs.asked("recall", {"method": None}).key == recall.key  # stable
    assert analysis_jobs.asked("recall", {"method": "chao"}).key != recall.key
    before = _json(small_study, "recall-estimate")
    # A fourth human's reading of doc-000 (a submitted session): the key moves on.
    path = tmp_path / "more.jsonl"
    path.write_text(json.dumps(_record("doc-000", "import:d", "anna")) + "\n", encoding="utf-8")
    result = small_study.invoke(args=["import-annotations", str(path)])
    assert result.exit_code == 0, result.output
    assert analysis_jobs.asked("recall", {"method": None}).key != recall.key
    after = small_study.invoke(args=["recall-estimate", "--format", "json"])
    assert after.exit_code == 0 and before["method"] == json.loads(after.stdout)["method"]
    assert "Read from analysis_results" not in after.stderr  # computed for the new readings
    rows = db.session.scalars(
        db.select(AnalysisResult.status).where(AnalysisResult.kind == "recall_estimate")
    ).all()
    assert rows == ["done", "done"]  # the old key's value stays, for the old readings


def test_the_background_computes_what_the_page_asks_and_the_command_reads_it(
    small_study, researcher_client, monkeypatch
):
    calls = _counting(monkeypatch, "compute_judge_report")
    token = _token(researcher_client)
    form = {"csrf_token": token, "analysis": "judge", "judge": "model:judge", "unit": "span"}
    asked = researcher_client.post("/research/analyses", data={**form, "epsilon": "0.2"})
    assert asked.status_code == 303
    wait_for_background()
    assert calls == ["analyses"]  # the queue's thread, not the request's
    page = researcher_client.get(asked.headers["Location"]).get_data(as_text=True)
    assert "model:judge against 2 humans on 4 documents" in page
    assert 'value="model:judge"' in page and 'value="0.2"' in page  # the form as asked
    result = small_study.invoke(
        args=["judge-report", "--judge", "model:judge", "--epsilon", "0.2", "--format", "json"]
    )
    assert result.exit_code == 0 and calls == ["analyses"]
    assert "Read from analysis_results" in result.stderr
    assert json.loads(result.stdout)["humans"] == 2

    nobody = researcher_client.post(asked.headers["Location"], data={**form, "judge": "nobody"})
    wait_for_background()
    shown = researcher_client.get(nobody.headers["Location"]).get_data(as_text=True)
    assert 'data-analysis-problem="judge"' in shown and "No suggestions from source" in shown
    assert "model:judge against 2 humans" not in shown  # the address names the new key only
    refused = small_study.invoke(args=["judge-report", "--judge", "nobody"])
    assert refused.exit_code == 1 and "No suggestions from source 'nobody'" in refused.output
    assert len(calls) == 2  # the command read the problem the queue stored


def test_suggestion_arms_in_study_report(make_app, tmp_path):
    # Show-arm workers accept the one suggestion ("Bob"); none-arm workers mark "Anna" and
    # "Then it rained." themselves: per reading 1 and 2 error units of 3 sentences.
    app = make_app(
        {"GAMMA_SAMPLES": 2}, annotators_per_document=100, suggestion_arms="{show: 1, none: 1}"
    )
    client, runner = app.test_client(), app.test_cli_runner()
    with app.app_context():
        add_documents(2)
        items = [{**REAL[0], "id": f"real-{d}", "document_id": d} for d in ("doc-000", "doc-001")]
        path = tmp_path / "real.jsonl"
        path.write_text("\n".join(json.dumps(i) for i in items) + "\n", encoding="utf-8")
        result = runner.invoke(args=["import-suggestions", str(path), "--source", "m"])
        assert result.exit_code == 0, result.output
        arms = []
        for number in range(8):
            document = f"doc-00{number // 4}"
            token = start(client, document, annotator=f"w{number}")
            assert client.get(f"/s/{token}").status_code == 200
            suggestions = _suggestions(client, token)
            arms.append("show" if suggestions else "none")
            for suggestion in suggestions:
                _decide(client, token, suggestion, take=True, edit=False)
            for key in ("anna", "rained") if not suggestions else ():
                paragraph, begin, end, category = SPANS[key]
                if paragraph:
                    moved = move(client, token, 1)
                    assert moved.status_code == 200, moved.data
                text = TEXTS[paragraph][begin:end]
                span = {"paragraph_id": paragraph, "start": begin, "end": end, "text": text}
                body = {"id": str(uuid.uuid4()), "category": category, "span": span}
                assert save(client, token, body).status_code == 201
            if suggestions:
                moved = move(client, token, 1)
                assert moved.status_code == 200, moved.data
            assert submit(client, token).status_code == 200
        assert arms.count("show") == 4 and arms[:4].count("show") == 2

        report = _json(runner, "study-report")["suggestion_arms"]
        figures = {"accepted", "errors_per_sentence", "booookscore", "agreement"}
        assert set(report["arms"]) == {"show", "none"}
        assert figures | {"seconds_per_paragraph"} == set(report["arms"]["show"])
        show, none = report["arms"]["show"], report["arms"]["none"]
        assert (show["accepted"], none["accepted"]) == (100.0, None)
        assert show["errors_per_sentence"] == pytest.approx(100 / 3)
        assert none["errors_per_sentence"] == pytest.approx(200 / 3)
        assert show["booookscore"] == pytest.approx(200 / 3)
        assert none["booookscore"] == pytest.approx(100 / 3)
        assert (show["agreement"], none["agreement"]) == (pytest.approx(100), pytest.approx(100))
        difference = report["difference"]["booookscore"]
        assert difference["value"] == pytest.approx(100 / 3)
        assert difference["ci95"] == pytest.approx([100 / 3, 100 / 3])  # alike documents
        assert report["difference"]["accepted"]["value"] is None
        table = runner.invoke(args=["study-report"]).stdout
        assert "Suggestion arms (show - none, bootstrap 95% CI):" in table

    # The Analyses page shows what study-report stored under the same key (requests in
    # their own app context: this one remembers its earlier requests' anonymous user).
    with app.app_context():
        researcher = add_account("arms@example.org")  # an editor of the default study
        db.session.commit()
        console = app.test_client()
        log_in_directly(console, researcher)
        db.session.remove()
    asked = console.post(
        "/research/analyses", data={"csrf_token": _token(console), "analysis": "arms"}
    )
    assert asked.status_code == 303
    page = console.get(asked.headers["Location"]).get_data(as_text=True)
    assert 'data-analysis-done="arms"' in page
    booookscore = re.search(r'<th scope="row">booookscore</th>(.*?)</tr>', page, re.S)[1]
    assert "66.7" in booookscore and "33.3" in booookscore
    with app.app_context():  # the page found study-report's result: no second key
        kinds = db.session.scalars(db.select(AnalysisResult.kind)).all()
        assert kinds.count("suggestion_arms") == 1
        db.session.remove()


def test_plan_study_for_validation_precision(small_study, tmp_path):
    runner = small_study
    items = tmp_path / "export.jsonl"
    exported = runner.invoke(args=["export-annotations", "--submitted-only"]).stdout
    items.write_text(exported, encoding="utf-8")
    result = runner.invoke(args=["validation", "create-round", "p", "--items", str(items)])
    assert result.exit_code == 0, result.output
    rows = db.session.execute(db.select(ValidationItem.external_id, ValidationItem.span_text))
    # Validators agree with every span but "Then" (abrupt-transition).
    lines = [
        json.dumps(
            {
                "item_id": item,
                "validator": "v1",
                "verdict": "disagree" if text == "Then" else "agree",
            }
        )
        for item, text in rows
    ]
    judgments = tmp_path / "judgments.jsonl"
    judgments.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = runner.invoke(args=["validation", "import-judgments", "p", str(judgments)])
    assert result.exit_code == 0, result.output
    plan = _json(runner, "plan-study", "--figure", "precision", "--half-width", "5")
    assert plan["figure"] == "precision" and len(plan["plans"]) == 5
    # Readings of a and b hold precision 2/3, the judge's 3/3 (c, who failed the check,
    # has no items): defined for 1-3 annotators, and alike on every document.
    assert [p["extrapolated"] for p in plan["plans"]] == [False, False, True, True, True]
    assert all(p["expected_half_width"] <= 5 for p in plan["plans"])
