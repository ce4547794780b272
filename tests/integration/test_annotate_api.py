"""The worker JSON API on both databases: every success, every 4xx, replays and races."""

from __future__ import annotations

import json
import re
import threading
import uuid

import pytest
from openapi_spec_validator import validate as validate_openapi

from app import create_app
from app.core.extensions import db
from app.models import Annotation
from tests.support.apps import ROOT, dispose_engines, make_test_config
from tests.support.worker_api import (
    PARAGRAPHS,
    body,
    csrf,
    error_of,
    make_document,
    make_stale,
    move,
    save,
    session_row,
    span,
    start_session,
    submit,
)

XSS = '<img src=x onerror="alert(1)"><script>alert(2)</script>'


@pytest.fixture
def token(app, client) -> str:
    """A session of annotator alice on doc-1."""
    make_document()
    return start_session(client)


# --- GET ---------------------------------------------------------------------------------


def test_get_session_shows_reached_paragraphs_taxonomy_and_progress(client, token):
    response = client.get(f"/api/sessions/{token}")
    assert response.status_code == 200
    assert response.headers["Cache-Control"] == "no-store"
    state = response.get_json()
    # Not "doc-1": the worker knows the document by an opaque id of their session.
    assert re.fullmatch(r"doc-[0-9a-f]{20}", state["document"]["id"])
    assert state["document"]["id"] == client.get(f"/api/sessions/{token}").json["document"]["id"]
    assert state["document"] == {
        "id": state["document"]["id"],
        "title": "A voyage",
        "language": None,
        "direction": None,
        "total_paragraphs": 3,
        "paragraphs": [{"paragraph_id": 0, "text": PARAGRAPHS[0]}],
    }
    assert state["position"] == 0
    assert state["furthest"] == 0
    assert state["status"] == "active"
    assert state["annotations"] == []
    assert [c["key"] for c in state["taxonomy"]["categories"]][:2] == ["new-person", "missing-info"]
    assert "study" not in state["taxonomy"]
    # entities: auto; the document has no list of its own.
    assert state["entities"] == ["Łukasz"]


def test_get_session_uses_the_documents_own_entities(app, client):
    make_document("doc-e", entities=("Zoë", "the ship"))
    token = start_session(client, "doc-e")
    assert client.get(f"/api/sessions/{token}").get_json()["entities"] == ["Zoë", "the ship"]


def test_get_session_updates_last_seen(client, token):
    stale = make_stale(token)
    client.get(f"/api/sessions/{token}")
    assert session_row(token).last_seen_at > stale


def test_last_seen_is_written_at_most_once_a_minute(client, token):
    client.get(f"/api/sessions/{token}")  # the first load is written at once (claims)
    recent = session_row(token).last_seen_at
    client.get(f"/api/sessions/{token}")
    assert session_row(token).last_seen_at == recent


def test_unknown_token_is_a_404_envelope_for_every_call(client, token):
    bogus = "x" * 32
    calls = [
        client.get(f"/api/sessions/{bogus}"),
        save(client, bogus, body(), headers=csrf(bogus)),
        client.delete(f"/api/sessions/{bogus}/annotations/{uuid.uuid4()}", headers=csrf(bogus)),
        client.put(
            f"/api/sessions/{bogus}/position", json={"paragraph_id": 0}, headers=csrf(bogus)
        ),
        client.post(f"/api/sessions/{bogus}/submit", headers=csrf(bogus)),
        client.get(f"/api/sessions/{'y' * 500}"),
    ]
    for response in calls:
        assert response.status_code == 404
        assert error_of(response)["code"] == "not_found"


# --- CSRF and body format ----------------------------------------------------------------


@pytest.mark.parametrize(
    "headers",
    [{}, {"X-CSRFToken": ""}, {"X-CSRFToken": "0" * 64}],
    ids=["missing", "empty", "wrong"],
)
def test_writes_without_the_right_csrf_token_are_refused(client, token, headers):
    annotation_id = str(uuid.uuid4())
    calls = [
        save(client, token, body(id=annotation_id), headers=headers),
        client.delete(f"/api/sessions/{token}/annotations/{annotation_id}", headers=headers),
        client.put(f"/api/sessions/{token}/position", json={"paragraph_id": 1}, headers=headers),
        client.post(f"/api/sessions/{token}/submit", headers=headers),
    ]
    for response in calls:
        assert response.status_code == 403
        assert error_of(response)["code"] == "csrf_failed"
    assert db.session.scalar(db.select(db.func.count(Annotation.id))) == 0
    assert session_row(token).furthest == 0


