"""The studies' commands (issue 30): create-study, list-studies, study-status, and
`--study SLUG` on the commands that read or write a study's data (default: the default
study, so scripts written before keep working)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import urlsplit

from app.core.extensions import db
from app.studies import require_study

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "studies"
KEY = "test-secret-key"  # tests/support/apps.py make_test_config's SECRET_KEY


def _documents(tmp_path: Path, name: str, ids: list[str]) -> Path:
    path = tmp_path / name
    path.write_text(
        "".join(json.dumps({"id": i, "paragraphs": [f"Text of {i}.", "More."]}) + "\n" for i in ids)
    )
    return path


def test_create_study_checks_the_taxonomy_and_lists_it(app, runner):
    broken = runner.invoke(
        args=["create-study", "pilot", "--taxonomy", str(FIXTURES / "broken.yaml")]
    )
    assert broken.exit_code == 1
    assert "broken.yaml:5: categories[0].type: is required" in broken.output
    db.session.remove()
    assert db.session.scalar(db.text("SELECT COUNT(*) FROM studies WHERE slug = 'pilot'")) == 0
    bad_slug = runner.invoke(
        args=["create-study", "Pilot One", "--taxonomy", str(FIXTURES / "pilot-v1.yaml")]
    )
    assert bad_slug.exit_code == 1 and "lower-case letters" in bad_slug.output
    made = runner.invoke(
        args=[
            "create-study",
            "pilot",
            "--taxonomy",
            str(FIXTURES / "pilot-v1.yaml"),
            "--title",
            "The pilot",
        ]
    )
    assert made.exit_code == 0, made.output
    assert "/study/pilot/start" in made.output
    again = runner.invoke(
        args=["create-study", "pilot", "--taxonomy", str(FIXTURES / "pilot-v1.yaml")]
    )
    assert again.exit_code == 1 and "exists already" in again.output
    listed = runner.invoke(args=["list-studies"])
    assert listed.exit_code == 0, listed.output
    lines = [line.split() for line in listed.output.splitlines()[1:]]
    assert [line[:4] for line in lines] == [
        ["default", "annotation", "open", "0"],
        ["pilot", "annotation", "open", "0"],
    ]
    assert listed.output.rstrip().endswith("The pilot")
    closed = runner.invoke(args=["study-status", "pilot", "closed"])
    assert closed.exit_code == 0 and "is closed" in closed.output
    refused = runner.invoke(args=["study-status", "default", "archived"])
    assert refused.exit_code == 1 and "cannot become archived" in refused.output


def test_every_data_command_takes_study(app, runner, tmp_path):
    assert (
        runner.invoke(
            args=["create-study", "pilot", "--taxonomy", str(FIXTURES / "pilot-v1.yaml")]
        ).exit_code
        == 0
    )
    pilot_docs = _documents(tmp_path, "pilot.jsonl", ["p-1", "shared"])
    default_docs = _documents(tmp_path, "default.jsonl", ["shared"])
    result = runner.invoke(args=["import-documents", str(pilot_docs), "--study", "pilot"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(args=["import-documents", str(default_docs)])
    assert result.exit_code == 0, result.output
    unknown = runner.invoke(args=["import-documents", str(default_docs), "--study", "nope"])
    assert unknown.exit_code == 1
    assert "no study 'nope' (known studies: default, pilot)" in unknown.output
    # list-documents: the study's own documents, links into the study, signed for it.
    listed = runner.invoke(args=["list-documents", "--study", "pilot", "--annotator", "ann"])
    assert listed.exit_code == 0, listed.output
    assert "2 document(s)" in listed.output
    links = re.findall(r"http://127\.0\.0\.1:5000/\S+", listed.output)
    assert [urlsplit(link).path for link in links] == [
        "/study/pilot/annotate/p-1",
        "/study/pilot/annotate/shared",
        "/study/pilot/start",
    ]
    app.config["UNSIGNED_ANNOTATOR_LINKS"] = False
    client = app.test_client()
    for link in links:
        parts = urlsplit(link)
        assert client.get(parts.path, query_string=parts.query).status_code == 302, link
        # The same signature opens nothing in the default study.
        default_path = parts.path.removeprefix("/study/pilot")
        assert client.get(default_path, query_string=parts.query).status_code in (403, 404)
    assert "1 document(s)" in runner.invoke(args=["list-documents"]).output
    # Exports and the report per study.
    db.session.commit()
    client.get("/study/pilot/annotate/p-1", query_string={"PROLIFIC_PID": "w1"})
    sessions = runner.invoke(
        args=["export-annotations", "--what", "sessions", "--format", "csv", "--study", "pilot"]
    )
    assert sessions.exit_code == 0, sessions.output
    assert "prolific:w1" in sessions.output and "p-1" in sessions.output
    default_sessions = runner.invoke(args=["export-annotations", "--what", "sessions"])
    assert "prolific:w1" not in default_sessions.output
    report = runner.invoke(args=["study-report", "--format", "json", "--study", "pilot"])
    assert report.exit_code == 0, report.output
    assert sorted(d["document_id"] for d in json.loads(report.stdout)["documents"]) == [
        "p-1",
        "shared",
    ]
    default_report = json.loads(runner.invoke(args=["study-report", "--format", "json"]).stdout)
    assert [d["document_id"] for d in default_report["documents"]] == ["shared"]
    # Validation rounds are the study's: the same name in two studies.
    items = tmp_path / "items.jsonl"
    items.write_text(
        '{"id": "i1", "source": "human", "document_id": "shared", "span": {"text": "Text"}}\n'
    )
    for study in ("pilot", "default"):
        made = runner.invoke(
            args=["validation", "create-round", "r1", "--items", str(items), "--study", study]
        )
        assert made.exit_code == 0, made.output
    rounds = runner.invoke(
        args=["validation", "list-rounds", "--study", "pilot", "--annotator", "v"]
    )
    assert "/study/pilot/validate/r1" in rounds.output
    assert require_study("pilot").slug == "pilot"


def test_make_run_keeps_the_demo_in_a_study_of_its_own(app, runner):
    """The study commands of `make run`, run twice: the study `demo` is created, then
    refreshed; its documents never land in the default study."""
    root = Path(__file__).resolve().parents[2]
    recipe = (root / "Makefile").read_text(encoding="utf-8").split("\nrun:", 1)[1]
    recipe = recipe.split("\n\n", 1)[0]
    assert (
        '$(FLASK) create-study demo --taxonomy config/taxonomy.yaml --title "Demo study" --exist-ok'
        in recipe
    )
    assert "$(FLASK) import-documents data/demo --study demo" in recipe
    create = ["create-study", "demo", "--taxonomy", str(root / "config" / "taxonomy.yaml")]
    create += ["--title", "Demo study", "--exist-ok"]
    outputs = []
    for _ in range(2):
        made = runner.invoke(args=create)
        assert made.exit_code == 0, made.output
        outputs.append(made.output)
        imported = runner.invoke(
            args=["import-documents", str(root / "data" / "demo"), "--study", "demo"]
        )
        assert imported.exit_code == 0, imported.output
    assert outputs[0].startswith("Created study 'demo'")
    assert outputs[1].startswith("Refreshed study 'demo'")
    lines = runner.invoke(args=["list-studies"]).output.splitlines()[1:]
    documents = {line.split()[0]: line.split()[3] for line in lines}
    assert documents == {"default": "0", "demo": "5"}


def test_create_study_reads_the_taxonomy_from_standard_input(app, runner):
    """`--taxonomy -`: no file on the server (heroku run, docker-compose exec)."""
    made = runner.invoke(
        args=["create-study", "remote", "--taxonomy", "-"],
        input=(FIXTURES / "pilot-v1.yaml").read_bytes(),
    )
    assert made.exit_code == 0, made.output
    assert require_study("remote").title == "Pilot study"  # the taxonomy's title
    broken = runner.invoke(
        args=["create-study", "other", "--taxonomy", "-"],
        input=(FIXTURES / "broken.yaml").read_bytes(),
    )
    assert broken.exit_code == 1
    assert "<stdin>:5: categories[0].type: is required" in broken.output


def test_a_validation_study_names_the_study_it_judges(app, runner):
    taxonomy = str(FIXTURES / "pilot-v1.yaml")
    wrong = runner.invoke(
        args=["create-study", "check", "--taxonomy", taxonomy, "--judges", "default"]
    )
    assert wrong.exit_code == 1 and "only a validation study judges" in wrong.output
    made = runner.invoke(
        args=[
            *("create-study", "check", "--taxonomy", taxonomy),
            *("--kind", "validation", "--judges", "default"),
        ]
    )
    assert made.exit_code == 0, made.output
    study = require_study("check")
    assert study.kind == "validation"
    assert study.judges_study_id == require_study("default").id
