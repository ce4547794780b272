"""Document formats: detection, normalisation and every rejection, without an app."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.imports.document_formats import (
    MAX_PROBLEMS,
    DocumentFileError,
    DocumentFormatError,
    DocumentInput,
    content_hash,
    parse_documents,
    split_paragraphs,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "documents"


def write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    """A file in tmp_path with exactly this content (bytes, or text encoded as UTF-8)."""
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return path


def jsonl(tmp_path: Path, *records: object, name: str = "docs.jsonl") -> Path:
    """A JSON-lines file, one record a line."""
    return write(tmp_path, name, "".join(json.dumps(r) + "\n" for r in records))


def problems(path: Path) -> list[str]:
    """Every problem reported for a file, as printed."""
    with pytest.raises(DocumentFileError) as caught:
        parse_documents(path)
    assert all(isinstance(p, DocumentFormatError) for p in caught.value.problems)
    return [str(p) for p in caught.value.problems]


# --- formats ---------------------------------------------------------------------------


def test_falte_json_list_and_object_forms():
    first, second = parse_documents(FIXTURES / "falte.json")
    assert first == DocumentInput(
        "plain-list", None, ("First paragraph.", "Second paragraph, padded.")
    )
    assert second.external_id == "with-metadata"
    assert second.title == "A story"
    assert second.paragraphs == ("Anna meets Bo.", "Bo leaves.")  # "sentences" synonym
    assert second.entities == ("Anna", "Bo")
    assert second.meta == {"model": "gpt-4", "chunk": 4096}
    assert second.gold is None


def test_json_list_of_records_with_text_and_gold():
    one, two, three = parse_documents(FIXTURES / "records.json")
    assert (one.external_id, one.title, one.paragraphs) == ("rec-1", "Record one", ("One.", "Two."))
    # A line holding only whitespace is a blank line.
    assert two.paragraphs == ("Alpha.", "Beta.", "Gamma.")
    assert two.entities == ("Alpha",)
    assert three.gold == [{"paragraph_id": 0, "start": 0, "end": 4, "category": "new-person"}]


def test_jsonl_skips_blank_lines():
    documents = parse_documents(FIXTURES / "records.jsonl")
    assert [(d.external_id, d.paragraphs) for d in documents] == [
        ("line-1", ("Hello.", "World.")),
        ("line-2", ("Solo paragraph.",)),
    ]


def test_single_record_object_is_one_document(tmp_path):
    path = write(tmp_path, "one.json", '{"id": "solo", "text": "A.\\n\\nB."}')
    [document] = parse_documents(path)
    assert (document.external_id, document.paragraphs) == ("solo", ("A.", "B."))


def test_single_record_problems_use_line_or_record(tmp_path):
    one_line = write(tmp_path, "one.jsonl", '{"id": "solo", "text": " "}\n')
    assert problems(one_line) == ["one.jsonl:1: text: no paragraphs (the text is empty)"]
    pretty = write(tmp_path, "pretty.json", '{\n  "id": "solo",\n  "text": " "\n}\n')
    assert problems(pretty) == ["pretty.json:record 1: text: no paragraphs (the text is empty)"]


def test_content_is_detected_not_extension(tmp_path):
    as_json = jsonl(tmp_path, {"id": "a", "paragraphs": ["x"]}, {"id": "b", "paragraphs": ["y"]})
    renamed = as_json.rename(tmp_path / "actually-jsonl.json")
    assert [d.external_id for d in parse_documents(renamed)] == ["a", "b"]
    falte = write(tmp_path, "falte.data", '{"doc": ["p"]}')
    assert parse_documents(falte)[0].external_id == "doc"


def test_txt_file_id_is_stem_and_paragraphs_split_on_blank_lines():
    [document] = parse_documents(FIXTURES / "plain.txt")
    assert document.external_id == "plain"
    assert document.title is None
    # A single newline stays inside a paragraph; only blank lines separate.
    assert document.paragraphs == ("The first paragraph\nspans two lines.", "The second one.")


def test_folder_reads_txt_json_jsonl_in_name_order_and_skips_others():
    documents = parse_documents(FIXTURES / "folder")
    assert [d.external_id for d in documents] == ["a-notes", "folder-json", "folder-falte"]
    assert documents[0].paragraphs == ("Text file one.", "Its second paragraph.")


def test_folder_is_all_or_nothing(tmp_path):
    write(tmp_path, "a.txt", "Good text.")
    jsonl(tmp_path, {"id": "b", "paragraphs": [""]}, name="b.jsonl")
    assert problems(tmp_path) == ["b.jsonl:1: paragraphs[0]: empty paragraph"]


def test_folder_duplicate_id_across_files(tmp_path):
    write(tmp_path, "same.txt", "From text.")
    jsonl(tmp_path, {"id": "same", "paragraphs": ["From JSONL."]}, name="x.jsonl")
    assert problems(tmp_path) == ["x.jsonl:1: id: duplicate id 'same' (first at same.txt)"]


def test_empty_folder(tmp_path):
    write(tmp_path, "notes.md", "not a document")
    write(tmp_path, ".hidden.txt", "hidden")
    assert problems(tmp_path) == [f"{tmp_path.name}: no .txt, .json or .jsonl files in this folder"]


# --- normalisation ---------------------------------------------------------------------


def test_nfc_composes_decomposed_characters(tmp_path):
    decomposed = "Cafe\u0301 au lait"  # "e" + combining acute accent
    [document] = parse_documents(jsonl(tmp_path, {"id": "nfc", "paragraphs": [decomposed]}))
    assert document.paragraphs == ("Caf\u00e9 au lait",)
    assert len(document.paragraphs[0]) == len(decomposed) - 1


def test_nfc_applies_to_ids_titles_and_entities(tmp_path):
    record = {"id": "zoe\u0308", "title": "Zoe\u0308", "entities": ["Zoe\u0308"], "text": "x"}
    [document] = parse_documents(jsonl(tmp_path, record))
    assert (document.external_id, document.title, document.entities) == ("zoë", "Zoë", ("Zoë",))


def test_crlf_and_lone_cr_become_lf(tmp_path):
    path = write(tmp_path, "crlf.txt", b"One\r\nline two\r\n\r\nTwo\r\rThree\r")
    [document] = parse_documents(path)
    assert document.paragraphs == ("One\nline two", "Two", "Three")


def test_crlf_inside_json_paragraph(tmp_path):
    [document] = parse_documents(jsonl(tmp_path, {"id": "a", "paragraphs": ["a\r\nb\rc"]}))
    assert document.paragraphs == ("a\nb\nc",)


def test_whitespace_only_line_counts_as_blank():
    assert split_paragraphs("One.\n \t \nTwo.\n\u00a0\nThree.") == ("One.", "Two.", "Three.")


def test_paragraphs_are_stripped_and_empty_pieces_dropped():
    assert split_paragraphs("\n\n  First.  \n\n\n\n Second.\n\n  \n") == ("First.", "Second.")


def test_emoji_and_non_ascii_are_preserved(tmp_path):
    text = "Zoë sends photos 📷 to Łukasz and Ines Müller 👩🏽‍🔬."
    [document] = parse_documents(jsonl(tmp_path, {"id": "emoji", "paragraphs": [text]}))
    assert document.paragraphs == (text,)
    assert document.paragraphs[0].index("to Łukasz") == 19  # code points, not UTF-16 units


def test_utf8_bom_is_ignored(tmp_path):
    path = write(tmp_path, "bom.json", b'\xef\xbb\xbf{"doc": ["p"]}')
    assert parse_documents(path)[0].external_id == "doc"


def test_content_hash_covers_paragraphs_only():
    a = DocumentInput("a", "Title", ("One.", "Two."), ("X",), {"k": 1})
    b = DocumentInput("b", None, ("One.", "Two."))
    assert a.content_hash == b.content_hash == content_hash(["One.", "Two."])
    assert len(a.content_hash) == 64
    assert content_hash(["ab", "c"]) != content_hash(["a", "bc"])
    assert content_hash(["One."]) != a.content_hash


# --- rejections: every record problem, with its place and field ------------------------


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        ({"paragraphs": ["x"]}, "id: missing"),
        ({"id": "", "paragraphs": ["x"]}, "id: empty id"),
        ({"id": "  ", "paragraphs": ["x"]}, "id: empty id"),
        ({"id": 7, "paragraphs": ["x"]}, "id: must be a string, not a number"),
        ({"id": "a" * 201, "paragraphs": ["x"]}, "id: too long (201 characters, at most 200)"),
        ({"id": " a", "paragraphs": ["x"]}, "id: ' a' has leading or trailing whitespace"),
        (
            {"id": "a/b", "paragraphs": ["x"]},
            "id: 'a/b' must not contain '/' or control characters",
        ),
        ({"id": "a"}, "paragraphs: missing (give paragraphs, sentences or text)"),
        (
            {"id": "a", "paragraphs": []},
            "paragraphs: must be a non-empty list of strings, not an empty list",
        ),
        (
            {"id": "a", "paragraphs": "x"},
            "paragraphs: must be a non-empty list of strings, not a string",
        ),
        ({"id": "a", "paragraphs": ["x", " \n "]}, "paragraphs[1]: empty paragraph"),
        ({"id": "a", "paragraphs": ["x", 3]}, "paragraphs[1]: must be a string, not a number"),
        ({"id": "a", "sentences": [None]}, "sentences[0]: must be a string, not null"),
        ({"id": "a", "text": ""}, "text: no paragraphs (the text is empty)"),
        ({"id": "a", "text": ["x"]}, "text: must be a string, not a list"),
        ({"id": "a", "text": "x", "paragraphs": ["x"]}, "text: give only one of paragraphs, text"),
        ({"id": "a", "text": "x", "title": 5}, "title: must be a string, not a number"),
        (
            {"id": "a", "text": "x", "entities": "Bo"},
            "entities: must be a list of names, not a string",
        ),
        (
            {"id": "a", "text": "x", "entities": ["Bo", ""]},
            "entities[1]: must be a non-empty string",
        ),
        ({"id": "a", "text": "x", "meta": []}, "meta: must be an object, not a list"),
        (
            {"id": "a", "text": "x", "metadata": {}},
            "metadata: unknown key (extra data belongs in meta)",
        ),
    ],
)
def test_record_rejections_name_line_and_field(tmp_path, record, expected):
    good = {"id": "good", "paragraphs": ["fine"]}
    path = jsonl(tmp_path, good, record)
    assert problems(path) == [f"docs.jsonl:2: {expected}"]


GOLD_OK = {"paragraph_id": 0, "start": 0, "end": 3, "category": "repetition"}


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"start": "0"}, "gold[1].start: must be an integer, not a string"),
        ({"end": 2.5}, "gold[1].end: must be an integer, not a number"),
        ({"paragraph_id": True}, "gold[1].paragraph_id: must be an integer, not a boolean"),
        ({"start": 3, "end": 3}, "gold[1].end: must be greater than start (3), not 3"),
        ({"start": -1}, "gold[1].start: must be at least 0, not -1"),
        ({"end": 8}, "gold[1].end: 8 is beyond paragraph 0 (7 characters)"),
        ({"paragraph_id": 2}, "gold[1].paragraph_id: no paragraph 2 (2 in all)"),
        ({"category": " "}, "gold[1].category: must be a non-empty string"),
        ({"category": None}, "gold[1].category: must be a non-empty string"),
        ({"note": "x"}, "gold[1].note: unknown key"),
    ],
)
def test_gold_rejections(tmp_path, change, expected):
    record = {"id": "g", "paragraphs": ["Abc def", "Second"], "gold": [GOLD_OK, GOLD_OK | change]}
    assert problems(jsonl(tmp_path, record)) == [f"docs.jsonl:1: {expected}"]


def test_gold_missing_key_and_wrong_type(tmp_path):
    missing = {"paragraph_id": 0, "start": 0, "end": 1}
    path = jsonl(
        tmp_path, {"id": "g", "text": "x", "gold": [missing]}, {"id": "h", "text": "x", "gold": {}}
    )
    assert problems(path) == [
        "docs.jsonl:1: gold[0].category: missing",
        "docs.jsonl:2: gold: must be a list of spans, not an object",
    ]


def test_gold_offsets_refer_to_normalised_text(tmp_path):
    # Stored text is "Café" (4 code points) although the input had 5 before NFC.
    record = {"id": "g", "paragraphs": ["  Cafe\u0301  "], "gold": [GOLD_OK | {"end": 5}]}
    assert problems(jsonl(tmp_path, record)) == [
        "docs.jsonl:1: gold[0].end: 5 is beyond paragraph 0 (4 characters)"
    ]
    record["gold"] = [GOLD_OK | {"end": 4}]
    assert parse_documents(jsonl(tmp_path, record))[0].gold[0]["end"] == 4


def test_duplicate_id_in_jsonl(tmp_path):
    path = jsonl(
        tmp_path, {"id": "a", "text": "x"}, {"id": "b", "text": "y"}, {"id": "a", "text": "z"}
    )
    assert problems(path) == ["docs.jsonl:3: id: duplicate id 'a' (first at docs.jsonl:1)"]


def test_json_list_problems_name_the_record(tmp_path):
    records = [{"id": "a", "text": "x"}, {"id": "b", "paragraphs": ["ok", ""]}, "text"]
    path = write(tmp_path, "list.json", json.dumps(records))
    assert problems(path) == [
        "list.json:record 2: paragraphs[1]: empty paragraph",
        'list.json:record 3: expected an object with "id" and "paragraphs"',
    ]


def test_falte_problems_name_record_and_id(tmp_path):
    text = '{"a": ["x"], "b": {"paragraphs": ["y", 5]}, "a": ["z"], "": ["w"], "c": "text"}'
    path = write(tmp_path, "falte.json", text)
    assert problems(path) == [
        "falte.json:record 2 (b): paragraphs[1]: must be a string, not a number",
        "falte.json:record 3 (a): id: duplicate id 'a' (first at falte.json:record 1 (a))",
        "falte.json:record 4: id: empty id",
        "falte.json:record 5 (c): expected a list of paragraphs or an object with paragraphs",
    ]


def test_falte_object_id_must_match_key(tmp_path):
    path = write(tmp_path, "falte.json", '{"a": {"id": "b", "paragraphs": ["x"]}}')
    assert problems(path) == ["falte.json:record 1 (a): id: differs from the key 'a'"]


def test_invalid_json_reports_line_and_column(tmp_path):
    path = write(tmp_path, "broken.json", '{\n  "a": ["x",,]\n}')
    assert problems(path) == ["broken.json:2:13: invalid JSON: Expecting value"]


def test_invalid_jsonl_line_is_reported_with_the_others(tmp_path):
    path = write(
        tmp_path, "docs.jsonl", '{"id": "a", "text": "x"}\n{"id": "b",\n{"id": "", "text": "y"}\n'
    )
    assert problems(path) == [
        "docs.jsonl:2: invalid JSON: Expecting property name enclosed in double quotes (column 12)",
        "docs.jsonl:3: id: empty id",
    ]


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("empty.json", "  \n", "empty.json: the file is empty"),
        ("empty.txt", " \n\n \n", "empty.txt: paragraphs: no paragraphs (the file holds no text)"),
        ("list.json", "[]", "list.json: no documents in the file (an empty list)"),
        ("object.json", "{}", "object.json: no documents in the file (an empty object)"),
        ("number.json", "42", "number.json: expected a JSON object, a JSON list or JSON lines"),
        (
            "latin1.txt",
            b"caf\xe9 au lait",
            "latin1.txt: not UTF-8 text (byte 3: invalid continuation byte)",
        ),
    ],
)
def test_file_level_problems(tmp_path, name, content, expected):
    assert problems(write(tmp_path, name, content)) == [expected]


def test_problems_are_collected_up_to_the_limit(tmp_path):
    path = jsonl(tmp_path, *({"id": f"d{n}", "paragraphs": [""]} for n in range(MAX_PROBLEMS + 5)))
    with pytest.raises(DocumentFileError) as caught:
        parse_documents(path)
    assert len(caught.value.problems) == MAX_PROBLEMS
    assert caught.value.truncated
    assert str(caught.value).endswith(f"(stopped after {MAX_PROBLEMS} problems)")


def test_error_string_format():
    error = DocumentFormatError(Path("/data/docs.jsonl"), "3", "paragraphs[2]", "empty paragraph")
    assert str(error) == "docs.jsonl:3: paragraphs[2]: empty paragraph"
    assert (error.location, error.field, error.message) == ("3", "paragraphs[2]", "empty paragraph")
    assert (
        str(DocumentFormatError("a.txt", "", "", "the file is empty")) == "a.txt: the file is empty"
    )


def test_id_of_200_characters_is_accepted(tmp_path):
    [document] = parse_documents(jsonl(tmp_path, {"id": "a" * 200, "text": "x"}))
    assert len(document.external_id) == 200


def test_angle_brackets_in_json_and_jsonl_paragraphs_are_plain_text(tmp_path):
    # Issue 28: an LLM output with <think>, code or "a<b and c>d" was refused in JSON and
    # JSONL, though the same text imports from a .txt file. Only a paragraph with FALTE's
    # entity marks is read as markup.
    paragraphs = ["<think>Plan the summary.</think> Anna left.", "if a<b and c>d: print(x)"]
    jsonl_path = jsonl(tmp_path, {"id": "llm", "paragraphs": paragraphs})
    json_path = write(tmp_path, "docs.json", json.dumps({"llm": paragraphs}))
    txt_path = write(tmp_path, "llm.txt", "\n\n".join(paragraphs))
    for path in (jsonl_path, json_path, txt_path):
        (document,) = parse_documents(path)
        assert document.paragraphs == tuple(paragraphs), path.name
        assert document.entities == (), path.name
    marked = ['<span class="ne ne-0">Anna</span> left.', "a<b and c>d"]
    (document,) = parse_documents(jsonl(tmp_path, {"id": "m", "paragraphs": marked}))
    assert document.paragraphs == ("Anna left.", "a<b and c>d")
    assert document.entities == ("Anna",)
