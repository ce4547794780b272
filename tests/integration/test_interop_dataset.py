"""`flask export-dataset DIR` and the researcher's dataset.zip (issue 33, point 1), on SQLite
and PostgreSQL: the real `datasets` library, offline, loads every configuration of the
folder and gets exactly what the app exported (annotations as export-annotations writes
them, ids of people pseudonymised with the app's key unless --keep-ids); the card is
generated from the study."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest
import yaml

from app.interop.pseudonyms import Pseudonyms
from tests.support.interop import ALICE, BOB, offline_datasets
from tests.support.interop_app import judge_some, run, seed_study, severity_app

CONFIGS = ("annotations", "documents", "sessions", "judgments")
VALIDATOR = "prolific:60ffeeddccbbaa9988776655"


@pytest.fixture
def app(database_uri, tmp_path):
    """The app with the default taxonomy plus severities (minor, major)."""
    with severity_app(database_uri, tmp_path) as application:
        yield application


@pytest.fixture
def datasets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The `datasets` library, offline, caching under tmp_path (tests.support.interop)."""
    return offline_datasets(tmp_path, monkeypatch)


def rows(folder: Path, config: str) -> list[dict]:
    text = (folder / "data" / f"{config}.jsonl").read_text("utf-8")
    return [json.loads(line) for line in text.splitlines()]


def card(folder: Path) -> tuple[dict, str]:
    _, front, prose = (folder / "README.md").read_text("utf-8").split("---\n", 2)
    return yaml.safe_load(front), prose


def test_load_dataset_loads_every_configuration_as_exported(app, runner, tmp_path, datasets):
    before = seed_study(runner, tmp_path)
    judge_some({"Łukasz": "agree", "Zoë": "disagree"}, VALIDATOR)
    folder = tmp_path / "dataset"
    result = run(runner, "export-dataset", folder, "--license", "cc-by-4.0")
    assert "data/annotations.jsonl: 10 rows" in result.output
    cache = str(tmp_path / "cache")
    assert sorted(datasets.get_dataset_config_names(str(folder))) == sorted(CONFIGS)
    for config in CONFIGS:
        loaded = datasets.load_dataset(str(folder), config, cache_dir=cache)
        assert list(loaded) == ["train"]
        assert loaded["train"].to_list() == rows(folder, config), config
    default = datasets.load_dataset(str(folder), cache_dir=cache)["train"].to_list()
    # The annotations are export-annotations' records, the annotator pseudonymised.
    hide = Pseudonyms(app.config["SECRET_KEY"])
    assert default == [{**r, "annotator_id": hide(r["annotator_id"])} for r in before]
    sessions = rows(folder, "sessions")
    assert {s["annotator_id"] for s in sessions} == {hide(ALICE), hide(BOB)}
    judgments = rows(folder, "judgments")
    assert [(j["item_id"], j["verdict"], j["validator"]) for j in judgments] == [
        ("it-1", "agree", hide(VALIDATOR)), ("it-2", "disagree", hide(VALIDATOR))]  # fmt: skip
    assert judgments[0]["annotator_id"] == hide(ALICE)
    documents = rows(folder, "documents")
    assert [d["document_id"] for d in documents] == ["ch-1", "ch-2"]
    text = (folder / "README.md").read_text("utf-8")
    for person in (ALICE, BOB, VALIDATOR):
        assert person.split(":")[1] not in text + json.dumps(default + sessions + judgments)


def test_the_card_is_generated_from_the_study(app, runner, tmp_path):
    seed_study(runner, tmp_path)
    folder = tmp_path / "dataset"
    run(runner, "export-dataset", folder, "--license", "cc-by-4.0")
    meta, prose = card(folder)
    assert meta["license"] == "cc-by-4.0"
    assert meta["size_categories"] == ["n<1K"]
    default = {"config_name": "annotations", "data_files": "data/annotations.jsonl",
               "default": True}  # fmt: skip
    assert meta["configs"][0] == default
    assert [c["config_name"] for c in meta["configs"]] == ["annotations", "documents", "sessions"]
    assert "New person not introduced" in prose  # the taxonomy, with its definitions
    assert "Unicode code points" in prose and "end exclusive" in prose
    assert "judgments" in prose  # a configuration without rows is named as left out
    assert "BooookScore" in prose  # study-report's figures with their definitions


def test_keep_ids_license_and_folder_are_checked(app, runner, tmp_path):
    seed_study(runner, tmp_path)
    run(runner, "export-dataset", tmp_path / "kept", "--keep-ids")
    assert {r["annotator_id"] for r in rows(tmp_path / "kept", "annotations")} == {ALICE, BOB}
    result = runner.invoke(args=["export-dataset", str(tmp_path / "x"), "--license", "mine"])
    assert result.exit_code == 2 and "--license" in result.output
    result = runner.invoke(args=["export-dataset", str(tmp_path / "kept")])
    assert result.exit_code == 2 and "not a new or empty folder" in result.output


def test_the_download_is_the_same_dataset_as_a_zip(app, runner, tmp_path, researcher_client):
    seed_study(runner, tmp_path)
    run(runner, "export-dataset", tmp_path / "dataset")
    response = researcher_client.get("/research/export/dataset.zip")
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(response.get_data()))
    names = sorted(archive.namelist())
    assert names == ["dataset/README.md", "dataset/data/annotations.jsonl",
                     "dataset/data/documents.jsonl", "dataset/data/sessions.jsonl"]  # fmt: skip
    for name in names:
        path = tmp_path / name
        assert archive.read(name) == path.read_bytes(), name
