"""The unstorable-text rule (app.rules.safe_text): NUL characters and lone surrogates."""

from __future__ import annotations

import pytest

from app.rules.safe_text import bad_strings, json_text_problems, printable, text_problem


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("plain ünïcödé 🚢", None),
        ("a\x00b", "NUL"),
        ("lone \ud800", "surrogate"),
        ("lone \udfff", "surrogate"),
        ("\U0001f6a2", None),  # a paired surrogate escape decodes to one real character
    ],
)
def test_text_problem(text, problem):
    found = text_problem(text)
    assert (found is None) if problem is None else (problem in found)


def test_bad_strings_names_each_field_in_document_order():
    value = {"a": ["ok", "x\x00"], "\ud800k": 1, "b": {"c": "\udc00"}}
    assert [path for path, _ in bad_strings(value)] == ["a[1]", "\\ud800k", "b.c"]


def test_printable_escapes_only_bad_text():
    assert printable("Zoë") == "Zoë"
    assert printable("a\x00b\ud800") == "a\\x00b\\ud800"


def test_json_text_problems_by_line_and_field():
    text = (
        '{"id": "d1", "paragraphs": ["fine \\ud83d\\udea2"]}\n'
        '{"id": "d2", "paragraphs": ["ok", "bad\\u0000"]}\n'
        '{"id": "d\\udc00", "text": "t"}\n'
    )
    assert [(line, field) for line, field, _ in json_text_problems(text)] == [
        (2, "paragraphs[1]"),
        (3, "id"),
    ]
    pretty = '[\n  {\n    "id": "x",\n    "title": "\\ud800"\n  }\n]'
    assert [(line, field) for line, field, _ in json_text_problems(pretty)] == [(4, "[0].title")]
    assert json_text_problems('{"text": "a \\\\u0000 written out"}') == []  # an escaped backslash
    assert json_text_problems('{"id": "clean"}') == []
