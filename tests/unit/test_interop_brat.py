"""brat standoff both ways (app.interop.brat, app.interop.brat_import), without an app."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.imports.document_formats import split_paragraphs
from app.interop.brat import (
    annotation_conf,
    brat_ann,
    escape_note,
    export_folder,
    file_name,
    fragments,
    name_of_file,
    unescape_note,
)
from app.interop.brat_import import (
    load_folder,
    paragraph_pieces,
    read_brat_document,
    read_brat_folder,
)
from app.interop.pseudonyms import Pseudonyms
from app.interop.records import InteropError
from tests.support.interop import (
    ALICE,
    BOB,
    DOCUMENTS,
    TAXONOMY,
    nfd,
    projection,
    random_study,
    record,
    span,
    study_records,
    units,
)

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "brat"
KEEP = Pseudonyms(None, keep_ids=True)


def exported(records=None, pseudonymise=KEEP, sessions=()) -> dict[str, str]:
    return export_folder(
        study_records() if records is None else records,
        DOCUMENTS,
        taxonomy=TAXONOMY,
        pseudonymise=pseudonymise,
        sessions=sessions,
    )


def by_reading(records: list[dict]) -> list[dict]:
    """Records in brat's reading order: annotator folder, then document, as written."""
    order = sorted({(file_name(r["annotator_id"]), r["document_id"]) for r in records})
    return [
        r
        for key in order
        for r in records
        if (file_name(r["annotator_id"]), r["document_id"]) == key
    ]


def without_created(records: list[dict]) -> list[dict]:
    return [dict(r, created_at=None) for r in projection(records)]  # brat keeps no time


# --- export ------------------------------------------------------------------------------


def test_round_trip_gives_back_the_records_but_ids_and_times():
    records = study_records()
    read = read_brat_folder(exported(records), DOCUMENTS)
    assert without_created(read.records) == without_created(by_reading(records))
    assert units(read.records) == units(by_reading(records))  # the two-label unit is one
    assert read.warnings == []


def test_round_trip_through_files_on_disk(tmp_path: Path):
    for relative, text in exported().items():
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    read = read_brat_folder(load_folder(tmp_path), DOCUMENTS)
    assert without_created(read.records) == without_created(by_reading(study_records()))


def test_the_ann_lines_are_brat_s():
    records = [
        r for r in study_records() if r["annotator_id"] == BOB and r["document_id"] == "ch-2"
    ]
    assert brat_ann(records, DOCUMENTS["ch-2"]) == (
        "T1\trepetition 50 58\tthe café\n"
        "T2\trepetition 0 8\tThe café\n"
        "R1\trepetition Arg1:T1 Arg2:T2\n"
        "A1\tSeverity T1 minor\n"
        "#1\tAnnotatorNotes T1\t=SUM(A1:A3)\n"
        "T3\tmissing-info 88 92\tcafé\n"
        "A2\tSeverity T3 minor\n"
    )


def test_a_span_over_a_line_break_is_two_fragments_as_brat_writes_it():
    (line,) = [
        line
        for line in exported()[f"{file_name(ALICE)}/ch-1.ann"].splitlines()
        if line.startswith("T4\t")
    ]
    # "ship.\nThen he waved" in paragraph 1, which starts at 57 + 2 in the .txt.
    assert line == "T4\tmissing-info 73 78;79 92\tship. Then he waved"
    assert fragments("ab \n cd", 0, 7) == [(0, 2), (5, 7)]
    assert fragments("\nab", 0, 3) == [(0, 0), (1, 3)]  # the span's own start is kept
    assert fragments("ab\n", 0, 3) == [(0, 2), (3, 3)]


def test_folders_and_files_are_named_by_percent_encoded_ids():
    names = set(exported())
    assert names == {
        "prolific%3A5f3c0a1b2c3d4e5f60718293/ch-1.txt",
        "prolific%3A5f3c0a1b2c3d4e5f60718293/ch-1.ann",
        "prolific%3A5f3c0a1b2c3d4e5f60718293/annotation.conf",
        "mturk%3AA1B2C3D4E5F6G7/ch-1.txt",
        "mturk%3AA1B2C3D4E5F6G7/ch-1.ann",
        "mturk%3AA1B2C3D4E5F6G7/ch-2.txt",
        "mturk%3AA1B2C3D4E5F6G7/ch-2.ann",
        "mturk%3AA1B2C3D4E5F6G7/annotation.conf",
    }
    assert exported()["mturk%3AA1B2C3D4E5F6G7/ch-2.txt"] == "\n\n".join(DOCUMENTS["ch-2"])
    for tricky in ("..", ".hidden", "a/b", "c:\\d", "naïve 1"):
        assert "/" not in file_name(tricky) and not file_name(tricky).startswith(".")
        assert name_of_file(file_name(tricky)) == tricky


