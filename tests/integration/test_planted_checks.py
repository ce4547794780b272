"""`flask plant-checks` on a BooookScore summary: stored like any check document, and a
scripted worker who marks the planted spans is found by the dashboard's attention rule."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from flask_migrate import downgrade, upgrade

from app.core.extensions import db
from app.crowd.settings import study_settings
from app.models import Document, Paragraph
from app.research.dashboard import load_study
from app.studies import current_study_id
from tests.support.worker_api import csrf, read_to_the_end, save, start, submit

SOURCE = Path(__file__).resolve().parents[1] / "fixtures" / "planted" / "source.json"


def plant(runner, *args: str):
    result = runner.invoke(args=["import-documents", str(SOURCE)])
    assert result.exit_code == 0, result.output
    return runner.invoke(args=["plant-checks", "the-golden-doves", *args])


def stored(external_id: str) -> tuple[Document, list[str]]:
    document = db.session.scalar(db.select(Document).filter_by(external_id=external_id))
    texts = db.session.scalars(
        db.select(Paragraph.text).filter_by(document_id=document.id).order_by(Paragraph.position)
    ).all()
    return document, list(texts)


def test_plant_checks_stores_a_check_document_with_exact_gold(app, runner):
    result = plant(runner, "--seed", "3")
    assert result.exit_code == 0, result.output
    document, texts = stored("the-golden-doves-check-3")
    assert document.is_attention_check
    assert document.meta["planted_from"] == "the-golden-doves"
    # The source's title, as it is: workers must not be told it is a check.
    assert document.title == stored("the-golden-doves")[0].title
    assert [g["category"] for g in document.gold] == ["repetition", "inconsistency", "new-person"]
    for gold in document.gold:
        text = texts[gold["paragraph_id"]][gold["start"] : gold["end"]]
        assert f"paragraph {gold['paragraph_id']} [{gold['start']}:{gold['end']}] {text!r}" in (
            result.output
        )
        assert gold["explanation"]
    repetition = document.gold[0]
    paired = repetition["paired_span"]
    original = texts[paired["paragraph_id"]][paired["start"] : paired["end"]]
    assert original == texts[repetition["paragraph_id"]][repetition["start"] : repetition["end"]]
    # The same seed again changes nothing; a bad source or kind says what is wrong.
    again = runner.invoke(args=["plant-checks", "the-golden-doves", "--seed", "3"])
    assert "0 new, 0 updated, 1 unchanged" in again.output
    missing = runner.invoke(args=["plant-checks", "nope", "--seed", "1"])
    assert missing.exit_code == 1 and "nope: no such document" in missing.output
    kinds = runner.invoke(args=["plant-checks", "the-golden-doves", "--seed", "1", "--kinds", "x"])
    assert kinds.exit_code == 2 and "unknown kind 'x'" in kinds.output
    nested = runner.invoke(args=["plant-checks", "the-golden-doves-check-3", "--seed", "1"])
    assert nested.exit_code == 1 and "is itself an attention check" in nested.output


def test_a_worker_who_marks_the_planted_spans_passes_and_one_who_marks_nothing_is_flagged(
    app, client, runner
):
    result = plant(runner, "--seed", "5", "--id", "planted")
    assert result.exit_code == 0, result.output
    document, texts = stored("planted")
    gold = document.gold

    def span(paragraph_id: int, start: int, end: int) -> dict:
        return {
            "paragraph_id": paragraph_id,
            "start": start,
            "end": end,
            "text": texts[paragraph_id][start:end],
        }

    careful = start(client, "planted", annotator="careful")
    for paragraph_id in range(len(texts)):
        if paragraph_id:
            moved = client.put(
                f"/api/sessions/{careful}/position",
                json={"paragraph_id": paragraph_id},
                headers=csrf(careful),
            )
            assert moved.status_code == 200, moved.data
        for item in (g for g in gold if g["paragraph_id"] == paragraph_id):
            body = {
                "id": str(uuid.uuid4()),
                "category": item["category"],
                "span": span(item["paragraph_id"], item["start"], item["end"]),
            }
            if "paired_span" in item:
                body["paired_span"] = span(**item["paired_span"])
            answer = save(client, careful, body)
            assert answer.status_code in (200, 201), answer.data
    assert submit(client, careful).status_code == 200

    careless = start(client, "planted", annotator="careless")
    for paragraph_id in range(1, len(texts)):
        client.put(
            f"/api/sessions/{careless}/position",
            json={"paragraph_id": paragraph_id},
            headers=csrf(careless),
        )
    assert submit(client, careless).status_code == 200

    rows = {row.label: row for row in load_study(study_settings()).annotators}
    careful_row = next(row for label, row in rows.items() if label.endswith("careful"))
    careless_row = next(row for label, row in rows.items() if label.endswith("careless"))
    assert careful_row.gold.total == len(gold) == 3
    assert careful_row.gold.recall_any == 1.0 and careful_row.gold.recall_category == 1.0
    assert not careful_row.flagged
    assert careless_row.gold.recall_any == 0.0 and careless_row.flagged


# --- issue 28, point 4: the error must be located, not surrounded --------------------------

TWO_PARAGRAPHS = {
    "id": "bakery",
    "paragraphs": [
        "Anna Berg opened the old bakery on the corner at dawn. She baked bread for the "
        "whole village every morning. Her brother Tom delivered the loaves on his bicycle.",
        "Winter came early that year and the roads froze. Tom slipped on the ice near the "
        "church. Anna closed the bakery for a week to look after him. The village missed "
        "its bread and sent soup instead. By spring the roads were clear again.",
    ],
}


LAZY, EXACT = "direct:lazy", "direct:exact"


def _planted_pair(app, tmp_path) -> tuple[list[str], list[dict]]:
    """A two-paragraph document with a repetition and a new person planted (both in the
    second paragraph), through the real commands; its paragraphs and gold."""
    source = tmp_path / "bakery.jsonl"
    source.write_text(json.dumps(TWO_PARAGRAPHS) + "\n", encoding="utf-8")
    runner = app.test_cli_runner()
    result = runner.invoke(args=["import-documents", str(source)])
    assert result.exit_code == 0, result.output
    kinds = ["--kinds", "repetition,new-entity", "--seed", "2", "--id", "planted"]
    result = runner.invoke(args=["plant-checks", "bakery", *kinds])
    assert result.exit_code == 0, result.output
    document, texts = stored("planted")
    assert len(texts) == 2 and {g["paragraph_id"] for g in document.gold} == {1}
    return texts, document.gold


def _finish(client, texts: list[str], annotator: str, marks: list[tuple]) -> dict:
    """Open the check, save (category, paragraph, start, end, paired) marks, Submit."""
    token = start(client, "planted", annotator=annotator)
    read_to_the_end(client, token, len(texts))
    for category, paragraph_id, begin, end, paired in marks:
        body = {
            "id": str(uuid.uuid4()),
            "category": category,
            "span": {
                "paragraph_id": paragraph_id,
                "start": begin,
                "end": end,
                "text": texts[paragraph_id][begin:end],
            },
        }
        if paired is not None:
            p, s, e = paired
            body["paired_span"] = {"paragraph_id": p, "start": s, "end": e, "text": texts[p][s:e]}
        answer = save(client, token, body)
        assert answer.status_code == 201, answer.data
    answer = submit(client, token)
    assert answer.status_code == 200, answer.data
    return answer.get_json()


def _whole_paragraphs(texts: list[str]) -> list[tuple]:
    """Each paragraph marked whole, the second with each planted category (the repetition
    paired with the whole first paragraph): every gold span lies inside some mark."""
    whole = [(0, 0, len(texts[0])), (1, 0, len(texts[1]))]
    return [
        ("new-person", *whole[0], None),
        ("new-person", *whole[1], None),
        ("repetition", *whole[1], whole[0]),
    ]


def _exact(gold: list[dict], trim: int = 0) -> list[tuple]:
    """The gold spans themselves (`trim` characters fewer at the end: near-exact)."""
    marks = []
    for item in gold:
        paired = item.get("paired_span")
        paired = (paired["paragraph_id"], paired["start"], paired["end"]) if paired else None
        end = item["end"] - (trim if item["end"] - item["start"] > 2 * trim else 0)
        marks.append((item["category"], item["paragraph_id"], item["start"], end, paired))
    return marks


def test_whole_paragraphs_fail_a_planted_check_and_exact_spans_pass(make_app, tmp_path):
    app = make_app(attention_checks="fail")
    with app.app_context():
        texts, gold = _planted_pair(app, tmp_path)
        client = app.test_client()
        assert _finish(client, texts, "lazy", _whole_paragraphs(texts))["outcome"] == (
            "failed_checks"
        )
        assert _finish(client, texts, "exact", _exact(gold))["outcome"] == "completed"
        assert _finish(client, texts, "near", _exact(gold, trim=1))["outcome"] == "completed"


def test_whole_paragraphs_are_flagged_where_the_study_only_flags(make_app, tmp_path):
    app = make_app()  # attention_checks: flag (the default)
    with app.app_context():
        texts, gold = _planted_pair(app, tmp_path)
        client = app.test_client()
        assert _finish(client, texts, "lazy", _whole_paragraphs(texts))["outcome"] == "completed"
        assert _finish(client, texts, "exact", _exact(gold))["outcome"] == "completed"
        rows = {row.label: row for row in load_study(study_settings()).annotators}
        assert rows[LAZY].flagged
        assert rows[LAZY].gold.found_any == 0
        assert not rows[EXACT].flagged


def test_the_migration_gives_earlier_planted_checks_their_sources_title(app, runner):
    """Checks planted before were titled "<source title> (attention check)"."""
    assert plant(runner, "--seed", "3").exit_code == 0
    db.session.execute(
        db.update(Document)
        .where(Document.external_id == "the-golden-doves-check-3")
        .values(title="The Golden Doves (GPT-4 summary, BooookScore sample) (attention check)")
    )
    own = Document(
        study_id=current_study_id(),
        external_id="chosen",
        title="Researchers chose this (attention check)",
        meta={},
        gold=[{"paragraph_id": 0, "start": 0, "end": 2, "category": "new-person"}],
        content_hash="0" * 64,
        paragraph_count=1,
    )
    db.session.add(own)
    db.session.commit()
    db.session.close()
    downgrade(revision="e28a0000000a")
    upgrade()
    source = stored("the-golden-doves")[0].title
    assert stored("the-golden-doves-check-3")[0].title == source
    assert stored("chosen")[0].title == "Researchers chose this (attention check)"
