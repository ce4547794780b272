"""Model suggestions (issue 18): `flask import-suggestions`, the worker API's decisions
and the move guard, on BooookScore's GPT-4 annotations of one real sample summary."""

from __future__ import annotations

import json
import uuid

import pytest

from app import create_app
from app.core.extensions import db
from app.models import (
    Annotation,
    AnnotationSession,
    Document,
    Suggestion,
    SuggestionRejection,
    ValidationItem,
)
from app.taxonomy import current_taxonomy
from tests.support.apps import dispose_engines, make_test_config
from tests.support.suggestions import (
    BOOK,
    model_file,
    model_sentences,
    summary_paragraphs,
    taxonomy_showing,
    write_summary,
)
from tests.support.worker_api import csrf, save, start


@pytest.fixture
def app(database_uri, tmp_path):
    """BooookScore's taxonomy with `suggestions: show`."""
    config = make_test_config(database_uri, TAXONOMY_PATH=str(taxonomy_showing(tmp_path)))
    application = create_app(config)
    with application.app_context():
        yield application
        db.session.remove()
        dispose_engines()


@pytest.fixture
def imported(runner, tmp_path):
    """The summary imported as a document and GPT-4's annotations as suggestions."""
    result = runner.invoke(args=["import-documents", str(write_summary(tmp_path))])
    assert result.exit_code == 0, result.output
    result = runner.invoke(
        args=["import-suggestions", str(model_file(tmp_path)), "--source", "gpt-4"]
    )
    assert result.exit_code == 0, result.output
    return result


def _suggestions() -> list[Suggestion]:
    query = db.select(Suggestion).order_by(Suggestion.paragraph_id, Suggestion.span_start)
    return list(db.session.scalars(query))


def test_booookscore_sentences_become_located_suggestions(imported):
    sentences = model_sentences()
    stored = _suggestions()
    assert len(stored) == len(sentences)
    paragraphs = summary_paragraphs()
    for row in stored:
        # Each whole sentence, exactly where the stored text has it.
        assert paragraphs[row.paragraph_id][row.span_start : row.span_end] == row.span_text
        assert row.span_text in sentences
        types = sentences[row.span_text]["types"]
        assert row.category == types[0].replace(" ", "-")
        assert row.labels == [t.replace(" ", "-") for t in dict.fromkeys(types)]
        assert row.question == sentences[row.span_text]["questions"]
        assert row.source == "gpt-4"
    # "Snow." occurs in three paragraphs: the first is used, and reported.
    snow = next(row for row in stored if row.span_text == "Snow.")
    assert (snow.paragraph_id, snow.ambiguous) == (0, True)
    assert "Ambiguous spans (first occurrence used): 1" in imported.output
    assert "occurs 3 times" in imported.output


def test_import_again_changes_nothing(runner, imported, tmp_path):
    before = len(_suggestions())
    result = runner.invoke(
        args=["import-suggestions", str(model_file(tmp_path)), "--source", "gpt-4"]
    )
    assert result.exit_code == 0, result.output
    assert f"Imported 0 suggestion(s) from 'gpt-4'; {before} already stored" in result.output
    assert len(_suggestions()) == before


def test_unmapped_type_refuses_the_file_with_its_place(runner, tmp_path):
    runner.invoke(args=["import-documents", str(write_summary(tmp_path))])
    data = json.loads(model_file(tmp_path).read_text("utf-8"))
    first = next(iter(data[BOOK]))
    data[BOOK][first]["types"] = ["plot hole"]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    result = runner.invoke(args=["import-suggestions", str(path), "--source", "gpt-4"])
    assert result.exit_code == 1
    assert f"bad.json:{BOOK} sentence 0: category: 'plot hole' is no category" in result.output
    assert "nothing imported" in result.output
    assert _suggestions() == []  # atomic: the other sentences were fine, none was stored
    mapping = tmp_path / "map.yaml"
    mapping.write_text("plot hole: discontinuity\n", encoding="utf-8")
    args = ["import-suggestions", str(path), "--source", "gpt-4", "--taxonomy-map", str(mapping)]
    result = runner.invoke(args=args)
    assert result.exit_code == 0, result.output
    assert _suggestions()[0].category == "discontinuity"


