"""Creating rounds, importing judgments and the report, on both databases.

The BooookScore tests compute their expectations from the JSON files directly, not with
the project's code, so that the importers and the report are checked independently.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from app.core.extensions import db
from app.models import Document, ValidationItem, ValidationJudgment, ValidationRound
from tests.support.validation import (
    add_annotation,
    item_record,
    make_documents,
    make_session,
    write_jsonl,
)

VERDICT = {"Agree": "agree", "Partially agree": "partial", "Don't agree": "disagree"}


def _round(name: str) -> ValidationRound:
    db.session.expire_all()
    return db.session.scalars(db.select(ValidationRound).filter_by(name=name)).one()


def _items(name: str) -> list[ValidationItem]:
    return list(_round(name).items)


def _report(runner, name: str) -> dict:
    result = runner.invoke(args=["validation", "report", name, "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_booookscore_validation_file_round_trip(app, runner, booookscore_sample):
    path = booookscore_sample / "validation-judgments.json"
    data = json.loads(path.read_text("utf-8"))
    expected: dict[str, Counter] = {}
    for entry in data.values():
        for annotation in entry["annotations"]:
            counts = expected.setdefault(annotation["source"], Counter())
            counts[VERDICT[annotation["agreement"]]] += 1
    total = sum(sum(c.values()) for c in expected.values())

    result = runner.invoke(
        args=["validation", "create-round", "bs", "--items", str(path), "--seed", "7"]
    )
    assert result.exit_code == 0, result.output
    assert f"{total} items" in result.stdout
    assert "Rejected items: 0" in result.stdout
    items = _items("bs")
    assert len(items) == total
    # Every span and paired span is exactly the stored text at its offsets.
    paragraphs = {
        d.id: [p.text for p in d.paragraphs] for d in db.session.scalars(db.select(Document))
    }
    assert len(paragraphs) == len(data)  # the summaries were imported as documents
    for item in items:
        text = paragraphs[item.document_id][item.paragraph_id]
        assert text[item.span_start : item.span_end] == item.span_text
        if item.paired_text is not None:
            text = paragraphs[item.document_id][item.paired_paragraph_id]
            assert text[item.paired_start : item.paired_end] == item.paired_text
    assert sorted(i.order_key for i in items) == list(range(total))
    assert [i.external_id for i in items] != sorted(i.external_id for i in items)  # shuffled

    result = runner.invoke(args=["validation", "import-judgments", "bs", str(path)])
    assert result.exit_code == 0, result.output
    assert f"Imported {total} judgment(s)" in result.stdout

    report = _report(runner, "bs")
    assert report["items"] == report["judged_items"] == report["judgments"] == total
    assert set(report["by_source"]) == set(expected)
    for source, counts in expected.items():
        got = report["by_source"][source]
        n = sum(counts.values())
        assert (got["agree"], got["partial"], got["disagree"]) == (
            counts["agree"],
            counts["partial"],
            counts["disagree"],
        )
        assert got["judgments"] == n
        assert got["precision"] == pytest.approx((counts["agree"] + counts["partial"]) / n)
        assert got["strict_precision"] == pytest.approx(counts["agree"] / n)
        low, high = got["ci95"]
        assert low < got["precision"] < high
    reasons = Counter(
        r for e in data.values() for a in e["annotations"] for r in (a["reasons"] or [])
    )
    # The file's long wording of reason C matched the taxonomy's shorter reason C by letter.
    assert sum(report["reasons"].values()) == sum(reasons.values())
    assert set(report["by_document"]) == set(data)

    # Importing the same file again changes nothing.
    result = runner.invoke(args=["validation", "import-judgments", "bs", str(path)])
    assert result.exit_code == 0, result.output
    assert f"({total} already stored)" in result.stdout
    assert _report(runner, "bs")["judgments"] == total


def test_human_and_model_files_need_the_summaries(app, runner, booookscore_sample):
    model = booookscore_sample / "model-annotations.json"
    human = booookscore_sample / "human-annotations.json"
    result = runner.invoke(args=["validation", "create-round", "m", "--items", str(model)])
    assert result.exit_code == 1
    assert "not imported" in result.output
    assert "model files hold no summary" in result.output
    assert db.session.scalar(db.select(db.func.count(ValidationRound.id))) == 0
    assert db.session.scalar(db.select(db.func.count(Document.id))) == 0  # nothing written

    result = runner.invoke(
        args=["validation", "create-round", "hm", "--items", str(human), "--items", str(model)]
    )
    assert result.exit_code == 0, result.output
    human_data = json.loads(human.read_text("utf-8"))
    model_data = json.loads(model.read_text("utf-8"))
    n_human = sum(len(e["singles"]) + len(e["relations"]) for e in human_data.values())
    n_model = sum(len(e) for e in model_data.values())
    sources = Counter(i.source for i in _items("hm"))
    assert sources == {"human": n_human, "model": n_model}
    assert f"human: {n_human}" in result.stdout
    assert any(i.paired_text for i in _items("hm"))
    assert "Ambiguous spans" in result.stdout


def test_generic_items_located_ambiguous_and_rejected(app, runner, tmp_path):
    make_documents()
    path = write_jsonl(
        tmp_path / "items.jsonl",
        [
            item_record("one", "Nobody"),
            item_record("two", "Anna"),
            item_record("three", "Zed"),
            item_record("four", "x", document_id="nowhere"),
            item_record("five", "letter", None),
        ],
    )
    result = runner.invoke(args=["validation", "create-round", "g", "--items", str(path)])
    assert result.exit_code == 1
    assert "items.jsonl:line 3" in result.output and "not found" in result.output
    assert "items.jsonl:line 4" in result.output and "'nowhere' is not imported" in result.output
    assert "items.jsonl:line 5" in result.output and "source" in result.output
    assert db.session.scalar(db.select(db.func.count(ValidationRound.id))) == 0

    result = runner.invoke(
        args=[
            "validation",
            "create-round",
            "g",
            "--items",
            str(path),
            "--skip-rejected",
            "--source",
            "other",
            "--judgments-per-item",
            "3",
        ]
    )
    assert result.exit_code == 0, result.output
    assert "Rejected items: 2" in result.stdout
    assert "Ambiguous spans (first occurrence used): 2" in result.stdout
    assert "items.jsonl:line 2: span occurs 2 times" in result.stdout
    assert "items.jsonl:line 5: span occurs 2 times" in result.stdout
    items = {i.external_id: i for i in _items("g")}
    assert set(items) == {"one", "two", "five"}
    assert items["two"].ambiguous and (items["two"].span_start, items["two"].span_end) == (0, 4)
    assert items["five"].source == "other"
    assert items["one"].paragraph_id == 1
    round_ = _round("g")
    assert round_.judgments_per_item == 3
    assert round_.settings["reasons"][2] == "C. Not addressing issues that matter"
    assert round_.settings["partial_counts_as_valid"] is True


def test_inline_documents_are_imported_or_matched(app, runner, tmp_path):
    make_documents()
    path = write_jsonl(
        tmp_path / "items.jsonl",
        [
            {
                "source": "s",
                "document_id": "fresh",
                "document": {"text": "New text here.\n\nSecond one."},
                "span": {"text": "Second one."},
            },
            {
                "source": "s",
                "document_id": "doc-b",
                "document": {
                    "paragraphs": list(
                        ("Anna wrote a letter. Anna wrote a letter again.", "Nobody answered it.")
                    )
                },
                "span": {"text": "Nobody"},
            },
            {
                "source": "s",
                "document_id": "doc-a",
                "document": {"text": "Different text."},
                "span": {"text": "Different"},
            },
        ],
    )
    result = runner.invoke(args=["validation", "create-round", "inl", "--items", str(path)])
    assert result.exit_code == 1
    assert "line 3" in result.output and "already imported with a different text" in result.output

    result = runner.invoke(
        args=["validation", "create-round", "inl", "--items", str(path), "--skip-rejected"]
    )
    assert result.exit_code == 0, result.output
    assert "Documents imported: fresh" in result.stdout
    fresh = db.session.scalars(db.select(Document).filter_by(external_id="fresh")).one()
    assert [p.text for p in fresh.paragraphs] == ["New text here.", "Second one."]
    assert db.session.scalar(db.select(db.func.count(Document.id))) == 3


def test_our_export_becomes_human_items_linked_to_annotations(app, runner, tmp_path):
    make_documents()
    alice = make_session("doc-a", "alice", status="submitted")
    annotation = add_annotation(alice, 0, "Zoë", "new-person", occurrence=1)
    add_annotation(alice, 1, "he slept", "repetition", paired=(0, "Zoë smiled"))
    export = tmp_path / "export.jsonl"
    result = runner.invoke(args=["export-annotations", "--output", str(export)])
    assert result.exit_code == 0, result.output

    result = runner.invoke(args=["validation", "create-round", "ours", "--items", str(export)])
    assert result.exit_code == 0, result.output
    items = sorted(_items("ours"), key=lambda i: i.paragraph_id)
    assert [i.source for i in items] == ["human", "human"]
    assert {i.origin_annotator for i in items} == {"direct:alice"}
    assert items[0].annotation_id == annotation.id
    assert (items[0].span_start, items[0].span_end) == (annotation.span_start, annotation.span_end)
    assert items[0].labels == ["new-person"]
    assert items[1].paired_text == "Zoë smiled"


def test_sample_and_seed_make_the_same_round(app, runner, booookscore_sample):
    path = str(booookscore_sample / "validation-judgments.json")
    for name in ("s1", "s2"):
        args = ["validation", "create-round", name, "--items", path, "--sample", "20"]
        result = runner.invoke(args=[*args, "--seed", "42"])
        assert result.exit_code == 0, result.output
    first = [i.external_id for i in _items("s1")]
    assert len(first) == 20
    assert first == [i.external_id for i in _items("s2")]
    assert _round("s1").seed == 42
    result = runner.invoke(args=["validation", "create-round", "s1", "--items", path])
    assert result.exit_code == 1 and "already exists" in result.output
    result = runner.invoke(args=["validation", "create-round", "bad name", "--items", path])
    assert result.exit_code == 1 and "round name" in result.output
    result = runner.invoke(args=["validation", "list-rounds"])
    assert "s1" in result.stdout and "s2" in result.stdout


def test_import_judgments_jsonl_is_atomic_with_line_numbers(app, runner, tmp_path):
    make_documents()
    items = write_jsonl(
        tmp_path / "items.jsonl",
        [
            item_record("i1", "Nobody"),
            item_record("i2", "letter", "human"),
        ],
    )
    assert (
        runner.invoke(args=["validation", "create-round", "j", "--items", str(items)]).exit_code
        == 0
    )
    bad = write_jsonl(
        tmp_path / "bad.jsonl",
        [
            {"item_id": "i1", "validator": "v1", "verdict": "Agree"},
            {"item_id": "nope", "validator": "v1", "verdict": "agree"},
            {"item_id": "i2", "validator": "v1", "verdict": "maybe"},
            {"item_id": "i2", "validator": "v2", "verdict": "partial", "reasons": ["Z. Made up"]},
        ],
    )
    result = runner.invoke(args=["validation", "import-judgments", "j", str(bad)])
    assert result.exit_code == 1
    for line in ("line 2", "line 3", "line 4"):
        assert f"bad.jsonl:{line}" in result.output
    assert db.session.scalar(db.select(db.func.count(ValidationJudgment.id))) == 0

    good = write_jsonl(
        tmp_path / "good.jsonl",
        [
            {"item_id": "i1", "validator": "v1", "verdict": "Agree"},
            {
                "item_id": "i2",
                "validator": "v1",
                "verdict": "Don't agree",
                "reasons": ["C. Not addressing issues that matter (refer to standards)"],
                "explanation": "Clear enough.",
            },
            {"item_id": "i2", "validator": "v2", "verdict": "Partially agree", "reasons": ["A."]},
        ],
    )
    result = runner.invoke(args=["validation", "import-judgments", "j", str(good)])
    assert result.exit_code == 0, result.output
    report = _report(runner, "j")
    assert (report["agree"], report["partial"], report["disagree"]) == (1, 1, 1)
    assert report["by_source"]["gpt-4"]["precision"] == 1.0
    assert report["by_source"]["human"]["precision"] == 0.5
    assert report["reasons"] == {
        "A. Not relevant to span": 1,
        "C. Not addressing issues that matter": 1,
    }
    assert report["agreement"]["items_with_multiple"] == 1
    assert report["agreement"]["percent_agreement"] == 0.0
    # One pair (partial, disagree): every alpha is 1 - D_o / D_e = 1 - 1 = 0.
    assert report["agreement"]["krippendorff_alpha_ordinal"] == 0.0
    assert report["agreement"]["krippendorff_alpha_valid"] == 0.0
    assert report["agreement"]["krippendorff_alpha"] == 0.0
    table = runner.invoke(args=["validation", "report", "j"]).stdout
    assert "ordinal, agree > partial > disagree (main) 0.000" in table
    assert "valid vs not valid, as precision counts 0.000" in table

    changed = write_jsonl(
        tmp_path / "changed.jsonl",
        [{"item_id": "i1", "validator": "v1", "verdict": "disagree", "reasons": ["D. Other"]}],
    )
    result = runner.invoke(args=["validation", "import-judgments", "j", str(changed)])
    assert result.exit_code == 1 and "different judgment" in result.output


def test_report_formats_and_shape(app, runner, booookscore_sample):
    path = str(booookscore_sample / "validation-judgments.json")
    runner.invoke(args=["validation", "create-round", "r", "--items", path])
    runner.invoke(args=["validation", "import-judgments", "r", path])
    report = _report(runner, "r")
    # The counts of the whole round come first; each group has them too, and a CI.
    counts = ["judgments", "agree", "partial", "disagree", "precision", "strict_precision"]
    assert list(report) == [
        "round",
        "items",
        "judged_items",
        *counts,
        "by_source",
        "by_category",
        "by_annotator",
        "by_document",
        "reasons",
        "agreement",
    ]
    group_keys = {*counts, "ci95"}
    for group in ("by_source", "by_category", "by_document"):
        assert report[group]
        assert all(set(stats) == group_keys for stats in report[group].values())
    assert report["by_annotator"] == {}  # BooookScore items name no annotator
    # Multi-label items count once per label.
    assert sum(s["judgments"] for s in report["by_category"].values()) >= report["judgments"] - (
        sum(1 for i in _items("r") if not i.labels)
    )
    table = runner.invoke(args=["validation", "report", "r"]).stdout
    assert "source" in table and "human" in table and "95% CI" in table
    csv_text = runner.invoke(args=["validation", "report", "r", "--format", "csv"]).stdout
    assert csv_text.splitlines()[0].startswith("group,name,judgments")
    assert "source,model," in csv_text
    result = runner.invoke(args=["validation", "report", "missing"])
    assert result.exit_code != 0 and "no round named" in result.output
