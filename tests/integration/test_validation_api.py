"""The validator pages and API on both databases: assignment rules, every 4xx, blindness."""

from __future__ import annotations

import json
import re

import pytest

from app.core.extensions import db
from app.models import ValidationItem, ValidationJudgment, ValidationSession
from tests.support.taxonomies import taxonomy_variant, use_taxonomy
from tests.support.validation import (
    add_annotation,
    judge,
    make_documents,
    make_session,
    next_item,
    public_ids,
    start_validator,
    vcsrf,
    write_jsonl,
)
from tests.support.worker_api import token_from

# Distinctive source names: the blindness test looks for them in every response.
SOURCE_A = "srcalpha-secret"
SOURCE_B = "srcbeta-secret"
REASON_C = "C. Not addressing issues that matter"


def _create(runner, tmp_path, records, name="r", per_item=1):
    path = write_jsonl(tmp_path / f"{name}.jsonl", records)
    result = runner.invoke(
        args=[
            "validation",
            "create-round",
            name,
            "--items",
            str(path),
            "--judgments-per-item",
            str(per_item),
            "--seed",
            "1",
        ]
    )
    assert result.exit_code == 0, result.output


def _items(n=3):
    needles = ["Anna", "letter", "Nobody", "answered", "again"][:n]
    return [
        {
            "id": f"i{k}",
            "source": SOURCE_A if k % 2 else SOURCE_B,
            "document_id": "doc-b",
            "span": {"text": needle},
            "labels": ["new-person"],
            "question": f"Question {k}?",
        }
        for k, needle in enumerate(needles)
    ]


@pytest.fixture
def round_r(app, runner, tmp_path):
    make_documents()
    _create(runner, tmp_path, _items(3))
    return "r"


def test_link_redirects_to_a_session_page(client, round_r):
    token = start_validator(client, round_r, annotator="v1")
    assert token == start_validator(client, round_r, annotator="v1")  # resumed
    assert token != start_validator(client, round_r, annotator="v2")
    page = client.get(f"/v/{token}")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert vcsrf(token)["X-CSRFToken"] in html
    for label in ("Agree", "Partially agree", "Disagree", REASON_C):
        assert label in html
    assert page.headers["Referrer-Policy"] == "same-origin"
    assert client.get("/validate/no-such-round").status_code == 404
    assert client.get("/v/not-a-token").status_code == 404
    assert client.get("/api/validators/not-a-token/next").status_code == 404


def test_mturk_preview_creates_no_session(client, round_r):
    response = client.get(
        f"/validate/{round_r}", query_string={"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE"}
    )
    assert response.status_code == 200
    assert db.session.scalar(db.select(db.func.count(ValidationSession.id))) == 0


def test_a_validator_judges_every_item_once_then_gets_a_code(client, round_r):
    token = start_validator(client, round_r)
    seen = []
    while True:
        answer = next_item(client, token)
        if answer["item"] is None:
            break
        item = answer["item"]
        assert answer["progress"] == {"done": len(seen), "total": 3}
        assert next_item(client, token)["item"]["id"] == item["id"]  # same until judged
        assert item["document"]["paragraphs"][0]["paragraph_id"] == 0
        span = item["span"]
        text = item["document"]["paragraphs"][span["paragraph_id"]]["text"]
        assert text[span["start"] : span["end"]] == span["text"]
        assert item["label_names"] == ["New person not introduced"]
        response = judge(client, token, item["id"], "partial", [REASON_C], explanation=" why ")
        assert response.status_code == 201, response.data
        assert response.get_json()["judgment"]["explanation"] == "why"
        seen.append(item["id"])
    ids = public_ids(round_r)
    assert sorted(seen) == sorted(ids[k] for k in ("i0", "i1", "i2"))
    assert answer["progress"] == {"done": 3, "total": 3}
    assert answer["completion_code"]
    stored = db.session.scalars(db.select(ValidationJudgment)).all()
    assert {(j.verdict, tuple(j.reasons), j.validator) for j in stored} == {
        ("partial", (REASON_C,), "direct:v1")
    }