def test_another_sessions_csrf_token_does_not_work(client, token):
    other = start_session(client, annotator="bob")
    response = save(client, token, body(), headers=csrf(other))
    assert response.status_code == 403


def test_body_must_be_json(client, token):
    response = client.post(
        f"/api/sessions/{token}/annotations",
        data="id=1&category=x",
        content_type="application/x-www-form-urlencoded",
        headers=csrf(token),
    )
    assert response.status_code == 415
    assert error_of(response)["code"] == "unsupported_media_type"
    response = client.put(
        f"/api/sessions/{token}/position", data="1", content_type="text/plain", headers=csrf(token)
    )
    assert response.status_code == 415


@pytest.mark.parametrize("raw", ['{"id": ', "not json", "\xff\xfe", ""], ids=repr)
def test_malformed_json_is_a_400(client, token, raw):
    response = client.post(
        f"/api/sessions/{token}/annotations",
        data=raw.encode("latin-1"),
        content_type="application/json",
        headers=csrf(token),
    )
    assert response.status_code == 400
    assert error_of(response)["code"] == "bad_request"


@pytest.mark.parametrize("payload", [[1, 2], "text", 3, None])
def test_json_that_is_not_an_object_is_a_400(client, token, payload):
    raw = json.dumps(payload)
    for method, url in (
        (client.post, f"/api/sessions/{token}/annotations"),
        (client.put, f"/api/sessions/{token}/position"),
        (client.post, f"/api/sessions/{token}/submit"),
    ):
        response = method(url, data=raw, content_type="application/json", headers=csrf(token))
        assert response.status_code == 400
        assert "JSON object" in error_of(response)["message"]
    assert session_row(token).status == "active"


def test_too_large_body_is_a_413_envelope(app, client, token):
    app.config["MAX_CONTENT_LENGTH"] = 1000
    response = save(client, token, body(comment="x" * 5000))
    assert response.status_code == 413
    assert error_of(response)["code"] == "request_entity_too_large"


# --- POST annotations: validation ------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "code", "field"),
    [
        ({"status": "submitted"}, "unknown_field", "status"),
        ({"deleted_at": "2020-01-01"}, "unknown_field", "deleted_at"),
        ({"span": {**span(0, "Zoë"), "furthest": 2}}, "unknown_field", "span.furthest"),
        ({"id": None}, "invalid_field", "id"),
        ({"id": "not-a-uuid"}, "invalid_field", "id"),
        ({"id": 12}, "invalid_field", "id"),
        ({"category": 3}, "invalid_field", "category"),
        ({"span": {**span(0, "Zoë"), "start": "0"}}, "invalid_field", "span.start"),
        ({"span": {**span(0, "Zoë"), "end": 3.0}}, "invalid_field", "span.end"),
        ({"span": {**span(0, "Zoë"), "paragraph_id": True}}, "invalid_field", "span.paragraph_id"),
        ({"span": "Zoë"}, "invalid_field", "span"),
        ({"comment": ["a"]}, "invalid_field", "comment"),
    ],
)
def test_wrong_shapes_are_422_naming_the_field(client, token, overrides, code, field):
    response = save(client, token, body(**overrides))
    assert response.status_code == 422
    error = error_of(response)
    assert (error["code"], error["details"]["field"]) == (code, field)


@pytest.mark.parametrize(
    "comment", ["nul\x00byte", "lone \ud800 surrogate"], ids=["nul", "surrogate"]
)
def test_unstorable_comment_text_is_422_not_500(client, token, comment):
    raw = json.dumps(body(comment=comment))  # ensure_ascii: \u0000 and \ud800 escapes
    response = client.post(
        f"/api/sessions/{token}/annotations",
        data=raw,
        content_type="application/json",
        headers=csrf(token),
    )
    assert response.status_code == 422
    assert error_of(response)["details"]["field"] == "comment"
    assert _stored_count() == 0


