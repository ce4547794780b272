"""Reading item files and judgment wording, without a database."""

from __future__ import annotations

import json

import pytest

from app.imports.item_formats import detect_format, generated_id, read_items
from app.validation.judgments import match_reason, parse_verdict
from tests.support.booookscore import relation, single, write_human_file

REASONS = [
    "A. Not relevant to span",
    "B. Answered in the summary",
    "C. Not addressing issues that matter",
    "D. Other",
]


def _jsonl(tmp_path, records, name="items.jsonl"):
    path = tmp_path / name
    lines = [r if isinstance(r, str) else json.dumps(r) for r in records]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_generic_items_with_and_without_offsets(tmp_path):
    path = _jsonl(
        tmp_path,
        [
            {
                "id": "x1",
                "source": "gpt-4",
                "document_id": "d",
                "span": {"text": "Anna", "paragraph_id": 0, "start": 0, "end": 4},
                "labels": ["salience"],
                "category": "language",
                "question": "Who?",
            },
            {"source": "human", "document_id": "d", "span": {"text": "letter"}, "comment": "c"},
        ],
    )
    items, problems = read_items(path)
    assert problems == []
    first, second = items
    assert first.external_id == "x1"
    assert first.span.has_offsets
    assert first.labels == ["salience", "language"]
    assert second.external_id is None
    assert not second.span.has_offsets
    assert second.comment == "c"
    assert first.where == "items.jsonl:line 1"


def test_our_export_is_accepted_as_it_is(tmp_path):
    record = {
        "document_id": "doc-a",
        "paragraph_id": 0,
        "category": "new-person",
        "category_name": "New person",
        "category_type": "singleton",
        "span": {"paragraph_id": 0, "start": 0, "end": 3, "text": "Zoë"},
        "paired_span": None,
        "comment": None,
        "annotator_id": "prolific:alice",
        "platform": "prolific",
        "session_id": "7",
        "submitted": True,
        "created_at": "2024-05-01T12:00:00+00:00",
        "taxonomy_version": "abc",
    }
    items, problems = read_items(_jsonl(tmp_path, [record]))
    assert problems == []
    assert items[0].source == "human"
    assert items[0].origin_annotator == "prolific:alice"
    assert items[0].labels == ["new-person"]


def test_every_bad_line_is_reported_with_its_number(tmp_path):
    path = _jsonl(
        tmp_path,
        [
            {"source": "s", "document_id": "d", "span": {"text": "ok"}},
            "{not json",
            {"source": "s", "span": {"text": "x"}},
            {"source": "s", "document_id": "d", "span": {"text": ""}},
            {"source": "s", "document_id": "d", "span": {"text": "x", "start": 1, "end": 2}},
            {"source": "s", "document_id": "d", "span": {"text": "x"}, "colour": "red"},
        ],
    )
    items, problems = read_items(path)
    assert len(items) == 1
    assert [p.split(":")[1] for p in problems] == [
        "line 2",
        "line 3",
        "line 4",
        "line 5",
        "line 6",
    ]
    assert "document_id" in problems[1]
    assert "colour" in problems[4]


def test_booookscore_files_are_told_apart_by_content():
    human = {"b": {"summary": "s", "singles": [], "relations": []}}
    validation = {"b": {"summary": "s", "annotations": []}}
    model = {"b": {"A sentence.": {"questions": "q", "types": ["language"]}}}
    assert detect_format(human) == "booookscore-human"
    assert detect_format(validation) == "booookscore-validation"
    assert detect_format(model) == "booookscore-model"
    assert detect_format([{"span": {}}]) == "jsonl"


def test_booookscore_human_relations_become_paired_items(tmp_path):
    path = write_human_file(
        tmp_path / "human.json",
        "First part.\n\nSecond part here.",
        [single("s1", "First part.", ["x"], "Q?")],
        [relation(("a", "b"), ("Second part here.", "First part."), ["duplication"], "Why?")],
    )
    items, problems = read_items(path)
    assert problems == []
    single_item, paired_item = items
    assert single_item.paragraphs == ("First part.", "Second part here.")
    assert single_item.source == paired_item.source == "human"
    assert paired_item.paired_span.text == "First part."
    assert paired_item.labels == ["duplication"]
    assert paired_item.question == "Why?"
    assert paired_item.where.endswith("book relations[0]")


def test_generated_ids_are_opaque_and_stable(tmp_path):
    path = _jsonl(tmp_path, [{"source": "gpt-4", "document_id": "d", "span": {"text": "x"}}])
    item = read_items(path)[0][0]
    first = generated_id(item, "d")
    assert first == generated_id(item, "d")
    assert first.startswith("item-")
    assert "gpt" not in first


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("Agree", "agree"),
        ("Partially agree", "partial"),
        ("Don't agree", "disagree"),
        ("Don’t agree", "disagree"),
        ("disagree", "disagree"),
        ("partial", "partial"),
        ("maybe", None),
        (None, None),
    ],
)
def test_verdict_wording(given, expected):
    assert parse_verdict(given) == expected


def test_reasons_match_exactly_or_by_letter():
    assert match_reason("D. Other", REASONS) == "D. Other"
    long_c = "C. Not addressing issues that matter (refer to standards)"
    assert match_reason(long_c, REASONS) == "C. Not addressing issues that matter"
    assert match_reason("b. answered in the summary", REASONS) == "B. Answered in the summary"
    assert match_reason("E. Something else", REASONS) is None
    assert match_reason("Unrelated", REASONS) is None


def test_null_books_do_not_hide_the_format_and_are_skipped_with_a_warning(tmp_path):
    model = {"gone": None, "book": {"Anna left.": {"questions": "Who?", "types": ["language"]}}}
    assert detect_format(model) == "booookscore-model"
    human = {"gone": None, "book": {"summary": "Anna left.", "singles": [], "relations": []}}
    assert detect_format(human) == "booookscore-human"
    path = tmp_path / "model.json"
    path.write_text(json.dumps(model), "utf-8")
    warnings: list[str] = []
    items, problems = read_items(path, "auto", warnings)
    assert problems == []
    assert [item.span.text for item in items] == ["Anna left."]
    assert warnings == ["model.json:gone: null: skipped (the file has no entry)"]