def test_document_not_imported_and_jsonl_items(runner, tmp_path):
    result = runner.invoke(
        args=["import-suggestions", str(model_file(tmp_path)), "--source", "gpt-4"]
    )
    assert result.exit_code == 1
    assert f"document_id: '{BOOK}' is not imported" in result.output
    runner.invoke(args=["import-documents", str(write_summary(tmp_path))])
    paragraphs = summary_paragraphs()
    items = tmp_path / "items.jsonl"
    lines = [
        {
            "id": "s-1",
            "document_id": BOOK,
            "category": "language",
            "span": {"text": "Dr. Vincent"},
            "question": "Who?",
        },
        {
            "document_id": BOOK,
            "category": "duplication",
            "span": {"text": "Snow.", "paragraph_id": 2},
            "paired_span": {"text": "Snow.", "paragraph_id": 0},
            "question": "Why again?",
        },
        {"document_id": BOOK, "category": "language", "span": {"text": "not in the text"}},
    ]
    items.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    args = ["import-suggestions", str(items), "--source", "llama", "--format", "jsonl"]
    result = runner.invoke(args=args)
    assert result.exit_code == 1
    assert "items.jsonl:line 3: span: text 'not in the text' not found" in result.output
    result = runner.invoke(args=[*args, "--skip-rejected"])
    assert result.exit_code == 0, result.output
    assert "Rejected (left out): 1" in result.output
    one, pair = sorted(_suggestions(), key=lambda s: s.paragraph_id)
    assert (one.external_id, one.span_text, one.paragraph_id) == ("s-1", "Dr. Vincent", 1)
    assert pair.external_id.startswith("llama-")
    assert (pair.paired_paragraph_id, pair.paragraph_id) == (0, 2)
    start_ = paragraphs[2].index("Snow.")
    assert (pair.span_start, pair.span_end) == (start_, start_ + 5)


# --- the worker API -------------------------------------------------------------------


def _open(client) -> str:
    token = start(client, BOOK)
    assert client.get(f"/s/{token}").status_code == 200  # the page load chooses the arm
    return token


def _state(client, token: str) -> list[dict]:
    answer = client.get(f"/api/sessions/{token}/suggestions")
    assert answer.status_code == 200
    return answer.get_json()["suggestions"]


def _accept(suggestion: dict, **changes) -> dict:
    body = {
        "id": str(uuid.uuid4()),
        "category": suggestion["category"],
        "span": suggestion["span"],
        "paired_span": suggestion["paired_span"],
        "comment": suggestion["comment"],
        "suggestion_id": suggestion["id"],
    }
    body.update(changes)
    return body


def _move(client, token: str, paragraph_id: int):
    return client.put(
        f"/api/sessions/{token}/position", json={"paragraph_id": paragraph_id}, headers=csrf(token)
    )


def _reject(client, token: str, suggestion_id: str, client_id: str):
    return client.post(
        f"/api/sessions/{token}/suggestions/{suggestion_id}/rejection",
        json={"id": client_id},
        headers=csrf(token),
    )


