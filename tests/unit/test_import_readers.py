"""Reading annotation files for `flask import-annotations` (no app, no database)."""

from __future__ import annotations

import json

from app.imports.annotation_formats import read_annotations
from tests.support.booookscore import relation, single, write_human_file


def test_booookscore_files_it_does_not_take_are_named(tmp_path):
    path = tmp_path / "model.json"
    path.write_text(json.dumps({"book": {"Anna left.": {"questions": None, "types": None}}}))
    parsed = read_annotations(path)
    assert parsed.problems == [
        "model.json: this is BooookScore's model file: use it with `flask validation "
        "create-round` (import-annotations takes the human annotation files)"
    ]


def test_booookscore_human_file_one_annotation_per_label(tmp_path):
    path = write_human_file(
        tmp_path / "summary-gpt4-4096-inc.json",
        "Anna met Bob.\n\nBob left. Bob left.",
        [single("1", "Anna", ["entity omission", "discontinuity"], ["Who?", "Why?"])],
        [relation(("2", "3"), ("Bob left.", "Bob left."), ["duplication"], "Twice?")],
        others={"gone": None},
    )
    parsed = read_annotations(path, id_prefix="inc-")
    assert parsed.problems == []
    assert parsed.warnings == [
        "summary-gpt4-4096-inc.json:gone: null: skipped (the file has no entry)"
    ]
    assert parsed.texts == {"inc-book": ("Anna met Bob.", "Bob left. Bob left.")}
    (session,) = parsed.sessions.values()
    assert session.annotator == ("import", "summary-gpt4-4096-inc")
    assert [(a.label, a.span.text, a.comment) for a in session.annotations] == [
        ("entity omission", "Anna", "Who? Why?"),
        ("discontinuity", "Anna", "Who? Why?"),
        ("duplication", "Bob left.", "Twice?"),
    ]
    assert session.annotations[2].paired.text == "Bob left." and session.annotations[2].order_pair


def test_falte_csv_rows_by_line(tmp_path):
    path = tmp_path / "dump.csv"
    path.write_text(
        "storyid,segmentid,error,span1,span1_start,span1_end,span2,span2_start,span2_end,"
        "survey_code,feedback,annotator\n"
        "s1,x,Language,Anna,0,4,,,,c1,,\n"
        "s1,0,no-error,,,,,,,c2,,\n",
        "utf-8",
    )
    parsed = read_annotations(path)
    assert parsed.problems == ["dump.csv:2: segmentid: must be a whole number"]
    assert {key[1] for key in parsed.sessions} == {("falte", "c1"), ("falte", "c2")}