def test_annotators_are_pseudonymised_unless_ids_are_kept():
    pseudonyms = Pseudonyms("a secret")
    files = exported(pseudonymise=pseudonyms)
    assert {path.split("/")[0] for path in files} == {pseudonyms(ALICE), pseudonyms(BOB)}
    read = read_brat_folder(files, DOCUMENTS)
    assert {r["annotator_id"] for r in read.records} == {pseudonyms(ALICE), pseudonyms(BOB)}


def test_a_reading_without_errors_is_an_empty_ann():
    files = exported(records=[], sessions=[(ALICE, "ch-2")])
    assert files[f"{file_name(ALICE)}/ch-2.ann"] == ""
    assert read_brat_folder(files, DOCUMENTS).records == []


def test_annotation_conf_comes_from_the_taxonomy():
    assert annotation_conf(TAXONOMY) == (
        "# Generated from the study's taxonomy by falte-annotate (docs/interop.md).\n"
        "[entities]\nnew-person\nmissing-info\nrepetition\ninconsistency\n\n"
        "[relations]\n"
        "repetition Arg1:repetition, Arg2:repetition\n"
        "inconsistency Arg1:inconsistency, Arg2:inconsistency\n"
        "# Errors overlap, and one span may carry several labels.\n"
        "<OVERLAP> Arg1:<ENTITY>, Arg2:<ENTITY>, <OVL-TYPE>:<ANY>\n\n"
        "[events]\n\n"
        "[attributes]\n"
        "Severity Arg:<ENTITY>, Value:minor|major\n"
    )
    bare = annotation_conf({"categories": [{"key": "x", "type": "singleton"}]}, unlabelled=True)
    assert "[entities]\nx\nUnlabelled\n" in bare
    assert "Unlabelled Arg1:Unlabelled, Arg2:Unlabelled" in bare
    assert bare.endswith("[attributes]\n")  # no severities, no attribute


def test_notes_stay_on_one_line_and_come_back_exactly():
    for comment in ("two\nlines", "a \\n that is typed", "tab\there", "back\\slash\r\n"):
        escaped = escape_note(comment)
        assert "\n" not in escaped and "\r" not in escaped
        assert unescape_note(escaped) == comment
    assert unescape_note("C:\\temp") == "C:\\temp"  # brat's own notes keep their backslashes


# --- a folder made by hand ---------------------------------------------------------------


def harbour() -> list[str]:
    """The document as `flask import-documents` stores the fixture's .txt."""
    raw = (FIXTURE / "kim" / "harbour.txt").read_bytes().decode("utf-8")
    return list(split_paragraphs(raw))


def test_the_hand_made_folder_with_crlf_nfd_and_emoji_imports_exactly():
    paragraphs = harbour()
    assert paragraphs == [
        "Zoë met Łukasz 🚢 at the harbour.",
        "He waved at the ship.\nThen he waved again 👋🏽.",
        "Café was closed.",
    ]
    assert all(unicodedata.is_normalized("NFC", p) for p in paragraphs)
    files = load_folder(FIXTURE)
    assert "\r\n" in files["kim/harbour.txt"]  # read as written
    read = read_brat_folder(files, {"harbour": paragraphs})
    common = {"document_id": "harbour", "annotator_id": "kim", "created_at": None}

    def expect(pid, start, end, text, category, unit, **rest):
        assert paragraphs[pid][start:end] == text
        values = {"paired_span": None, "comment": None, "severity": None, **rest}
        return {**common, "paragraph_id": pid, "category": category,
                "span": {"paragraph_id": pid, "start": start, "end": end, "text": text},
                "unit_id": unit, **values}  # fmt: skip

    assert read.records == [
        expect(0, 8, 14, "Łukasz", "new-person", 1, severity="minor", comment="Who is he? 🤔"),
        expect(0, 15, 31, "🚢 at the harbour", "missing-info", 2),
        expect(1, 30, 44, "waved again 👋🏽", "repetition", 3, severity="major",
               comment="Said twice.",
               paired_span={"paragraph_id": 1, "start": 3, "end": 20,
                            "text": "waved at the ship"}),
        expect(2, 0, 4, "Café", "missing-info", 4),
        expect(1, 16, 26, "ship.\nThen", "missing-info", 5),
    ]  # fmt: skip
    assert read.warnings == []
    assert all(list(r)[:3] == ["document_id", "paragraph_id", "category"] for r in read.records)