def test_an_mturk_validators_finish_says_where_to_submit_the_hit(app, client, runner, tmp_path):
    make_documents()
    _create(runner, tmp_path, _items(3), name="m", per_item=3)
    round_r = "m"
    mturk = {"workerId": "W7", "hitId": "H1", "turkSubmitTo": "https://www.mturk.com"}
    token = start_validator(client, round_r, assignmentId="A1", **mturk)
    # Re-accepted in the same browser: the work resumes, still bound to the assignment
    # that began it (a new assignment never rewrites another one's submit target).
    assert start_validator(client, round_r, assignmentId="A2", **mturk) == token
    while (answer := next_item(client, token))["item"] is not None:
        assert judge(client, token, answer["item"]["id"], "agree").status_code == 201
    assert answer["mturk"] == {
        "submit_to": "https://www.mturk.com/mturk/externalSubmit",
        "assignment_id": "A1",
    }
    other = start_validator(client, round_r, annotator="v9")
    while (answer := next_item(client, other))["item"] is not None:
        judge(client, other, answer["item"]["id"], "agree")
    assert answer["completion_code"] and answer["mturk"] is None
    forged = {"workerId": "W8", "assignmentId": "A3", "hitId": "H1"}
    response = client.get(
        f"/validate/{round_r}", query_string={**forged, "turkSubmitTo": "https://evil.example"}
    )
    assert response.status_code == 400  # only MTurk's own origins receive the form


def test_a_prolific_validator_is_sent_to_the_studys_completion_url(app, client, round_r):
    app.config["COMPLETION_URL"] = "https://app.prolific.com/submissions/complete?cc={code}"
    token = start_validator(client, round_r, PROLIFIC_PID="p-7", STUDY_ID="s", SESSION_ID="x")
    while (answer := next_item(client, token))["item"] is not None:
        assert judge(client, token, answer["item"]["id"], "agree").status_code == 201
    code = answer["completion_code"]
    assert answer["completion_url"] == f"https://app.prolific.com/submissions/complete?cc={code}"


def test_a_validator_who_finishes_completed_with_the_studys_fixed_code(
    app, client, round_r, tmp_path
):
    completion = "  completion: {completed: C1A2B3C4}\n"
    use_taxonomy(app, taxonomy_variant(tmp_path, study_lines=completion))
    token = start_validator(client, round_r, PROLIFIC_PID="p-7", STUDY_ID="s", SESSION_ID="x")
    while (answer := next_item(client, token))["item"] is not None:
        assert judge(client, token, answer["item"]["id"], "agree").status_code == 201
    assert answer["completion_code"]  # the app's own code is still kept (MTurk's form)
    assert answer["shown_code"] == "C1A2B3C4"  # the validator sees the study's own code
    assert answer["completion_url"] == "https://app.prolific.com/submissions/complete?cc=C1A2B3C4"
    assert answer["outcome"] == "completed"


def test_judgments_are_idempotent_and_final(client, round_r):
    token = start_validator(client, round_r)
    item_id = next_item(client, token)["item"]["id"]
    assert judge(client, token, item_id, "agree").status_code == 201
    again = judge(client, token, item_id, "agree")
    assert again.status_code == 200
    assert again.get_json()["judgment"]["verdict"] == "agree"
    changed = judge(client, token, item_id, "disagree", ["D. Other"])
    assert changed.status_code == 409
    assert changed.get_json()["error"]["code"] == "conflict"
    assert db.session.scalar(db.select(db.func.count(ValidationJudgment.id))) == 1


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"item_id": "nope", "verdict": "agree"}, 404, "not_found"),
        ({"item_id": "i0", "verdict": "maybe"}, 422, "invalid_verdict"),
        ({"item_id": "i0", "verdict": "partial"}, 422, "reasons_required"),
        ({"item_id": "i0", "verdict": "disagree", "reasons": []}, 422, "reasons_required"),
        ({"item_id": "i0", "verdict": "partial", "reasons": ["Z. Nope"]}, 422, "invalid_reason"),
        ({"item_id": "i0", "verdict": "agree", "reasons": "A"}, 400, "bad_request"),
        ({"item_id": 5, "verdict": "agree"}, 400, "bad_request"),
        ({"verdict": "agree"}, 400, "bad_request"),
        ({"item_id": "i0", "verdict": "agree", "source": "x"}, 400, "bad_request"),
        ({"item_id": "i0", "verdict": "agree", "explanation": 3}, 400, "bad_request"),
        ({"item_id": "i0", "verdict": "agree", "explanation": "x" * 5001}, 422, "too_long"),
        (["not", "an", "object"], 400, "bad_request"),
    ],
)
def test_bad_judgments_get_4xx_envelopes(client, round_r, body, status, code):
    token = start_validator(client, round_r)
    response = client.post(f"/api/validators/{token}/judgments", json=body, headers=vcsrf(token))
    assert response.status_code == status, response.data
    assert response.get_json()["error"]["code"] == code
    assert db.session.scalar(db.select(db.func.count(ValidationJudgment.id))) == 0