def test_decisions_and_the_move_guard(client, imported):
    token = _open(client)
    first, snow = _state(client, token)  # paragraph 0 only: the one reached
    assert [s["decision"] for s in (first, snow)] == [None, None]
    assert "source" not in first  # workers see "suggested", not which model

    refused = _move(client, token, 1)
    assert refused.status_code == 422
    error = refused.get_json()["error"]
    assert error["code"] == "suggestions_undecided"
    assert "paragraph 1" in error["message"] and "2 still undecided" in error["message"]

    accepted = save(client, token, _accept(first))
    assert accepted.status_code == 201, accepted.data
    assert accepted.get_json()["origin"] == "suggestion-accepted"
    rejection_id = str(uuid.uuid4())
    assert _reject(client, token, snow["id"], rejection_id).status_code == 201
    assert _reject(client, token, snow["id"], rejection_id).status_code == 200  # a replay
    assert [s["decision"] for s in _state(client, token)] == ["accepted", "rejected"]
    assert _move(client, token, 1).status_code == 200

    # Paragraph 1: an Edit (a shorter span, another category) and two more.
    edits = _state(client, token)[2:]
    assert [s["span"]["paragraph_id"] for s in edits] == [1, 1, 1]
    span = dict(edits[0]["span"])
    span["end"] = span["start"] + len("The story shifts")
    span["text"] = "The story shifts"
    edited = save(client, token, _accept(edits[0], span=span, category="salience"))
    assert edited.get_json()["origin"] == "suggestion-edited"
    assert edited.get_json()["suggestion_id"] == edits[0]["id"]
    assert _move(client, token, 2).status_code == 422
    for other in edits[1:]:
        assert _reject(client, token, other["id"], str(uuid.uuid4())).status_code == 201
    assert _move(client, token, 2).status_code == 200
    assert _move(client, token, 0).status_code == 200  # going back is always fine

    db.session.expire_all()
    origins = sorted(a.origin for a in db.session.scalars(db.select(Annotation)))
    assert origins == ["suggestion-accepted", "suggestion-edited"]


def test_one_decision_per_suggestion_and_removal_reopens_it(client, imported):
    token = _open(client)
    first, _snow = _state(client, token)
    body = _accept(first)
    assert save(client, token, body).status_code == 201
    assert save(client, token, body).status_code == 200  # the same Add again: a replay
    twice = save(client, token, _accept(first))
    assert twice.status_code == 409
    assert twice.get_json()["error"]["code"] == "suggestion_decided"
    assert _reject(client, token, first["id"], str(uuid.uuid4())).status_code == 409
    removed = client.delete(f"/api/sessions/{token}/annotations/{body['id']}", headers=csrf(token))
    assert removed.status_code == 204
    assert _state(client, token)[0]["decision"] is None  # undecided again
    assert _reject(client, token, first["id"], str(uuid.uuid4())).status_code == 201
    undo = client.delete(
        f"/api/sessions/{token}/suggestions/{first['id']}/rejection", headers=csrf(token)
    )
    assert undo.status_code == 204
    assert _state(client, token)[0]["decision"] is None
    db.session.expire_all()
    rejections = list(db.session.scalars(db.select(SuggestionRejection)))
    assert len(rejections) == 1 and rejections[0].withdrawn_at is not None  # kept


def test_unknown_suggestion_and_no_csrf(client, imported):
    token = _open(client)
    first = _state(client, token)[0]
    answer = save(client, token, _accept(first, suggestion_id="nope"))
    assert answer.status_code == 422
    assert answer.get_json()["error"]["code"] == "unknown_suggestion"
    refused = client.post(
        f"/api/sessions/{token}/suggestions/{first['id']}/rejection", json={"id": str(uuid.uuid4())}
    )
    assert refused.status_code in (400, 403)


def test_page_carries_the_reached_suggestions(client, imported):
    token = start(client, BOOK)
    page = client.get(f"/s/{token}").get_data(as_text=True)
    assert "Anderson accepts a promotion" in page
    assert "What is Dr. Snow" in page
    assert "Josie misses her flight" not in page  # paragraph 2: not reached
    db.session.expire_all()
    assert db.session.scalars(db.select(AnnotationSession.arm)).one() == "show"


# --- exports, figures and validation rounds ---------------------------------------------