def test_surrogates_elsewhere_are_refused_cleanly(client, token):
    for data in (
        body(category="\ud800"),
        body(span={**span(0, "Zoë"), "text": "\ud800"}),
        body(id="\ud800"),
    ):
        response = client.post(
            f"/api/sessions/{token}/annotations",
            data=json.dumps(data),
            content_type="application/json",
            headers=csrf(token),
        )
        assert response.status_code == 422
    assert (
        client.delete(
            f"/api/sessions/{token}/annotations/%ED%A0%80", headers=csrf(token)
        ).status_code
        == 404
    )


def test_missing_fields_are_422(client, token):
    data = body()
    del data["span"]
    error = error_of(save(client, token, data))
    assert (error["code"], error["details"]["field"]) == ("missing_field", "span")


def _stored_count() -> int:
    return db.session.scalar(db.select(db.func.count(Annotation.id)))


@pytest.mark.parametrize(
    ("overrides", "code", "field"),
    [
        ({"span": {**span(0, "Zoë"), "text": "Zoe"}}, "quote_mismatch", "span.text"),
        ({"span": {**span(0, "Zoë"), "end": 999}}, "out_of_range", "span"),
        ({"span": {**span(0, "Zoë"), "start": -1}}, "out_of_range", "span"),
        ({"span": {**span(0, "Zoë"), "start": 3, "end": 3}}, "out_of_range", "span"),
        (
            {"span": {**span(0, "Zoë"), "paragraph_id": -1}},
            "no_such_paragraph",
            "span.paragraph_id",
        ),
        ({"span": span(1, "ship")}, "beyond_furthest", "span.paragraph_id"),
        (
            {"span": {**span(0, "Zoë"), "paragraph_id": 2**40}},
            "beyond_furthest",
            "span.paragraph_id",
        ),
        ({"span": {"paragraph_id": 0, "start": 3, "end": 4, "text": " "}}, "blank_span", "span"),
        ({"category": "no-such-category"}, "unknown_category", "category"),
        ({"category": "repetition"}, "paired_span_required", "paired_span"),
        ({"paired_span": span(0, "Zoë")}, "paired_span_forbidden", "paired_span"),
        (
            {"category": "repetition", "span": span(0, "Zoë", 1), "paired_span": span(0, "Zoë", 1)},
            "paired_span_same",
            "paired_span",
        ),
        (
            {"category": "repetition", "paired_span": {**span(0, "Zoë"), "text": "Zo"}},
            "quote_mismatch",
            "paired_span.text",
        ),
        ({"comment": "x" * 2001}, "comment_too_long", "comment"),
    ],
)
def test_span_rules_are_422_with_the_rules_code(client, token, overrides, code, field):
    response = save(client, token, body(**overrides))
    assert response.status_code == 422, response.get_json()
    error = error_of(response)
    assert (error["code"], error["details"]["field"]) == (code, field)
    assert _stored_count() == 0


def test_paired_span_must_not_be_later_than_the_span(client, token):
    assert move(client, token, 1).status_code == 200
    data = body(category="repetition", span=span(0, "Zoë"), paired_span=span(1, "ship"))
    error = error_of(save(client, token, data))
    assert (error["code"], error["details"]["field"]) == (
        "paired_span_later",
        "paired_span.paragraph_id",
    )


def test_comment_limit_is_the_smaller_of_taxonomy_and_config(app, client, token):
    app.config["MAX_COMMENT_LENGTH"] = 10
    assert error_of(save(client, token, body(comment="x" * 11)))["code"] == "comment_too_long"
    assert save(client, token, body(comment="x" * 10)).status_code == 201


# --- POST annotations: storing and replays ----------------------------------------------