def test_writes_need_the_csrf_header_and_json(client, round_r):
    token = start_validator(client, round_r)
    body = {"item_id": "i0", "verdict": "agree"}
    url = f"/api/validators/{token}/judgments"
    assert client.post(url, json=body).status_code == 403
    other = start_validator(client, round_r, annotator="v2")
    assert client.post(url, json=body, headers=vcsrf(other)).status_code == 403
    response = client.post(url, data="item_id=i0", headers=vcsrf(token))
    assert response.status_code == 415
    response = client.post(
        url, data="{bad", headers={**vcsrf(token), "Content-Type": "application/json"}
    )
    assert response.status_code == 400


def test_judgments_are_rate_limited_per_validator(app, client, round_r):
    app.config["VALIDATE_WRITE_LIMIT"] = "2 per minute"
    token = start_validator(client, round_r)
    other = start_validator(client, round_r, annotator="v2")
    item_id = next_item(client, token)["item"]["id"]
    statuses = [judge(client, token, item_id).status_code for _ in range(3)]
    assert statuses == [201, 200, 429]
    refused = judge(client, token, item_id)
    assert refused.get_json()["error"]["code"] == "too_many_requests"
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    # Reading is not limited; another validator has a limit of their own.
    assert client.get(f"/api/validators/{token}/next").status_code == 200
    other_item = next_item(client, other)["item"]["id"]
    assert judge(client, other, other_item).status_code == 201


def test_each_item_gets_k_distinct_validators_least_judged_first(app, runner, client, tmp_path):
    make_documents()
    _create(runner, tmp_path, _items(3), name="k2", per_item=2)
    judged: dict[str, list[str]] = {}
    ids = public_ids("k2")
    for validator in ("v1", "v2", "v3", "v4"):
        token = start_validator(client, "k2", annotator=validator)
        while (item := next_item(client, token)["item"]) is not None:
            assert validator not in judged.get(item["id"], [])
            # Least judged first: no open item has fewer judgments than this one.
            counts = [len(judged.get(ids[f"i{k}"], [])) for k in range(3)]
            assert len(judged.get(item["id"], [])) == min(c for c in counts if c < 2)
            assert judge(client, token, item["id"]).status_code == 201
            judged.setdefault(item["id"], []).append(validator)
    assert sorted(len(v) for v in judged.values()) == [2, 2, 2]
    assert set(judged) == {ids[f"i{k}"] for k in range(3)}


def test_concurrent_validators_get_different_items(app, runner, client, tmp_path):
    make_documents()
    _create(runner, tmp_path, _items(2), name="c1")
    first = next_item(client, start_validator(client, "c1", annotator="v1"))["item"]["id"]
    second = next_item(client, start_validator(client, "c1", annotator="v2"))["item"]["id"]
    assert first != second
    third = next_item(client, start_validator(client, "c1", annotator="v3"))
    assert third["item"] is None  # both items are reserved by validators at work
    assert third["completion_code"] is None  # and no code for judging nothing


def test_a_served_item_stays_judgeable(app, runner, client, tmp_path):
    make_documents()
    _create(runner, tmp_path, _items(1), name="one")
    token = start_validator(client, "one", annotator="v1")
    i0 = public_ids("one")["i0"]
    assert next_item(client, token)["item"]["id"] == i0
    # An item that was never served to this validator and is full is refused...
    other = start_validator(client, "one", annotator="v2")
    response = judge(client, other, i0)
    assert response.status_code == 422
    assert response.get_json()["error"]["code"] == "not_available"
    # ...but the validator it was served to can always judge it.
    assert judge(client, token, i0).status_code == 201
    # The researcher's own id is not one a validator can use.
    assert judge(client, token, "i0").status_code == 404


def test_nobody_validates_their_own_annotations(app, runner, client, tmp_path):
    make_documents()
    alice = make_session("doc-a", "alice", status="submitted")
    add_annotation(alice, 0, "Zoë", "new-person", occurrence=1)
    export = tmp_path / "export.jsonl"
    assert runner.invoke(args=["export-annotations", "--output", str(export)]).exit_code == 0
    records = [
        {"id": "other", "source": "gpt-4", "document_id": "doc-b", "span": {"text": "Nobody"}},
        # Same annotator identity given explicitly, without the annotation link.
        {
            "id": "named",
            "source": "human",
            "document_id": "doc-b",
            "span": {"text": "answered"},
            "annotator_id": "direct:alice",
        },
    ]
    items = write_jsonl(tmp_path / "more.jsonl", records)
    result = runner.invoke(
        args=["validation", "create-round", "own", "--items", str(export), "--items", str(items)]
    )
    assert result.exit_code == 0, result.output
    token = start_validator(client, "own", annotator="alice")
    served = []
    while (item := next_item(client, token)["item"]) is not None:
        served.append(item["id"])
        assert judge(client, token, item["id"]).status_code == 201
    assert served == [public_ids("own")["other"]]
    linked = db.session.scalars(
        db.select(ValidationItem.public_id).where(ValidationItem.annotation_id.is_not(None))
    ).one()
    for own in (public_ids("own")["named"], linked):
        response = judge(client, token, own)
        assert response.status_code == 422
        assert response.get_json()["error"]["code"] == "not_available"
    bob = start_validator(client, "own", annotator="bob")
    count = 0
    while (item := next_item(client, bob)["item"]) is not None:
        assert judge(client, bob, item["id"]).status_code == 201
        count += 1
    assert count == 2  # bob gets alice's two items (the "other" one is full)


