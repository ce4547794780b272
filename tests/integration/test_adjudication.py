"""Adjudication API, gold export and promote-gold, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import uuid

import pytest

from app.core.extensions import db
from app.crowd.settings import study_settings
from app.models import AdjudicationDecision, Document
from app.research.dashboard import load_study
from tests.support.adjudication import (
    DECIDE_URL,
    DOC_ID,
    JSON,
    PARAGRAPHS,
    STATE_URL,
    adjudicate_all,
    by_category,
    candidates,
    csrf_token,
    decide,
    seed_adjudication_document,
    submitted_session,
)


@pytest.fixture
def seeded(app):
    return seed_adjudication_document()


def test_state_groups_three_annotators_spans_into_candidates(seeded, researcher_client):
    state = researcher_client.get(STATE_URL).get_json()
    assert state["annotators"] == ["direct:ann-1", "direct:ann-2", "direct:ann-3"]
    assert [p["text"] for p in state["document"]["paragraphs"]] == PARAGRAPHS
    summary = [(c["category"], c["paragraph_id"], c["annotators"]) for c in state["candidates"]]
    assert summary == [
        ("new-person", 0, ["direct:ann-1", "direct:ann-2", "direct:ann-3"]),
        ("missing-info", 0, ["direct:ann-2"]),
        ("repetition", 1, ["direct:ann-1", "direct:ann-3"]),
        ("ungrammatical", 1, ["direct:ann-1"]),
    ]
    first = state["candidates"][0]
    assert {m["comment"] for m in first["marks"]} == {"Who is Bob?", None, "never introduced"}
    assert first["union"]["span"]["text"] == "met Bob at"
    assert state["decisions"] == []


def test_anonymous_gets_401_json_and_login_redirect(seeded, client):
    assert client.get(STATE_URL, headers=JSON).status_code == 401
    assert client.get(STATE_URL, headers=JSON).get_json()["error"]["code"] == "unauthorized"
    assert client.post(DECIDE_URL, json={}, headers=JSON).status_code in (400, 401)
    page = client.get(f"/research/documents/{DOC_ID}/adjudicate")
    assert page.status_code == 302 and "/research/login" in page.headers["Location"]


def test_decision_without_csrf_token_is_refused(seeded, researcher_client):
    key = candidates(researcher_client)[0]["key"]
    response = researcher_client.post(
        DECIDE_URL, json={"id": str(uuid.uuid4()), "candidate": key, "decision": "accept"}
    )
    assert response.status_code == 400
    assert db.session.scalar(db.select(db.func.count(AdjudicationDecision.id))) == 0


def test_decisions_are_idempotent_and_later_ones_supersede(seeded, researcher_client):
    token = csrf_token(researcher_client)
    key = by_category(researcher_client, "new-person")["key"]
    decision_id = str(uuid.uuid4())
    first = decide(researcher_client, token, id=decision_id, candidate=key, decision="accept")
    assert first.status_code == 201
    assert first.get_json()["result"]["span"]["text"] == "met Bob"  # a tie: the earliest
    assert first.get_json()["decided_by"] == "researcher@example.org"
    again = decide(researcher_client, token, id=decision_id, candidate=key, decision="accept")
    assert again.status_code == 200 and again.get_json() == first.get_json()
    other = decide(researcher_client, token, id=decision_id, candidate=key, decision="reject")
    assert other.status_code == 409
    merge = decide(
        researcher_client,
        token,
        candidate=key,
        decision="merge",
        boundary="direct:ann-3",
        category="unclear-coreference",
    )
    assert merge.status_code == 201
    assert merge.get_json()["result"]["span"]["text"] == "Bob at"
    state = researcher_client.get(STATE_URL).get_json()
    assert [d["decision"] for d in state["decisions"]] == ["merge"]
    assert state["history"] == 2  # the accept is kept


def test_bad_decisions_get_clear_errors(seeded, researcher_client):
    token = csrf_token(researcher_client)
    key = by_category(researcher_client, "new-person")["key"]
    unknown = decide(researcher_client, token, candidate="c-0000", decision="accept")
    assert unknown.status_code == 404
    boundary = decide(researcher_client, token, candidate=key, decision="merge", boundary="x:y")
    assert boundary.status_code == 422 and boundary.get_json()["error"]["details"]["field"]
    category = decide(researcher_client, token, candidate=key, decision="merge", category="nope")
    assert category.status_code == 422
    assert category.get_json()["error"]["code"] == "unknown_category"
    shape = decide(researcher_client, token, candidate=key, decision="maybe")
    assert shape.status_code == 400
    wrong_text = decide(
        researcher_client,
        token,
        decision="own",
        category="new-person",
        span={"paragraph_id": 0, "start": 0, "end": 4, "text": "Bob!"},
    )
    assert wrong_text.status_code == 422
    assert wrong_text.get_json()["error"]["code"] == "quote_mismatch"


def test_own_span_counts_code_points_and_can_be_rejected(seeded, researcher_client):
    token = csrf_token(researcher_client)
    start = PARAGRAPHS[1].index("all day")  # after an emoji: one code point, two UTF-16 units
    own = decide(
        researcher_client,
        token,
        decision="own",
        category="ungrammatical",
        span={"paragraph_id": 1, "start": start, "end": start + 7, "text": "all day"},
    )
    assert own.status_code == 201
    key = own.get_json()["candidate"]
    assert key.startswith("own-")
    removed = decide(researcher_client, token, candidate=key, decision="reject")
    assert removed.status_code == 201
    assert list(_gold(researcher_client)) == []


def _gold(client) -> list[dict]:
    response = client.get("/research/export/gold.jsonl")
    assert response.status_code == 200
    return [json.loads(line) for line in response.text.splitlines()]


def test_gold_export_equals_the_decisions_with_provenance(seeded, researcher_client, runner):
    adjudicate_all(researcher_client)
    records = _gold(researcher_client)
    summary = [
        (r["paragraph_id"], r["category"], r["span"]["text"], r["provenance"]) for r in records
    ]
    everyone = ["direct:ann-1", "direct:ann-2", "direct:ann-3"]
    decider = "researcher@example.org"
    assert summary == [
        (
            0,
            "new-person",
            "met Bob at",
            {"annotators": everyone, "merged": True, "decided_by": decider},
        ),
        (
            1,
            "abrupt-transition",
            "Then",
            {"annotators": [], "merged": False, "decided_by": decider},
        ),
        (
            1,
            "repetition",
            "Anna met Bob again",
            {
                "annotators": ["direct:ann-1", "direct:ann-3"],
                "merged": False,
                "decided_by": decider,
            },
        ),
    ]
    repetition = records[2]
    assert repetition["paired_span"] == {
        "paragraph_id": 0,
        "start": 0,
        "end": 12,
        "text": "Anna met Bob",
    }
    assert repetition["annotator_id"] == "adjudication:gold" and repetition["submitted"] is True
    assert records[1]["comment"] == "my own"
    for record in records:  # the export record's keys, plus provenance
        assert set(record) >= {"document_id", "category_name", "category_type", "created_at"}
        span = record["span"]
        assert PARAGRAPHS[span["paragraph_id"]][span["start"] : span["end"]] == span["text"]
    one = researcher_client.get(f"/research/export/gold.jsonl?document={DOC_ID}")
    assert [json.loads(line) for line in one.text.splitlines()] == records
    assert researcher_client.get("/research/export/gold.jsonl?document=nope").status_code == 404
    cli = runner.invoke(args=["export-gold", "--format", "jsonl"])
    assert cli.exit_code == 0, cli.output
    assert [json.loads(line) for line in cli.output.splitlines()] == records
    csv_out = runner.invoke(args=["export-gold", "--format", "csv"])
    lines = csv_out.output.lstrip("\ufeff").splitlines()
    assert lines[0].endswith("provenance_annotators,provenance_merged,provenance_decided_by")
    assert len(lines) == 4


def _figures() -> tuple:
    """What the dashboard shows of the study: per document its check flag and figures,
    per annotator their attention-check scores."""
    study = load_study(study_settings())
    documents = {
        row.external_id: (row.is_check, row.coherence, row.alpha, row.f1, len(row.sessions))
        for row in study.documents
    }
    scores = {row.label: (row.gold.total, row.gold.found_any) for row in study.annotators}
    return documents, scores, study.pooled_alpha, study.mean_f1


def test_promote_gold_copies_the_document_as_a_new_attention_check(
    seeded, researcher_client, runner
):
    """Issue 27.4: promoting a finished study document made it an attention check, its
    workers rescored as check takers and the dashboard's figures gone. Now a copy is."""
    adjudicate_all(researcher_client)
    db.session.expire_all()
    documents, scores, alpha, f1 = _figures()
    original = db.session.scalar(db.select(Document).filter_by(external_id=DOC_ID))
    before = (original.gold, original.content_hash, original.title, original.meta)
    result = runner.invoke(args=["promote-gold", DOC_ID])
    assert result.exit_code == 0, result.output
    assert "3 gold span(s)" in result.output and f"{DOC_ID} itself is unchanged" in result.output

    db.session.expire_all()
    original = db.session.scalar(db.select(Document).filter_by(external_id=DOC_ID))
    assert (original.gold, original.content_hash, original.title, original.meta) == before
    assert not original.is_attention_check
    copy = db.session.scalar(db.select(Document).filter_by(external_id=f"{DOC_ID}-gold"))
    assert copy.is_attention_check and copy.meta == {"promoted_from": DOC_ID}
    # Workers never see that a document is a check (issue 26.5): the source's own title.
    assert copy.title == original.title
    assert [p.text for p in copy.paragraphs] == PARAGRAPHS
    assert [(g["category"], g.get("explanation")) for g in copy.gold] == [
        ("new-person", None),
        ("abrupt-transition", "my own"),  # the decision's note explains the span
        ("repetition", None),
    ]
    # The original's readings and every figure made from them are exactly as they were;
    # the new check joins the table with no sessions.
    documents_after, scores_after, alpha_after, f1_after = _figures()
    new_row = documents_after.pop(f"{DOC_ID}-gold")
    assert new_row[0] is True and new_row[4] == 0
    assert (documents_after, scores_after, alpha_after, f1_after) == (documents, scores, alpha, f1)

    # Again with the same gold: nothing changes; with other answers while nobody took
    # the check: the copy follows; once a worker took it: refused, nothing changed.
    again = runner.invoke(args=["promote-gold", DOC_ID])
    assert again.exit_code == 0 and "1 unchanged" in again.output, again.output
    copy_id = copy.id
    submitted_session(copy_id, "ann-9", len(PARAGRAPHS) - 1)
    db.session.commit()
    repetition = by_category(researcher_client, "repetition")["key"]
    token = csrf_token(researcher_client)
    decide(researcher_client, token, candidate=repetition, decision="reject")
    refused = runner.invoke(args=["promote-gold", DOC_ID])
    assert refused.exit_code == 1 and "already took this check" in refused.output
    db.session.expire_all()
    assert len(db.session.get(Document, copy_id).gold) == 3
    other = runner.invoke(args=["promote-gold", DOC_ID, "--id", "second-check"])
    assert other.exit_code == 0, other.output
    second = db.session.scalar(db.select(Document).filter_by(external_id="second-check"))
    assert len(second.gold) == 2
    taken = runner.invoke(args=["promote-gold", DOC_ID, "--id", DOC_ID])
    assert taken.exit_code == 1 and "is not" in taken.output


