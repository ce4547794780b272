"""`export-annotations --format w3c|brat` then `import-annotations --format w3c|brat` gives
back the same annotations, on SQLite and PostgreSQL (issue 33, points 2 and 3); a brat
folder made by hand (CRLF, NFD, emoji, a fragment over a line break) imports exactly; bad
files are refused with file and line, and nothing is stored.

The study is tests/support/interop.py's (two annotators, two documents: paired errors, a
unit with two labels, severities, comments with quotes and line breaks, a unit without a
label), imported through our own JSONL, exported again as JSONL: that export is the truth
each round trip must give back."""

from __future__ import annotations

import json
import shutil

import pytest
from sqlalchemy import delete, func, select, update

from app.core.extensions import db
from app.models import Annotation, AnnotationSession
from tests.support.apps import ROOT
from tests.support.interop import ALICE, DOCUMENTS, study_records, units
from tests.support.interop_app import export_jsonl, import_documents, run, severity_app
from tests.support.interop_app import seed_study as seed

BRAT_FIXTURE = ROOT / "tests" / "fixtures" / "brat"
# What a format carries back: everything of a record but the ids the database gives and
# the taxonomy version (the formats hold none: the import's sessions take the running one).
KEYS = ("document_id", "paragraph_id", "category", "category_name", "category_type", "span",
        "paired_span", "comment", "severity", "annotator_id", "platform", "submitted",
        "flagged")  # fmt: skip


@pytest.fixture
def app(database_uri, tmp_path):
    """The app with the default taxonomy plus severities (minor, major)."""
    with severity_app(database_uri, tmp_path) as application:
        yield application


def forget_annotations() -> None:
    """Every annotation and session gone (the documents and annotators stay)."""
    db.session.execute(update(Annotation).values(unit_id=None))
    db.session.execute(delete(Annotation))
    db.session.execute(delete(AnnotationSession))
    db.session.commit()


def unit_created(records: list[dict]) -> list[dict]:
    """created_at of each row as its unit's first (a W3C Annotation, one unit, has one)."""
    first: dict[tuple, str] = {}
    for r in records:
        key = (r["session_id"], r["unit_id"])
        first[key] = min(first.get(key, r["created_at"]), r["created_at"])
    return [{**r, "created_at": first[(r["session_id"], r["unit_id"])]} for r in records]


def same_annotations(after: list[dict], before: list[dict], created: bool) -> None:
    keys = KEYS + (("created_at",) if created else ())
    after, before = unit_created(after), unit_created(before)

    def key(record: dict) -> tuple:
        span = record["span"]
        return (record["annotator_id"], record["document_id"], span["paragraph_id"],
                span["start"], span["end"], record["category"] or "")  # fmt: skip

    before, after = sorted(before, key=key), sorted(after, key=key)
    assert [{k: r[k] for k in keys} for r in after] == [{k: r[k] for k in keys} for r in before]
    assert units(after) == units(before)


def imports_back(runner, tmp_path, fmt: str, exported, before: list[dict], created: bool) -> None:
    """With every annotation forgotten, the export `exported` (format `fmt`) imports back to
    the annotations `before` (their created_at too if `created`)."""
    forget_annotations()
    result = run(runner, "import-annotations", "--format", fmt, exported)
    assert "Imported 10 annotation(s) in 3 submitted session(s)" in result.output
    same_annotations(export_jsonl(runner, tmp_path / "after.jsonl"), before, created=created)


def test_w3c_export_imports_back_to_the_same_annotations(app, runner, tmp_path):
    before = seed(runner, tmp_path)
    assert len(before) == len(study_records())
    out = tmp_path / "annotations.w3c.jsonl"
    result = run(runner, "export-annotations", "--format", "w3c", "--keep-ids", "--output", out)
    assert "Wrote 12 W3C Annotations" in result.output  # 9 units, 3 paired spans
    lines = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    assert all(line["@context"] == "http://www.w3.org/ns/anno.jsonld" for line in lines)
    assert lines[0]["target"]["source"] == "urn:falte:default:ch-1"
    imports_back(runner, tmp_path, "w3c", out, before, created=True)