def test_java_tools_utf16_offsets_are_recognised():
    text = "\n\n".join(DOCUMENTS["ch-1"])
    start = text.index("the ship had never left")
    utf16 = start + text[:start].count("🚢") + text[:start].count("👋")  # astral: 2 units
    ann = f"T1\tinconsistency {utf16} {utf16 + 23}\tthe ship had never left\n"
    read = read_brat_document(ann, text, DOCUMENTS["ch-1"], document_id="ch-1",
                              annotator_id="x", name="x/ch-1.ann")  # fmt: skip
    assert read.records[0]["span"] == span("ch-1", 2, "the ship had never left")
    assert read.warnings == [
        "x/ch-1.ann: offsets count UTF-16 code units (as Java tools write them); read as such"
    ]


def test_a_txt_with_other_line_ends_and_indentation_between_paragraphs_still_fits():
    paragraphs = DOCUMENTS["ch-2"]
    txt = "  " + paragraphs[0] + "\n \n\n" + paragraphs[1] + "\n"
    at = txt.index("café", txt.index(paragraphs[1]))
    ann = f"T1\tmissing-info {at} {at + 4}\tcafé\nT2\tnew-person 2 10\tThe café\n"
    read = read_brat_document(ann, txt, paragraphs, document_id="ch-2", annotator_id="x")
    assert [r["span"] for r in read.records] == [
        span("ch-2", 1, "café"),
        span("ch-2", 0, "The café"),
    ]


def test_a_relation_written_the_other_way_round_still_makes_the_later_span_the_error():
    text = "\n\n".join(DOCUMENTS["ch-1"])
    later = span("ch-1", 2, "the ship had never left")
    earlier = span("ch-1", 0, "The ship left at dawn")
    base = len(DOCUMENTS["ch-1"][0]) + 2 + len(DOCUMENTS["ch-1"][1]) + 2
    ann = (
        f"T1\tinconsistency {earlier['start']} {earlier['end']}\tThe ship left at dawn\n"
        f"T2\tinconsistency {base + later['start']} {base + later['end']}\t{later['text']}\n"
        "R1\tinconsistency Arg1:T1 Arg2:T2\n"
        "A1\tSeverity T1 minor\n"
    )
    (only,) = read_brat_document(ann, text, DOCUMENTS["ch-1"], document_id="ch-1",
                                 annotator_id="x").records  # fmt: skip
    assert (only["span"], only["paired_span"]) == (later, earlier)
    assert only["severity"] == "minor"  # Arg1's attribute belongs to the relation
    # Written the right way round, Arg1 is the error as it stands.
    turned = ann.replace("Arg1:T1 Arg2:T2", "Arg1:T2 Arg2:T1").replace("T1 minor", "T2 minor")
    same = read_brat_document(turned, text,
                              DOCUMENTS["ch-1"], document_id="ch-1", annotator_id="x")  # fmt: skip
    assert same.records[0]["span"] == later


# --- refusals ----------------------------------------------------------------------------


def refused(ann: str, txt: str | None = None, paragraphs=None, name="kim/ch-1.ann") -> list[str]:
    paragraphs = DOCUMENTS["ch-1"] if paragraphs is None else paragraphs
    with pytest.raises(InteropError) as caught:
        read_brat_document(ann, txt, paragraphs, document_id="ch-1", annotator_id="kim",
                           name=name)  # fmt: skip
    return [str(problem) for problem in caught.value.problems]