def _decide_and_submit(client) -> tuple[str, list[dict]]:
    """A worker who accepts the first suggestion, rejects "Snow.", edits one of paragraph
    1, rejects the rest, adds one of their own and reads to the end."""
    token = _open(client)
    first, snow = _state(client, token)
    assert save(client, token, _accept(first)).status_code == 201
    assert _reject(client, token, snow["id"], str(uuid.uuid4())).status_code == 201
    paragraphs = summary_paragraphs()
    for paragraph_id in range(1, len(paragraphs)):
        assert _move(client, token, paragraph_id).status_code == 200
        undecided = [
            s
            for s in _state(client, token)
            if s["span"]["paragraph_id"] == paragraph_id and s["decision"] is None
        ]
        for number, suggestion in enumerate(undecided):
            if paragraph_id == 1 and number == 0:
                body = _accept(suggestion, comment="Why here?")
                assert save(client, token, body).get_json()["origin"] == "suggestion-edited"
            else:
                assert (
                    _reject(client, token, suggestion["id"], str(uuid.uuid4())).status_code == 201
                )
    own = paragraphs[1].index("Dr. Vincent")
    body = {
        "id": str(uuid.uuid4()),
        "category": "entity-omission",
        "span": {"paragraph_id": 1, "start": own, "end": own + 11, "text": "Dr. Vincent"},
        "comment": "Who is he?",
    }
    assert save(client, token, body).status_code == 201
    answer = client.post(f"/api/sessions/{token}/submit", headers=csrf(token))
    assert answer.status_code == 200, answer.data
    return token, _state(client, token)


def test_submit_waits_for_the_last_paragraph(client, imported):
    token = _open(client)
    for suggestion in _state(client, token):
        _reject(client, token, suggestion["id"], str(uuid.uuid4()))
    paragraphs = summary_paragraphs()
    for paragraph_id in range(1, len(paragraphs)):
        assert _move(client, token, paragraph_id).status_code == 200
        for suggestion in _state(client, token):
            if suggestion["decision"] is None and suggestion["span"]["paragraph_id"] < paragraph_id:
                raise AssertionError("a paragraph was passed with an undecided suggestion")
        if paragraph_id < len(paragraphs) - 1:
            for suggestion in _state(client, token):
                if suggestion["decision"] is None:
                    _reject(client, token, suggestion["id"], str(uuid.uuid4()))
    refused = client.post(f"/api/sessions/{token}/submit", headers=csrf(token))
    assert refused.status_code == 422
    assert refused.get_json()["error"]["code"] == "suggestions_undecided"
    for suggestion in _state(client, token):
        if suggestion["decision"] is None:
            _reject(client, token, suggestion["id"], str(uuid.uuid4()))
    assert client.post(f"/api/sessions/{token}/submit", headers=csrf(token)).status_code == 200