def test_w3c_export_pseudonymises_creators_unless_kept(app, runner, tmp_path):
    seed(runner, tmp_path)
    result = run(runner, "export-annotations", "--format", "w3c")
    assert ALICE.split(":")[1] not in result.output
    nicknames = {json.loads(line)["creator"]["nickname"] for line in result.output.splitlines()}
    assert len(nicknames) == 2 and all(n.startswith("anon-") for n in nicknames)
    again = run(runner, "export-annotations", "--format", "w3c").output
    assert again == result.output  # the same pseudonyms each time (keyed by the secret)


def test_brat_export_imports_back_to_the_same_annotations(app, runner, tmp_path):
    before = seed(runner, tmp_path)
    folder = tmp_path / "brat"
    result = run(runner, "export-annotations", "--format", "brat", "--keep-ids",
                 "--output", folder)  # fmt: skip
    assert "Wrote 3 .ann files in 2 annotator folders" in result.output
    alice = folder / "prolific%3A5f3c0a1b2c3d4e5f60718293"
    assert sorted(p.name for p in alice.iterdir()) == ["annotation.conf", "ch-1.ann", "ch-1.txt"]
    assert (alice / "ch-1.txt").read_text("utf-8") == "\n\n".join(DOCUMENTS["ch-1"])
    assert "[entities]\nnew-person\nmissing-info\n" in (alice / "annotation.conf").read_text()
    imports_back(runner, tmp_path, "brat", folder, before, created=False)


def test_export_options_that_do_not_fit_are_refused(app, runner, tmp_path):
    seed(runner, tmp_path)
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "old.ann").write_text("")
    for args, hint in (
        (["--format", "brat", "--output", str(tmp_path / "full")], "--output"),
        (["--format", "brat"], "--output"),
        (["--format", "w3c", "--output", str(tmp_path)], "--output"),
        (["--format", "w3c", "--what", "sessions"], "--what"),
        (["--format", "brat", "--include-removed", "--output", "x"], "--format"),
        (["--format", "jsonl", "--keep-ids"], "--keep-ids"),
    ):
        result = runner.invoke(args=["export-annotations", *args])
        assert result.exit_code == 2, args
        assert hint in result.output, args


def test_the_hand_made_brat_folder_imports_exactly(app, runner, tmp_path):
    text = tmp_path / "harbour.txt"
    shutil.copyfile(BRAT_FIXTURE / "kim" / "harbour.txt", text)  # CRLF, NFD, emoji
    run(runner, "import-documents", text)
    run(runner, "import-annotations", "--format", "brat", BRAT_FIXTURE)
    records = export_jsonl(runner, tmp_path / "out.jsonl")

    def expect(pid, start, end, text, category, severity=None, comment=None, paired=None):
        return {"paragraph_id": pid, "category": category,
                "span": {"paragraph_id": pid, "start": start, "end": end, "text": text},
                "paired_span": paired, "comment": comment, "severity": severity,
                "annotator_id": "import:kim"}  # fmt: skip

    keys = ("paragraph_id", "category", "span", "paired_span", "comment", "severity",
            "annotator_id")  # fmt: skip
    assert [{k: r[k] for k in keys} for r in records] == [
        expect(0, 8, 14, "Łukasz", "new-person", "minor", "Who is he? 🤔"),
        expect(0, 15, 31, "🚢 at the harbour", "missing-info"),
        expect(1, 16, 26, "ship.\nThen", "missing-info"),
        expect(1, 30, 44, "waved again 👋🏽", "repetition", "major", "Said twice.",
               {"paragraph_id": 1, "start": 3, "end": 20, "text": "waved at the ship"}),
        expect(2, 0, 4, "Café", "missing-info"),
    ]  # fmt: skip