def test_discontinuous_and_paragraph_crossing_spans_are_refused_with_file_and_line():
    ann = (
        "T1\tnew-person 0 3\tZoë\n"
        "T2\tnew-person 0 3;8 14\tZoë Łukasz\n"  # a gap of words, not a line break
        "T3\tmissing-info 40 70\tx\n"
    )
    assert refused(ann) == [
        "kim/ch-1.ann:2: T2: discontinuous span (0 3;8 14): this import takes one continuous "
        "span (fragments may be split only by a line break)",
        "kim/ch-1.ann:3: T3: the text 'x' is not the .txt's text at these offsets "
        "('p left at dawn.\\n\\nHe waved at t')",
    ]
    text = "\n\n".join(DOCUMENTS["ch-1"])
    crossing = f"T1\tmissing-info 40 70\t{text[40:70].replace(chr(10), ' ')}\n"
    assert refused(crossing) == [
        "kim/ch-1.ann:1: T1: the span 40-70 crosses from paragraph 0 into paragraph 1; a span "
        "must lie within one paragraph"
    ]


def test_offsets_inside_a_crlf_or_a_decomposed_letter_are_refused():
    paragraphs = ["Zoë", "Two"]
    txt = nfd("Zoë") + "\r\n\r\nTwo"  # "Zoe" + U+0308: offset 3 splits ë
    assert refused("T1\tnew-person 0 3\tZoe\n", txt, paragraphs) == [
        "kim/ch-1.ann:1: T1: offset 3 falls inside what the stored text holds as one "
        "character (a CR LF line end, or a letter and its combining mark)"
    ]
    assert read_brat_document("T1\tnew-person 0 4\tZoë\nT2\tx 8 11\tTwo\n", txt, paragraphs,
                              document_id="d", annotator_id="k").records[1]["span"] == {
        "paragraph_id": 1, "start": 0, "end": 3, "text": "Two"}  # fmt: skip
    # No text after the offsets (brat fills it in): only the offsets are checked.
    assert refused("T1\tnew-person 5 11\n", txt, paragraphs) == [
        "kim/ch-1.ann:1: T1: offset 5 falls inside what the stored text holds as one "
        "character (a CR LF line end, or a letter and its combining mark)"
    ]


def test_lines_this_import_would_drop_are_refused():
    ann = (
        "T1\tnew-person 0 3\tZoë\n"
        "T2\trepetition 8 14\tŁukasz\n"
        "R1\trepetition Arg1:T1 Arg2:T2\n"
        "E1\tMeeting:T1 Agent:T2\n"
        "A1\tNegated T1\n"
        "N1\tReference T1 Wikidata:Q1\tZoë\n"
        "#1\tAnnotatorNotes T2\tthe earlier span\n"
        "R2\trepetition Arg1:T1 Arg2:T9\n"
        "A2\tSeverity T1\n"
        "no tab here\n"
        "R3\t\n"
        "T1\tnew-person 0 3\tZoë\n"
    )
    assert refused(ann) == [
        "kim/ch-1.ann:4: E1: events are not read (this import reads T, R, A Severity and "
        "# AnnotatorNotes lines)",
        "kim/ch-1.ann:5: A1: the attribute 'Negated' is not read (only Severity)",
        "kim/ch-1.ann:6: N1: normalizations are not read (this import reads T, R, A Severity "
        "and # AnnotatorNotes lines)",
        "kim/ch-1.ann:9: A2: write it as Severity T1 <severity key>",
        "kim/ch-1.ann:10: not a brat annotation line (ID<TAB>...)",
        "kim/ch-1.ann:11: R3: a relation needs exactly Arg1:T.. and Arg2:T..",
        "kim/ch-1.ann:12: T1: this id is used twice",
        "kim/ch-1.ann:8: R2: Arg2: no text-bound annotation T9",
        "kim/ch-1.ann:7: T2: a note on a paired span alone; put it on the error's span (the "
        "relation's Arg1) or on the relation",
    ]


def test_a_txt_of_another_document_is_refused():
    assert refused("T1\tnew-person 0 3\tThe\n", "\n\n".join(DOCUMENTS["ch-2"])) == [
        "kim/ch-1.ann: the .txt's paragraph 0 is not the stored one ('The café opened at "
        "nine; the café closed' vs 'Zoë met Łukasz 🚢 at the harbour. The shi'); the .txt "
        "must hold document ch-1"
    ]