def test_validators_never_see_the_source(app, runner, client, tmp_path):
    make_documents()
    _create(runner, tmp_path, _items(5), name="blind", per_item=2)
    bodies = []
    for validator in ("v1", "v2"):
        link = client.get("/validate/blind", query_string={"annotator": validator})
        bodies.append(link.get_data(as_text=True))
        token = token_from(link)
        page = client.get(f"/v/{token}")
        bodies.append(page.get_data(as_text=True))
        while True:
            response = client.get(f"/api/validators/{token}/next")
            bodies.append(response.get_data(as_text=True))
            item = response.get_json()["item"]
            if item is None:
                break
            assert "source" not in item and "origin_annotator" not in item
            posted = judge(client, token, item["id"], "disagree", ["D. Other"])
            bodies.append(posted.get_data(as_text=True))
            bodies.append(judge(client, token, item["id"], "agree").get_data(as_text=True))
    assert len(bodies) > 20
    for body in bodies:
        assert SOURCE_A not in body
        assert SOURCE_B not in body
        assert "srcalpha" not in body and "srcbeta" not in body


def test_validators_see_opaque_item_ids_whatever_the_origin(app, runner, client, tmp_path):
    # Items from the suggestions export keep their suggestion ids ("gpt-4-turbo-66ff..."),
    # which name the model; an items file may name the annotator. Validators see an opaque
    # id per item; researchers, the report and import-judgments keep the original one.
    make_documents()
    records = [
        {"id": "gpt-4-turbo-66ff0a1b2c3d", "source": "gpt-4-turbo", "span": {"text": "Nobody"}},
        {"id": "human-alice-7", "source": "human", "span": {"text": "answered"}},
        {"source": "claude", "span": {"text": "letter"}},  # an id generated from content
    ]
    for record in records:
        record |= {"document_id": "doc-b", "labels": ["new-person"]}
    _create(runner, tmp_path, records, name="opaque")
    originals = {i.external_id for i in db.session.scalars(db.select(ValidationItem))}
    assert {"gpt-4-turbo-66ff0a1b2c3d", "human-alice-7"} < originals
    token = start_validator(client, "opaque", annotator="v1")
    bodies = [client.get(f"/v/{token}").get_data(as_text=True)]
    verdicts = {"Nobody": "disagree", "answered": "agree", "letter": "partial"}
    while (item := next_item(client, token)["item"]) is not None:
        bodies.append(client.get(f"/api/validators/{token}/next").get_data(as_text=True))
        assert re.fullmatch(r"item-[0-9a-f]{20}", item["id"]), item["id"]
        verdict = verdicts[item["span"]["text"]]
        reasons = [] if verdict == "agree" else ["Other"]
        posted = judge(client, token, item["id"], verdict, reasons)
        assert posted.status_code == 201, posted.data
        assert posted.get_json()["judgment"]["item_id"] == item["id"]
        bodies.append(posted.get_data(as_text=True))
    for body in bodies:
        for original in originals:
            assert original not in body
        # (Not the hex tail alone: a random CSRF token may hold any four hex digits.)
        assert "gpt-4" not in body and "human-alice" not in body
    # The report maps each judgment to its item (and so to its source).
    report = json.loads(
        runner.invoke(args=["validation", "report", "opaque", "--format", "json"]).output
    )
    by_source = {
        name: (row["agree"], row["partial"], row["disagree"])
        for name, row in report["by_source"].items()
    }
    assert by_source == {"gpt-4-turbo": (0, 0, 1), "human": (1, 0, 0), "claude": (0, 1, 0)}
    # Judgments made elsewhere still name the researcher's ids.
    path = write_jsonl(
        tmp_path / "judgments.jsonl",
        [
            {
                "item_id": "human-alice-7",
                "validator": "lab-1",
                "verdict": "disagree",
                "reasons": ["Other"],
            }
        ],
    )
    result = runner.invoke(args=["validation", "import-judgments", "opaque", str(path)])
    assert result.exit_code == 0, result.output
    report = json.loads(
        runner.invoke(args=["validation", "report", "opaque", "--format", "json"]).output
    )
    assert report["by_source"]["human"]["disagree"] == 1