def test_save_stores_code_point_offsets_and_returns_201(client, token):
    data = body(span=span(0, "🚢 Łukasz"), comment="  unsure  ")
    response = save(client, token, data)
    assert response.status_code == 201
    stored = response.get_json()
    assert stored["id"] == data["id"]
    assert stored["span"] == {"paragraph_id": 0, "start": 8, "end": 16, "text": "🚢 Łukasz"}
    assert stored["paired_span"] is None
    assert stored["comment"] == "  unsure  "
    assert stored["created_at"].endswith("+00:00")
    row = db.session.scalars(db.select(Annotation)).one()
    assert (row.span_start, row.span_end) == (8, 16)
    assert PARAGRAPHS[0][row.span_start : row.span_end] == row.span_text
    assert row.client_id == data["id"]


def test_paired_annotation_round_trips(client, token):
    data = body(category="repetition", span=span(0, "Zoë", 1), paired_span=span(0, "Zoë"))
    response = save(client, token, data)
    assert response.status_code == 201
    assert response.get_json()["paired_span"] == span(0, "Zoë")
    annotations = client.get(f"/api/sessions/{token}").get_json()["annotations"]
    assert annotations == [response.get_json()]


def test_upper_case_uuid_is_stored_in_canonical_form(client, token):
    annotation_id = str(uuid.uuid4())
    response = save(client, token, body(id=annotation_id.upper()))
    assert response.get_json()["id"] == annotation_id


def test_empty_comment_is_stored_as_null(client, token):
    response = save(client, token, body(comment=""))
    assert response.get_json()["comment"] is None
    assert db.session.scalars(db.select(Annotation.comment)).one() is None


def test_xss_in_a_comment_round_trips_as_literal_text(client, token):
    data = body(comment=XSS)
    assert save(client, token, data).get_json()["comment"] == XSS
    response = client.get(f"/api/sessions/{token}")
    assert response.get_json()["annotations"][0]["comment"] == XSS
    assert response.mimetype == "application/json"


def test_same_id_and_body_again_is_200_with_the_same_json(client, token):
    data = body(comment="")
    first = save(client, token, data)
    second = save(client, token, {**data, "id": data["id"].upper()})
    assert (first.status_code, second.status_code) == (201, 200)
    assert second.get_json() == first.get_json()
    assert _stored_count() == 1


def test_same_id_other_body_is_409(client, token):
    data = body()
    save(client, token, data)
    for change in (
        {"category": "new-person"},
        {"comment": "different"},
        {"span": span(0, "Zoë")},
        {"category": "repetition", "paired_span": span(0, "Zoë")},
    ):
        response = save(client, token, {**data, **change})
        assert response.status_code == 409
        assert error_of(response)["code"] == "conflict"
    assert _stored_count() == 1


def test_a_removed_annotation_posted_again_is_not_resurrected(client, token):
    data = body()
    save(client, token, data)
    client.delete(f"/api/sessions/{token}/annotations/{data['id']}", headers=csrf(token))
    again = save(client, token, data)
    assert again.status_code == 200
    assert again.get_json()["removed"] is True
    assert client.get(f"/api/sessions/{token}").get_json()["annotations"] == []
    assert save(client, token, {**data, "comment": "x"}).status_code == 409


def _duplicate_refused(response, of: str) -> None:
    assert response.status_code == 422, response.data
    error = error_of(response)
    assert error["code"] == "duplicate_annotation"
    assert error["details"] == {"field": "span", "duplicate_of": of}


def test_a_duplicate_under_a_new_id_is_422(client, token):
    # "Exact duplicate": the same category and the same span(s) as a live annotation of
    # the session; the comment and the severity do not make another annotation.
    data = body(comment="first")
    assert save(client, token, data).status_code == 201
    for change in ({}, {"comment": "another comment"}, {"comment": None}):
        _duplicate_refused(
            save(client, token, {**data, **change, "id": str(uuid.uuid4())}), data["id"]
        )
    assert save(client, token, data).status_code == 200  # the same id and body: a replay
    assert save(client, token, {**data, "comment": "x"}).status_code == 409
    # Another category or another span is another annotation.
    assert save(client, token, body(category="new-person")).status_code == 201
    assert save(client, token, body(span=span(0, "Zoë"))).status_code == 201
    paired = body(category="repetition", span=span(0, "Zoë", 1), paired_span=span(0, "Zoë"))
    assert save(client, token, paired).status_code == 201
    _duplicate_refused(save(client, token, {**paired, "id": str(uuid.uuid4())}), paired["id"])
    other_pair = {**paired, "id": str(uuid.uuid4()), "paired_span": span(0, "smiled")}
    assert save(client, token, other_pair).status_code == 201
    assert _stored_count() == 5
    # Once removed, the same annotation may be added again.
    client.delete(f"/api/sessions/{token}/annotations/{data['id']}", headers=csrf(token))
    again = {**data, "id": str(uuid.uuid4())}
    assert save(client, token, again).status_code == 201
    _duplicate_refused(save(client, token, {**data, "id": str(uuid.uuid4())}), again["id"])


