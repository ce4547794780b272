"""Defects found on BooookScore's full release, reproduced on the excerpts in
tests/fixtures/booookscore (issue 16): list explanations, null books, duplication pairs."""

from __future__ import annotations

import json

from app.core.extensions import db
from app.models import ValidationItem, ValidationJudgment, ValidationRound


def _round(name: str) -> ValidationRound:
    db.session.expire_all()
    return db.session.scalars(db.select(ValidationRound).filter_by(name=name)).one()


def test_list_explanations_are_joined(app, runner, booookscore_sample):
    path = booookscore_sample / "validation-judgments-list-explanations.json"
    data = json.loads(path.read_text("utf-8"))
    lists = {
        " ".join(a["explanation"])
        for entry in data.values()
        for a in entry["annotations"]
        if isinstance(a["explanation"], list)
    }
    total = sum(len(entry["annotations"]) for entry in data.values())
    assert lists  # the fixture has list explanations
    result = runner.invoke(args=["validation", "create-round", "lx", "--items", str(path)])
    assert result.exit_code == 0, result.output
    result = runner.invoke(args=["validation", "import-judgments", "lx", str(path)])
    assert result.exit_code == 0, result.output
    assert f"Imported {total} judgment(s)" in result.stdout
    stored = set(db.session.scalars(db.select(ValidationJudgment.explanation)))
    assert lists <= stored


def test_round_page_labels_each_alpha(researcher_client, runner, booookscore_sample, tmp_path):
    path = booookscore_sample / "validation-judgments-list-explanations.json"
    book = next(iter(json.loads(path.read_text("utf-8"))))
    runner.invoke(args=["validation", "create-round", "lx", "--items", str(path)])
    runner.invoke(args=["validation", "import-judgments", "lx", str(path)])
    second = tmp_path / "second.jsonl"
    lines = [{"item_id": f"{book}#{n}", "validator": "v2", "verdict": "agree"} for n in (0, 1, 2)]
    second.write_text("\n".join(json.dumps(line) for line in lines), "utf-8")
    result = runner.invoke(args=["validation", "import-judgments", "lx", str(second)])
    assert result.exit_code == 0, result.output
    report = researcher_client.get("/research/rounds/lx/report.json").get_json()
    assert report["agreement"]["items_with_multiple"] == 3
    assert {"krippendorff_alpha_ordinal", "krippendorff_alpha_valid", "krippendorff_alpha"} <= set(
        report["agreement"]
    )
    html = researcher_client.get("/research/rounds/lx").get_data(as_text=True)
    assert "Ordinal, agree &gt; partial &gt; disagree (main figure)" in html
    assert "Valid vs not valid, as precision counts them" in html
    assert "Nominal, three verdicts" in html


def test_model_file_with_a_null_book_is_detected_and_the_book_skipped(
    app, runner, booookscore_sample
):
    human = booookscore_sample / "human-annotations.json"
    model = booookscore_sample / "model-annotations-with-null.json"
    data = json.loads(model.read_text("utf-8"))
    nulls = [book for book, entry in data.items() if entry is None]
    n_model = sum(len(entry) for entry in data.values() if entry is not None)
    assert nulls
    result = runner.invoke(
        args=["validation", "create-round", "mn", "--items", str(human), "--items", str(model)]
    )
    assert result.exit_code == 0, result.output
    assert "not valid JSON" not in result.output
    for book in nulls:
        assert f"{model.name}:{book}: null: skipped" in result.output
    sources = {
        source: count
        for source, count in db.session.execute(
            db.select(ValidationItem.source, db.func.count()).group_by(ValidationItem.source)
        )
    }
    assert sources["model"] == n_model


def test_duplication_pair_with_the_same_text_is_placed_twice(app, runner, tmp_path):
    sentence = "Proctor deals with school issues."
    items = tmp_path / "items.jsonl"
    record = {
        "source": "human",
        "document_id": "dup",
        "document": {"text": f"{sentence} He sleeps.\n\nLater, {sentence}"},
        "span": {"text": sentence},
        "paired_span": {"text": sentence},
        "category": "duplication",
    }
    items.write_text(json.dumps(record), "utf-8")
    result = runner.invoke(args=["validation", "create-round", "dup", "--items", str(items)])
    assert result.exit_code == 0, result.output
    assert "Ambiguous spans (first occurrence used): 0" in result.output
    item = db.session.scalars(db.select(ValidationItem)).one()
    assert (item.paired_paragraph_id, item.paired_start) == (0, 0)
    assert (item.paragraph_id, item.span_start) == (1, len("Later, "))
    assert item.span_text == item.paired_text == sentence