def test_a_folder_names_every_file_it_refuses():
    files = {
        "kim/ch-9.ann": "",
        "loose.ann": "",
        "kim/ch-1.ann": "T1\tnew-person 0 3\tZoe\n",
        "kim/ch-1.txt": "\n\n".join(DOCUMENTS["ch-1"]),
        "kim/annotation.conf": "[entities]\n",
    }
    with pytest.raises(InteropError) as caught:
        read_brat_folder(files, DOCUMENTS)
    assert [str(p) for p in caught.value.problems] == [
        "kim/ch-1.ann:1: T1: the text 'Zoe' is not the .txt's text at these offsets ('Zoë')",
        "kim/ch-9.ann: document 'ch-9' is not imported",
        "loose.ann: an .ann outside an annotator's folder (name the folder after the annotator)",
    ]
    ok = read_brat_folder({"loose.ann": "T1\tnew-person 0 3\tZoë\n"}, DOCUMENTS | {
        "loose": DOCUMENTS["ch-1"]}, default_annotator="upload")  # fmt: skip
    assert ok.records[0]["annotator_id"] == "upload"


def test_load_folder_refuses_text_that_is_not_utf8(tmp_path: Path):
    (tmp_path / "kim").mkdir()
    (tmp_path / "kim" / "ch-1.ann").write_bytes(b"T1\tx 0 1\t\xff\n")
    with pytest.raises(InteropError, match=r"kim/ch-1.ann: not UTF-8 text \(byte 9\)"):
        load_folder(tmp_path)


def test_paragraph_pieces_follow_the_document_import_rule():
    for text in ("a\n\nb", "  a \n \n\n b\n", "a\nb\n\n\n\nc", "\n\na", "x"):
        assert [text[a:b] for a, b in paragraph_pieces(text)] == list(split_paragraphs(text)), text


def test_a_record_that_does_not_quote_its_document_is_not_exported():
    bad = record("ch-1", {"paragraph_id": 0, "start": 0, "end": 3, "text": "Zoe"}, "new-person",
                 unit_id=1)  # fmt: skip
    with pytest.raises(InteropError) as caught:
        exported(records=[bad])
    assert str(caught.value) == (
        "prolific%3A5f3c0a1b2c3d4e5f60718293/ch-1.ann, record 1: span.text: does not quote the "
        "document at its offsets"
    )


@settings(max_examples=60, deadline=None)
@given(data=st.data(), crlf=st.booleans(), decomposed=st.booleans())
def test_any_spans_round_trip_exactly_even_through_crlf_and_nfd(data, crlf, decomposed):
    documents, records = random_study(data.draw)
    files = export_folder(records, documents, taxonomy=TAXONOMY, pseudonymise=KEEP)
    folder = file_name(records[0]["annotator_id"])
    if crlf or decomposed:
        # The .txt as a Windows editor or an NFD system would save it: brat offsets then
        # count those characters, so shift every offset of the .ann to match.
        txt, ann = files[f"{folder}/doc.txt"], files[f"{folder}/doc.ann"]
        written = nfd(txt) if decomposed else txt
        written = written.replace("\n", "\r\n") if crlf else written
        files[f"{folder}/doc.txt"] = written
        files[f"{folder}/doc.ann"] = shift_offsets(ann, txt, written)
    read = read_brat_folder(files, documents)
    assert without_created(read.records) == without_created(records)
    assert units(read.records) == units(records)


def shift_offsets(ann: str, stored: str, written: str) -> str:
    """The .ann with offsets into `stored` moved to the same places in `written` (the same
    text after NFD and/or CRLF), each character mapped on its own."""
    moved, at = [0], 0
    for char in stored:
        piece = unicodedata.normalize("NFD", char) if written.startswith(
            unicodedata.normalize("NFD", char), at) and char != unicodedata.normalize(
            "NFD", char) else char  # fmt: skip
        piece = "\r\n" if char == "\n" and written.startswith("\r\n", at) else piece
        at += len(piece)
        moved.append(at)

    def offsets(match: re.Match) -> str:
        return f"{moved[int(match.group(1))]} {moved[int(match.group(2))]}"

    lines = []
    for line in ann.splitlines():
        if line.startswith("T"):
            ident, rest, text = line.split("\t")
            kind, _, spans = rest.partition(" ")
            spans = re.sub(r"(\d+) (\d+)", offsets, spans)
            line = f"{ident}\t{kind} {spans}\t{text}"
        lines.append(line)
    return "".join(f"{line}\n" for line in lines)