def test_two_workers_saving_twenty_identical_annotations_store_one_each(app, client):
    # The attack on the analyses (issue 26 point 4): 20 identical Adds per worker.
    make_document()
    for name in ("fake-1", "fake-2"):
        worker = start_session(client, annotator=name)
        statuses = [save(client, worker, body()).status_code for _ in range(20)]
        assert statuses == [201] + [422] * 19
        assert len(session_row(worker).annotations) == 1


def test_live_annotations_are_ordered_by_paragraph_and_start(client, token):
    move(client, token, 1)
    late = save(client, token, body(span=span(1, "ship"))).get_json()
    second = save(client, token, body(span=span(0, "harbour"))).get_json()
    first = save(client, token, body(span=span(0, "Zoë"))).get_json()
    annotations = client.get(f"/api/sessions/{token}").get_json()["annotations"]
    assert [a["id"] for a in annotations] == [first["id"], second["id"], late["id"]]


def _save_in_thread(app, token: str, data: dict, barrier: threading.Barrier, out: list) -> None:
    with app.app_context():
        client = app.test_client()
        barrier.wait()
        response = save(client, token, data)
        out.append((response.status_code, response.get_json()))
        db.session.remove()


def test_ten_concurrent_identical_saves_store_one_row(app, client, token):
    data = body()
    db.session.commit()
    db.session.remove()
    barrier = threading.Barrier(10)
    results: list = []
    threads = [
        threading.Thread(target=_save_in_thread, args=(app, token, data, barrier, results))
        for _ in range(10)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    statuses = sorted(status for status, _ in results)
    assert statuses == [200] * 9 + [201], results
    assert len({str(payload) for _, payload in results}) == 1
    assert _stored_count() == 1


def test_save_of_a_row_stored_meanwhile_answers_as_a_replay(client, token):
    # The row is there already (a retry, or a concurrent request that won): the
    # INSERT ... ON CONFLICT DO NOTHING inserts nothing and the stored row is answered.
    data = body()
    first = save(client, token, data)
    assert first.status_code == 201
    again = save(client, token, data)
    assert again.status_code == 200 and again.get_json() == first.get_json()
    conflict = save(client, token, {**data, "comment": "other"})
    assert conflict.status_code == 409
    assert _stored_count() == 1
    assert client.get(f"/api/sessions/{token}").status_code == 200


# --- DELETE -------------------------------------------------------------------------------


def test_remove_is_a_soft_delete_and_idempotent(client, token):
    data = body()
    save(client, token, data)
    url = f"/api/sessions/{token}/annotations/{data['id']}"
    first = client.delete(url, headers=csrf(token))
    assert (first.status_code, first.data) == (204, b"")
    row = db.session.scalars(db.select(Annotation)).one()
    removed_at = row.deleted_at
    assert removed_at is not None
    assert client.delete(url, headers=csrf(token)).status_code == 204
    db.session.expire_all()
    assert db.session.scalars(db.select(Annotation)).one().deleted_at == removed_at
    assert client.get(f"/api/sessions/{token}").get_json()["annotations"] == []


@pytest.mark.parametrize("annotation_id", [str(uuid.uuid4()), "not-a-uuid", "1"])
def test_remove_of_an_unknown_id_is_404(client, token, annotation_id):
    response = client.delete(
        f"/api/sessions/{token}/annotations/{annotation_id}", headers=csrf(token)
    )
    assert response.status_code == 404
    assert error_of(response)["code"] == "not_found"


def test_a_token_cannot_touch_another_sessions_annotations(client, token):
    other = start_session(client, annotator="bob")
    data = body()
    assert save(client, token, data).status_code == 201
    response = client.delete(f"/api/sessions/{other}/annotations/{data['id']}", headers=csrf(other))
    assert response.status_code == 404
    # The same client id in another session is another annotation, not a replay.
    assert save(client, other, {**data, "comment": "bob's"}).status_code == 201
    assert client.get(f"/api/sessions/{other}").get_json()["annotations"][0]["comment"] == "bob's"
    mine = client.get(f"/api/sessions/{token}").get_json()["annotations"]
    assert [a["comment"] for a in mine] == [None]


# --- PUT position ---------------------------------------------------------------------------


def test_moving_forward_reveals_one_paragraph_at_a_time(client, token):
    response = move(client, token, 1)
    assert response.status_code == 200
    assert response.get_json() == {
        "position": 1,
        "furthest": 1,
        "paragraphs": [{"paragraph_id": 1, "text": PARAGRAPHS[1]}],
    }
    assert move(client, token, 0).get_json() == {"position": 0, "furthest": 1, "paragraphs": []}
    assert move(client, token, 1).get_json()["paragraphs"] == []
    assert move(client, token, 2).get_json()["furthest"] == 2
    row = session_row(token)
    assert (row.position, row.furthest) == (2, 2)
    state = client.get(f"/api/sessions/{token}").get_json()
    assert [p["paragraph_id"] for p in state["document"]["paragraphs"]] == [0, 1, 2]


@pytest.mark.parametrize("target", [2, 3, -1, 10**12])
def test_position_beyond_furthest_plus_one_is_422(client, token, target):
    response = move(client, token, target)
    assert response.status_code == 422
    error = error_of(response)
    assert (error["code"], error["details"]["field"]) == ("position_out_of_range", "paragraph_id")
    assert session_row(token).furthest == 0


def test_position_cannot_pass_the_last_paragraph(client, token):
    for target in (1, 2):
        assert move(client, token, target).status_code == 200
    assert move(client, token, 3).status_code == 422


@pytest.mark.parametrize(
    ("payload", "code"),
    [
        ({"paragraph_id": "1"}, "invalid_field"),
        ({}, "missing_field"),
        ({"paragraph_id": 1, "x": 1}, "unknown_field"),
    ],
)
def test_position_body_is_checked(client, token, payload, code):
    response = client.put(f"/api/sessions/{token}/position", json=payload, headers=csrf(token))
    assert response.status_code == 422
    assert error_of(response)["code"] == code


# --- submit ----------------------------------------------------------------------------------


def test_submit_needs_every_paragraph_read(client, token):
    response = submit(client, token)
    assert response.status_code == 422
    error = error_of(response)
    assert error["code"] == "not_finished"
    assert "Read every paragraph first" in error["message"]
    assert session_row(token).status == "active"


def test_submit_is_idempotent_and_locks_the_session(client, token):
    data = body()
    save(client, token, data)
    move(client, token, 1)
    move(client, token, 2)
    first = submit(client, token)
    assert first.status_code == 200
    completion = first.get_json()
    row = session_row(token)
    assert completion["completion_code"] == row.completion_code
    assert completion["redirect_url"] == f"/s/{token}/complete"
    assert (row.status, row.submitted_at is not None) == ("submitted", True)
    submitted_at = row.submitted_at
    second = submit(client, token, json={})
    assert (second.status_code, second.get_json()) == (200, completion)
    assert session_row(token).submitted_at == submitted_at
    assert client.get(f"/api/sessions/{token}").get_json()["status"] == "submitted"
    for response in (
        save(client, token, body()),
        save(client, token, data),
        client.delete(f"/api/sessions/{token}/annotations/{data['id']}", headers=csrf(token)),
        move(client, token, 0),
    ):
        assert response.status_code == 409
        assert error_of(response)["code"] == "session_submitted"
    assert _stored_count() == 1


def test_submit_refuses_unknown_fields(client, token):
    response = submit(client, token, json={"status": "submitted"})
    assert response.status_code == 422
    assert error_of(response)["code"] == "unknown_field"


def _finish(client, token: str) -> None:
    move(client, token, 1)
    move(client, token, 2)


def test_prolific_submit_redirects_to_the_study_completion_url(client, token):
    prolific = start_session(client, PROLIFIC_PID="p1", STUDY_ID="s1", SESSION_ID="x1")
    _finish(client, prolific)
    completion = submit(client, prolific).get_json()
    code = completion["completion_code"]
    assert completion["redirect_url"] == (
        f"https://app.prolific.com/submissions/complete?cc={code}"
    )


def test_completion_url_from_config_wins(app, client, token):
    app.config["COMPLETION_URL"] = "https://example.org/done?code={code}"
    prolific = start_session(client, PROLIFIC_PID="p2")
    _finish(client, prolific)
    completion = submit(client, prolific).get_json()
    assert (
        completion["redirect_url"]
        == f"https://example.org/done?code={completion['completion_code']}"
    )


# --- rate limits, taxonomy variants, OpenAPI ----------------------------------------------


def test_write_rate_limit_answers_429_envelope(database_uri):
    app = create_app(make_test_config(database_uri, ANNOTATE_WRITE_LIMIT="3 per minute"))
    with app.app_context():
        make_document()
        client = app.test_client()
        token = start_session(client)
        statuses = [move(client, token, 0).status_code for _ in range(4)]
        assert statuses == [200, 200, 200, 429]
        assert error_of(move(client, token, 0))["code"] == "too_many_requests"
        other = start_session(client, annotator="bob")
        assert move(client, other, 0).status_code == 200  # keyed by token, not by address
        db.session.remove()
        dispose_engines()


def test_comment_required_by_the_booookscore_taxonomy(database_uri):
    taxonomy = str(ROOT / "config" / "taxonomies" / "booookscore.yaml")
    app = create_app(make_test_config(database_uri, TAXONOMY_PATH=taxonomy))
    with app.app_context():
        make_document()
        client = app.test_client()
        token = start_session(client)
        for comment in (None, "", "   "):
            response = save(client, token, body(category="language", comment=comment))
            assert response.status_code == 422
            error = error_of(response)
            assert (error["code"], error["details"]["field"]) == ("comment_required", "comment")
        response = save(client, token, body(category="language", comment="Garbled verb."))
        assert response.status_code == 201
        state = client.get(f"/api/sessions/{token}").get_json()
        assert state["taxonomy"]["comment"]["required"] is True
        db.session.remove()
        dispose_engines()


def _flask_to_openapi(rule: str) -> str:
    import re

    return re.sub(r"<(?:[a-z_]+:)?([a-z_]+)>", r"{\1}", rule)


def test_openapi_document_is_valid_and_covers_every_api_route(app, client):
    response = client.get("/api/openapi.json")
    assert response.status_code == 200
    spec = response.get_json()
    assert spec["openapi"].startswith("3.1")
    validate_openapi(spec)
    walked = 0
    for rule in app.url_map.iter_rules():
        if not rule.rule.startswith("/api/"):
            continue
        walked += 1
        path = _flask_to_openapi(rule.rule)
        assert path in spec["paths"], f"{rule.rule} is missing from app/api_spec/*.yaml"
        for method in rule.methods - {"HEAD", "OPTIONS"}:
            assert method.lower() in spec["paths"][path], f"{method} {path} is not documented"
    assert walked >= 13  # the API's routes when this was written
    post_op = spec["paths"]["/api/sessions/{token}/annotations"]["post"]
    assert any(p["$ref"].endswith("/CsrfHeader") for p in post_op["parameters"])
    assert "ErrorEnvelope" in spec["components"]["schemas"]


def test_the_api_neither_reads_nor_sets_the_cookie_session(app, client, token):
    # A browser that also holds a researcher's (or any) session cookie sends it along.
    with client.session_transaction() as cookie_session:
        cookie_session["_user_id"] = "1"
    responses = [
        client.get(f"/api/sessions/{token}"),
        save(client, token, body()),
        move(client, token, 0),
    ]
    assert [r.status_code for r in responses] == [200, 201, 200]
    for response in responses:
        assert "Set-Cookie" not in response.headers
        assert "Cookie" not in response.headers.get("Vary", "")
    # Pages still have their session (Flask-WTF and Flask-Login keep state in it).
    page = client.get("/research/login")
    assert page.status_code == 200