def test_bad_files_are_refused_with_file_and_line_and_nothing_is_stored(app, runner, tmp_path):
    seed(runner, tmp_path)
    count = db.session.scalar(select(func.count(Annotation.id)))
    folder = tmp_path / "bad" / "kim"
    folder.mkdir(parents=True)
    (folder / "ch-1.txt").write_text("\n\n".join(DOCUMENTS["ch-1"]), "utf-8")
    (folder / "ch-1.ann").write_text(
        "T1\tnew-person 8 14\tŁukasz\nT2\tmissing-info 0 3;8 14\tZoë Łukasz\n"
        "T3\tmissing-info 40 70\tx\n",
        "utf-8",
    )
    result = runner.invoke(args=["import-annotations", "--format", "brat", str(tmp_path / "bad")])
    assert result.exit_code == 1
    assert "nothing imported" in result.output
    assert "kim/ch-1.ann:2: T2: discontinuous span (0 3;8 14)" in result.output
    assert "kim/ch-1.ann:3: T3:" in result.output
    w3c = tmp_path / "tool.jsonl"
    target = {
        "source": "urn:falte:default:ch-1",
        "selector": {"type": "TextPositionSelector", "start": 40, "end": 70},
    }
    good = {
        "type": "Annotation",
        "target": {**target, "selector": {"type": "TextPositionSelector", "start": 8, "end": 14}},
    }
    bad = {
        "type": "Annotation",
        "target": target,
        "body": {"type": "TextualBody", "value": "new-person", "purpose": "classifying"},
    }
    w3c.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n", "utf-8")  # fmt: skip
    result = runner.invoke(args=["import-annotations", "--format", "w3c", str(w3c)])
    assert result.exit_code == 1
    assert "tool.jsonl:2: target.selector:" in result.output
    assert "crosses from paragraph 0 into paragraph 1" in result.output
    assert db.session.scalar(select(func.count(Annotation.id))) == count
    # A folder is brat's only.
    result = runner.invoke(args=["import-annotations", str(tmp_path / "bad")])
    assert result.exit_code == 2 and "--format brat" in result.output


def test_w3c_import_reads_collections_of_other_tools(app, runner, tmp_path):
    import_documents(runner, tmp_path)
    prefix = "the café closed at noon; "
    quote = {"type": "TextQuoteSelector", "exact": "the café", "prefix": prefix}
    collection = {
        "@context": "http://www.w3.org/ns/anno.jsonld",
        "type": "AnnotationCollection",
        "first": {"type": "AnnotationPage", "items": [
            {"type": "Annotation", "creator": {"name": "Ana"},
             "body": [{"value": "repetition", "purpose": "tagging"},
                      {"value": "Third café.", "purpose": "commenting"}],
             "target": {"source": "https://example.org/texts/ch-2.txt", "selector": quote}},
        ]},
    }  # fmt: skip
    path = tmp_path / "tool.json"
    path.write_text(json.dumps(collection, ensure_ascii=False), "utf-8")
    run(runner, "import-annotations", "--format", "w3c", path)
    (record,) = export_jsonl(runner, tmp_path / "out.jsonl")
    start = DOCUMENTS["ch-2"][0].rindex("the café")  # the third: the prefix says so
    assert record["span"] == {"paragraph_id": 0, "start": start, "end": start + 8,
                              "text": "the café"}  # fmt: skip
    assert (record["category"], record["comment"]) == ("repetition", "Third café.")
    assert record["annotator_id"] == "import:Ana"


@pytest.mark.parametrize("shape", ["annotation", "array", "page"])
def test_w3c_import_reads_one_annotation_an_array_and_a_page(app, runner, tmp_path, shape):
    import_documents(runner, tmp_path)
    text = "\n\n".join(DOCUMENTS["ch-1"])
    start = text.index("Łukasz")
    annotation = {
        "@context": "http://www.w3.org/ns/anno.jsonld", "type": "Annotation",
        "creator": "https://example.org/users/7",
        "body": {"type": "TextualBody", "value": "new-person", "purpose": "classifying"},
        "target": {"source": "urn:falte:default:ch-1", "selector": [
            {"type": "TextPositionSelector", "start": start, "end": start + 6},
            {"type": "TextQuoteSelector", "exact": "Łukasz"}]},
    }  # fmt: skip
    data = {
        "annotation": annotation,
        "array": [annotation],
        "page": {"type": "AnnotationPage", "items": [annotation]},
    }[shape]
    path = tmp_path / "tool.json"
    path.write_text(json.dumps(data, ensure_ascii=False), "utf-8")
    run(runner, "import-annotations", "--format", "w3c", path)
    (record,) = export_jsonl(runner, tmp_path / "out.jsonl")
    assert record["span"] == {"paragraph_id": 0, "start": 8, "end": 14, "text": "Łukasz"}
    assert record["annotator_id"] == "import:https://example.org/users/7"
    annotation["creator"] = "x" * 201  # longer than an annotator id may be: refused
    path.write_text(json.dumps(annotation), "utf-8")
    result = runner.invoke(args=["import-annotations", "--format", "w3c", str(path)])
    assert result.exit_code == 1
    assert "tool.json: annotation 1 (document ch-1): annotator: 'xxx" in result.output