def test_exports_figures_and_rounds(app, client, runner, imported, researcher_client, tmp_path):
    _token, state = _decide_and_submit(client)
    result = runner.invoke(args=["export-annotations", "--format", "jsonl"])
    records = [json.loads(line) for line in result.output.splitlines()]
    origins = sorted((r["origin"], r["suggestion_id"] is None) for r in records)
    assert origins == [
        ("suggestion-accepted", False),
        ("suggestion-edited", False),
        ("worker", True),
    ]
    by_id = {s["id"]: s for s in state}
    for record in records:
        if record["suggestion_id"]:
            assert record["span"] == by_id[record["suggestion_id"]]["span"]
    csv_text = runner.invoke(args=["export-annotations", "--format", "csv"]).output
    header = csv_text.splitlines()[0]
    assert header.endswith("taxonomy_version,origin,suggestion_id,flagged,decoy")
    sessions = runner.invoke(args=["export-annotations", "--format", "csv", "--what", "sessions"])
    assert sessions.output.splitlines()[0].endswith(",arm,flagged,verification,taxonomy_version")
    # arm, flagged, verification (none: Prolific's API was not asked), taxonomy version
    version = current_taxonomy().version
    assert sessions.output.splitlines()[1].endswith(f",show,false,,{version}")

    exported = runner.invoke(args=["export-annotations", "--what", "suggestions"]).output
    suggestions = [json.loads(line) for line in exported.splitlines()]
    assert len(suggestions) == len(model_sentences())
    assert set(suggestions[0]) == {
        "suggestion_id",
        "source",
        "document_id",
        "category",
        "labels",  # issue 28: every type (category: the first)
        "span",
        "paired_span",
        "question",
        "decoy",  # issue 32: false unless imported with --decoy
        "decisions",
    }
    assert not any(s["decoy"] for s in suggestions)
    kinds = sorted(d["decision"] for s in suggestions for d in s["decisions"])
    assert kinds.count("accepted") == 1 and kinds.count("edited") == 1
    assert kinds.count("rejected") == len(suggestions) - 2
    with app.app_context():  # a fresh `g`: the test's context served the worker's pages
        download = researcher_client.get("/research/export/suggestions.jsonl")
        page = researcher_client.get("/research/").get_data(as_text=True)
    assert download.status_code == 200
    assert download.get_data(as_text=True) == exported
    csv_refused = runner.invoke(
        args=["export-annotations", "--what", "suggestions", "--format", "csv"]
    )
    assert csv_refused.exit_code == 2

    report = json.loads(runner.invoke(args=["study-report", "--format", "json"]).stdout)
    decided = len(suggestions)
    assert report["suggestions"] == {
        "gpt-4": {
            "accepted": round(100 / decided, 2),
            "edited": round(100 / decided, 2),
            "rejected": round(100 * (decided - 2) / decided, 2),
            "worker_added": round(100 / 3, 2),
        }
    }
    assert "Model suggestions" in page and "gpt-4" in page

    path = tmp_path / "suggestions.jsonl"
    path.write_text(exported, encoding="utf-8")
    args = ["validation", "create-round", "acc", "--items", str(path), "--decision", "accepted"]
    result = runner.invoke(args=args)
    assert result.exit_code == 0, result.output
    assert "Created round 'acc': 1 items" in result.output
    assert "gpt-4: 1" in result.output
    args = ["validation", "create-round", "rej", "--items", str(path), "--decision", "rejected"]
    result = runner.invoke(args=args)
    assert f"Created round 'rej': {decided - 2} items" in result.output


def test_the_readmes_prefixed_recipe_attaches_gpt4s_file_with_every_type(
    runner, booookscore_sample, tmp_path
):
    human = booookscore_sample / "human-annotations.json"
    model = booookscore_sample / "model-annotations.json"
    result = runner.invoke(args=["import-annotations", str(human), "--id-prefix", "inc-"])
    assert result.exit_code == 0, result.output
    # Without the prefix no sentence attaches: its books are stored as inc-<book>.
    unprefixed = runner.invoke(args=["import-suggestions", str(model), "--source", "gpt-4"])
    assert unprefixed.exit_code == 1 and "is not imported" in unprefixed.output
    result = runner.invoke(
        args=["import-suggestions", str(model), "--source", "gpt-4", "--id-prefix", "inc-"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(model.read_text("utf-8"))
    sentences = sum(len(entry) for entry in data.values())
    assert f"Imported {sentences} suggestion(s)" in result.output
    attached = db.select(Document.external_id).join(Suggestion).distinct()
    assert set(db.session.scalars(attached)) == {"inc-" + book for book in data}
    # Every type of a sentence is exported (category stays the first, one key).
    exported = runner.invoke(args=["export-annotations", "--what", "suggestions"]).output
    records = [json.loads(line) for line in exported.splitlines()]
    types = {
        ("inc-" + book, sentence): [t.replace(" ", "-") for t in dict.fromkeys(v["types"])]
        for book, entry in data.items()
        for sentence, v in entry.items()
    }
    assert len(records) == sentences
    several = 0
    for record in records:
        expected = types[(record["document_id"], record["span"]["text"])]
        assert record["labels"] == expected and record["category"] == expected[0]
        several += len(expected) > 1
    assert several  # the sample has sentences with several types
    path = tmp_path / "suggestions.jsonl"
    path.write_text(exported, "utf-8")
    result = runner.invoke(args=["validation", "create-round", "s", "--items", str(path)])
    assert result.exit_code == 0, result.output
    items = db.session.scalars(db.select(ValidationItem)).all()
    assert sorted(len(item.labels) for item in items) == sorted(
        len(types[(r["document_id"], r["span"]["text"])]) for r in records
    )