def test_promote_gold_refuses_a_document_without_decisions(seeded, runner):
    result = runner.invoke(args=["promote-gold", DOC_ID])
    assert result.exit_code != 0
    assert "no adjudicated spans" in result.output
    missing = runner.invoke(args=["promote-gold", "nope"])
    assert missing.exit_code != 0 and "no document" in missing.output


def test_agreement_command_gives_gamma_and_linked_pair_f1(seeded, runner):
    from app.adjudication.boundary_agreement import document_units
    from app.adjudication.gamma import gamma

    result = runner.invoke(args=["agreement", "--gamma", "--format", "json", "--samples", "5"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output[result.output.index("{") :])
    (row,) = report["documents"]
    assert row["document_id"] == DOC_ID and row["annotators"] == 3
    units, _, _ = document_units(seeded.id)
    # Paragraph 1's spans sit after paragraph 0 and one separator.
    assert min(u.start for u in units if u.category == "repetition") == len(PARAGRAPHS[0]) + 1 + 5
    assert row["gamma"] == gamma(units, samples=5, seed=0).gamma
    # Repetition: ann-1 and ann-3 linked pairs match (F1 1); pairs with ann-2, who has
    # none, score 0: mean 1/3.
    assert row["linked_pair_f1"] == pytest.approx(1 / 3)
    figure = report["agreement"]["gamma"]
    assert figure["value"] == row["gamma"] and figure["ci95"] is None  # one document
    assert "Mathet" in figure["unit"]
    table = runner.invoke(args=["agreement", "--gamma", "--samples", "5"])
    assert table.exit_code == 0 and DOC_ID in table.output
    missing = runner.invoke(args=["agreement", "--gamma", "--document", "nope"])
    assert missing.exit_code != 0 and "no document" in missing.output


def test_gold_export_is_accepted_as_validation_items(seeded, researcher_client, runner, tmp_path):
    from app.models import ValidationItem

    adjudicate_all(researcher_client)
    path = tmp_path / "gold.jsonl"
    exported = runner.invoke(args=["export-gold", "--output", str(path)])
    assert exported.exit_code == 0, exported.output
    created = runner.invoke(args=["validation", "create-round", "gold-1", "--items", str(path)])
    assert created.exit_code == 0, created.output
    items = db.session.scalars(db.select(ValidationItem).order_by(ValidationItem.id)).all()
    assert sorted(i.span_text for i in items) == ["Anna met Bob again", "Then", "met Bob at"]
    assert {i.origin_annotator for i in items} == {"adjudication:gold"}
    assert {i.source for i in items} == {"gold"}


def test_replay_after_the_candidate_changed_still_answers_200(seeded, researcher_client):
    from app.models import Annotation

    token = csrf_token(researcher_client)
    key = by_category(researcher_client, "missing-info")["key"]
    body = {"id": str(uuid.uuid4()), "candidate": key, "decision": "accept"}
    assert decide(researcher_client, token, **body).status_code == 201
    # A fourth annotator submits a span joining that candidate: its key changes.
    session = submitted_session(seeded.id, "ann-4", 1)
    start = PARAGRAPHS[0].index("old mill")
    db.session.add(
        Annotation(
            session_id=session.id,
            client_id=str(uuid.uuid4()),
            paragraph_id=0,
            span_start=start,
            span_end=start + 8,
            span_text="old mill",
            category="missing-info",
        )
    )
    db.session.commit()
    assert by_category(researcher_client, "missing-info")["key"] != key
    replay = decide(researcher_client, token, **body)
    assert replay.status_code == 200
    assert replay.get_json()["candidate"] == key


def test_own_paired_span_needs_and_keeps_its_second_span(seeded, researcher_client):
    token = csrf_token(researcher_client)
    later = PARAGRAPHS[1].index("the mill")
    span = {"paragraph_id": 1, "start": later, "end": later + 8, "text": "the mill"}
    alone = decide(researcher_client, token, decision="own", category="repetition", span=span)
    assert alone.status_code == 422
    assert alone.get_json()["error"]["code"] == "paired_span_required"
    earlier = PARAGRAPHS[0].index("the old mill")
    paired = {"paragraph_id": 0, "start": earlier, "end": earlier + 12, "text": "the old mill"}
    saved = decide(
        researcher_client,
        token,
        decision="own",
        category="repetition",
        span=span,
        paired_span=paired,
    )
    assert saved.status_code == 201
    (record,) = _gold(researcher_client)
    assert record["paired_span"] == paired and record["category_type"] == "paired"
