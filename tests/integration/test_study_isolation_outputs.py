"""Two studies on one server never see each other's data in the outputs of issues 32 and
33 (issue 30): judge-report, recall-estimate, export-dataset, payments and the W3C and
brat exports of a study hold its documents, workers and model only, each command taking
`--study SLUG` (the default study without it), and the console's downloads are the
default study's. On SQLite and PostgreSQL.

The default study is tests/support/interop.py's (documents ch-1, ch-2; workers ALICE and
BOB); the study `other` holds the same texts as ot-1 and ot-2, read by two other workers,
and the suggestions of a model `other-model` that only it has."""

from __future__ import annotations

import csv
import io
import json
import zipfile
from pathlib import Path

import pytest

from tests.support.interop import ALICE, BOB, DOCUMENTS, study_records
from tests.support.interop_app import run, seed_study, severity_app

OTHER = "other"
RENAMED = {"ch-1": "ot-1", "ch-2": "ot-2"}
OTHER_ALICE = "prolific:6a0b1c2d3e4f506172839405"
OTHER_BOB = "mturk:Z9Y8X7W6V5U4T3"
WORKERS = {ALICE: OTHER_ALICE, BOB: OTHER_BOB}
MODEL = "other-model"


@pytest.fixture
def app(database_uri, tmp_path):
    """The app with the default taxonomy plus severities (minor, major)."""
    with severity_app(database_uri, tmp_path) as application:
        yield application


def seed_other_study(runner, folder: Path, taxonomy: Path) -> None:
    """The study `other`: the default study's texts and annotations under other document
    ids and workers, and suggestions of its own model."""
    folder.mkdir()
    run(runner, "create-study", OTHER, "--taxonomy", taxonomy)
    documents = {RENAMED[key]: texts for key, texts in DOCUMENTS.items()}
    (folder / "documents.json").write_text(json.dumps(documents, ensure_ascii=False), "utf-8")
    run(runner, "import-documents", folder / "documents.json", "--study", OTHER)
    records = [
        {**r, "document_id": RENAMED[r["document_id"]], "annotator_id": WORKERS[r["annotator_id"]],
         "platform": WORKERS[r["annotator_id"]].partition(":")[0]}
        for r in study_records()
    ]  # fmt: skip
    source = folder / "study.jsonl"
    source.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), "utf-8")
    run(runner, "import-annotations", "--format", "jsonl", source, "--study", OTHER)
    items = [
        {"id": "m-1", "document_id": "ot-1", "category": "new-person", "span": {"text": "Łukasz"}},
        {"id": "m-2", "document_id": "ot-2", "category": "missing-info", "span": {"text": "café"}},
    ]
    suggestions = folder / "suggestions.jsonl"
    suggestions.write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items))
    run(runner, "import-suggestions", suggestions, "--source", MODEL, "--format", "jsonl",
        "--study", OTHER)  # fmt: skip


@pytest.fixture
def two_studies(app, runner, tmp_path):
    seed_study(runner, tmp_path)
    seed_other_study(runner, tmp_path / "other", Path(app.config["TAXONOMY_PATH"]))
    return runner


def _json(runner, *args) -> dict:
    return json.loads(run(runner, *args, "--format", "json").stdout)


def _study(*args: str, study: str | None) -> tuple[str, ...]:
    return (*args, "--study", study) if study else args


@pytest.mark.parametrize(
    ("study", "own", "foreign"),
    [(None, set(RENAMED), set(RENAMED.values())), (OTHER, set(RENAMED.values()), set(RENAMED))],
)
def test_each_studys_outputs_hold_its_own_documents_only(
    two_studies, tmp_path, study, own, foreign
):
    runner = two_studies
    workers = set(WORKERS.values()) if study else set(WORKERS)
    others = set(WORKERS) if study else set(WORKERS.values())

    recall = _json(runner, *_study("recall-estimate", study=study))
    assert {d["document_id"] for d in recall["documents"]} == own

    dataset = tmp_path / f"dataset-{study}"
    run(runner, *_study("export-dataset", str(dataset), "--keep-ids", study=study))
    for config in ("documents", "annotations", "sessions"):
        lines = (dataset / "data" / f"{config}.jsonl").read_text("utf-8").splitlines()
        rows = [json.loads(line) for line in lines]
        assert {r["document_id"] for r in rows} == own, config
    annotations = (dataset / "data" / "annotations.jsonl").read_text("utf-8")
    assert {json.loads(line)["annotator_id"] for line in annotations.splitlines()} == workers

    pay = tmp_path / f"pay-{study}"
    run(runner, *_study("payments", "--platform", "prolific", "--output", str(pay), study=study))
    paid = {
        r["worker_id"] for r in csv.DictReader(io.StringIO((pay / "decisions.csv").read_text()))
    }
    assert paid == {w.partition(":")[2] for w in workers if w.startswith("prolific:")}

    w3c = tmp_path / f"w3c-{study}.jsonl"
    args = ("export-annotations", "--format", "w3c", "--keep-ids", "--output", str(w3c))
    run(runner, *_study(*args, study=study))
    sources = {json.loads(line)["target"]["source"] for line in w3c.read_text().splitlines()}
    assert sources == {f"urn:falte:{study or 'default'}:{document}" for document in own}

    brat = tmp_path / f"brat-{study}"
    run(runner, *_study("export-annotations", "--format", "brat", "--output", str(brat),
                        study=study))  # fmt: skip
    names = {path.stem for path in brat.rglob("*.ann")}
    assert names == own and not names & foreign

    # The model's suggestions are the other study's: its judge report scores them on its
    # documents; the default study knows no such model and names none.
    judged = runner.invoke(args=[*_study("judge-report", "--judge", MODEL, study=study)])
    if study:
        assert judged.exit_code == 0, judged.output
        report = _json(runner, *_study("judge-report", "--judge", MODEL, study=study))
        assert report["documents"] == 2 and report["humans"] == 2
    else:
        assert judged.exit_code == 1
        assert "sources of suggestions: none" in judged.output
    for worker in others:  # a worker of the other study is no annotator here
        refused = runner.invoke(args=[*_study("judge-report", "--judge", worker, study=study)])
        assert refused.exit_code == 1 and f"no annotator {worker!r}" in refused.output


def test_the_consoles_downloads_are_the_default_studys(two_studies, researcher_client):
    archive = zipfile.ZipFile(
        io.BytesIO(researcher_client.get("/research/export/dataset.zip").get_data())
    )
    documents = archive.read("dataset/data/documents.jsonl").decode().splitlines()
    assert {json.loads(line)["document_id"] for line in documents} == set(RENAMED)
    payments = zipfile.ZipFile(
        io.BytesIO(researcher_client.get("/research/export/payments-prolific.zip").get_data())
    )
    decisions = next(name for name in payments.namelist() if name.endswith("decisions.csv"))
    paid = {r["worker_id"] for r in csv.DictReader(io.StringIO(payments.read(decisions).decode()))}
    assert paid == {ALICE.partition(":")[2]}
    w3c = researcher_client.get("/research/export/annotations-w3c.jsonl")
    assert w3c.status_code == 200
    lines = w3c.get_data(as_text=True).splitlines()
    sources = {json.loads(line)["target"]["source"] for line in lines}
    assert sources == {f"urn:falte:default:{document}" for document in RENAMED}
