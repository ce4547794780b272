"""Document languages: BCP 47 tags at import, direction, and sentences in every script."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.imports.document_formats import DocumentFileError, parse_documents
from app.rules.languages import direction_of, language_problem
from app.rules.metrics import document_sentences, split_sentences


def sentences(text: str, language: str | None) -> list[str]:
    """The sentences of one paragraph as text, each equal to text[start:end]."""
    return [text[start:end] for start, end in split_sentences(text, language)]


# -- tags and direction -------------------------------------------------------------


@pytest.mark.parametrize("tag", ["ar", "he", "zh-Hans", "en-GB", "sr-Latn-RS", "hi", "th"])
def test_well_formed_tags_are_accepted(tag):
    assert language_problem(tag) is None


@pytest.mark.parametrize("tag", ["", "x", "ar_EG", "en--GB", "123", "zh Hans", "a" * 40, 7])
def test_malformed_tags_are_refused(tag):
    assert language_problem(tag)


@pytest.mark.parametrize(
    ("tag", "direction"),
    [
        ("ar", "rtl"),
        ("ar-EG", "rtl"),
        ("he", "rtl"),
        ("ur", "rtl"),
        ("fa", "rtl"),
        ("yi", "rtl"),
        ("zh-Hans", "ltr"),
        ("ja", "ltr"),
        ("hi", "ltr"),
        ("en", "ltr"),
        ("az-Arab", "rtl"),
        ("uz-Latn", "ltr"),
    ],
)
def test_direction_follows_the_script(tag, direction):
    assert direction_of(tag) == direction


def test_no_language_has_no_direction():
    assert direction_of(None) is None


# -- the import field ---------------------------------------------------------------


def test_language_is_read_from_every_json_format(tmp_path: Path):
    (tmp_path / "a.jsonl").write_text(
        json.dumps({"id": "a", "text": "مرحبا بالعالم.", "language": "ar"}) + "\n",
        encoding="utf-8",
    )
    (tmp_path / "b.json").write_text(
        json.dumps({"b": {"paragraphs": ["你好。"], "language": "zh-Hans"}}), encoding="utf-8"
    )
    (tmp_path / "c.json").write_text(
        json.dumps([{"id": "c", "paragraphs": ["שלום."], "language": " he "}]), encoding="utf-8"
    )
    (tmp_path / "d.txt").write_text("Plain text.\n", encoding="utf-8")
    found = {d.external_id: d.language for d in parse_documents(tmp_path)}
    assert found == {"a": "ar", "b": "zh-Hans", "c": "he", "d": None}


def test_a_malformed_tag_names_file_line_and_field(tmp_path: Path):
    path = tmp_path / "docs.jsonl"
    lines = [
        {"id": "ok", "text": "Fine.", "language": "en"},
        {"id": "bad", "text": "نص.", "language": "ar_EG"},
        {"id": "num", "text": "Text.", "language": 5},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    with pytest.raises(DocumentFileError) as caught:
        parse_documents(path)
    problems = [str(p) for p in caught.value.problems]
    assert problems[0].startswith("docs.jsonl:2: language: 'ar_EG' is not a BCP 47 language tag")
    assert problems[1].startswith("docs.jsonl:3: language: must be a string")
    assert len(problems) == 2


def test_language_is_not_inserted_into_the_text(tmp_path: Path):
    text = "قال Karim إن السعر 25 دولارا."
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps({"id": "d", "text": text, "language": "ar"}), encoding="utf-8")
    (document,) = parse_documents(path)
    assert document.paragraphs == (text,)
    bidi_controls = set("\u200e\u200f\u061c\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
    assert not bidi_controls & set(document.paragraphs[0])


# -- sentences per language -----------------------------------------------------------


def test_english_and_no_language_keep_the_english_rule():
    # English is NLTK's Punkt (app.rules.metrics): a sentence may start in lower case.
    text = "Mr. Smith went home. he slept. Then J. R. R. Tolkien wrote."
    assert sentences(text, None) == sentences(text, "en") == sentences(text, "en-GB")
    assert sentences(text, "en") == [
        "Mr. Smith went home.",
        "he slept.",
        "Then J. R. R. Tolkien wrote.",
    ]


def test_chinese_full_stops_need_no_space_and_keep_closing_quotes():
    text = "李明今天去了北京。他对王芳说：“我们明天见。”王芳问：“几点？”他笑了！"
    assert sentences(text, "zh-Hans") == [
        "李明今天去了北京。",
        "他对王芳说：“我们明天见。”",
        "王芳问：“几点？”",
        "他笑了！",
    ]


def test_japanese_corner_brackets_stay_with_their_sentence():
    text = "私は東京に行きました。「とても楽しかった！」と母に言いました。また行きたいですか？"
    assert sentences(text, "ja") == [
        "私は東京に行きました。",
        "「とても楽しかった！」",
        "と母に言いました。",
        "また行きたいですか？",
    ]


def test_arabic_question_mark_ends_a_sentence_but_commas_do_not():
    text = "وصل كريم إلى القاهرة عام 2019. هل رأى الأهرامات؟ نعم، رآها مع Sarah Jones في 3 أيار."
    assert sentences(text, "ar") == [
        "وصل كريم إلى القاهرة عام 2019.",
        "هل رأى الأهرامات؟",
        "نعم، رآها مع Sarah Jones في 3 أيار.",
    ]


def test_urdu_full_stop_and_question_mark():
    text = "وہ کل لاہور گیا۔ کیا تم بھی آؤ گے؟ ہاں، میں آؤں گا۔"
    assert sentences(text, "ur") == ["وہ کل لاہور گیا۔", "کیا تم بھی آؤ گے؟", "ہاں، میں آؤں گا۔"]


def test_hebrew_with_latin_names_and_numbers():
    text = "דוד פגש את Anna Berg ב-2020. האם הם נסעו לחיפה? כן, ברכבת של 7:45."
    assert sentences(text, "he") == [
        "דוד פגש את Anna Berg ב-2020.",
        "האם הם נסעו לחיפה?",
        "כן, ברכבת של 7:45.",
    ]


def test_devanagari_danda_with_combining_marks():
    text = "राम सुबह जल्दी उठा। उसने चाय बनाई और अख़बार पढ़ा॥ क्या सीता भी आएगी?"
    assert sentences(text, "hi") == [
        "राम सुबह जल्दी उठा।",
        "उसने चाय बनाई और अख़बार पढ़ा॥",
        "क्या सीता भी आएगी?",
    ]


def test_thai_spaces_end_sentences():
    text = "วันนี้อากาศดีมาก ฉันไปตลาดกับแม่ เราซื้อมะม่วงสามลูก"
    assert sentences(text, "th") == ["วันนี้อากาศดีมาก", "ฉันไปตลาดกับแม่", "เราซื้อมะม่วงสามลูก"]


def test_other_latin_languages_keep_titles_and_lower_case_continuations():
    text = "Dr. Müller kam um 9 Uhr. Er war müde, z.B. wegen Prof. Klein. usw. blieb er."
    assert sentences(text, "de") == [
        "Dr. Müller kam um 9 Uhr.",
        "Er war müde, z.B. wegen Prof. Klein. usw. blieb er.",
    ]


def test_text_without_a_boundary_is_one_sentence_and_empty_text_none():
    assert sentences("  没有句号的文字  ", "zh") == ["没有句号的文字"]
    assert split_sentences("", "ar") == []


def test_document_sentences_use_the_language():
    paragraphs = ["第一句。第二句。", "第三句！"]
    assert document_sentences(paragraphs, "zh") == [(0, 0, 4), (0, 4, 8), (1, 0, 4)]
    assert document_sentences(paragraphs) == [(0, 0, 8), (1, 0, 4)]
