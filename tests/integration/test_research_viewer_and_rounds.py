"""The researcher console's session viewer and round form (issue 14 points 12 and 13):
a session opens read-only with no capability token in the page; paragraph numbers say both
the on-screen number and the exported id; a round is created from the console with the
CLI's options, CSRF-protected, with errors per field; the rounds page gives validator links."""

from __future__ import annotations

import json
import re
from html import unescape

from app.core.extensions import db
from app.models import ValidationItem, ValidationRound
from tests.support.validation import add_annotation, make_documents, make_session


def _csrf(html: str) -> str:
    found = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', html)
    assert found, "no CSRF field in the form"
    return found.group(1)


def _sessions():
    make_documents()
    alice = make_session("doc-a", "alice", status="submitted", furthest=1)
    add_annotation(alice, 0, "Łukasz", "new-person", comment="<b>who?</b>")
    add_annotation(alice, 1, "he slept", "repetition", paired=(0, "Zoë smiled"))
    add_annotation(alice, 1, "quietly", "new-person", removed=True)
    bob = make_session("doc-a", "bob", status="active")
    add_annotation(bob, 0, "harbour", "new-person")
    return alice, bob


def _bootstrap(html: str) -> dict:
    found = re.search(r"data-bootstrap='([^']*)'", html)
    assert found
    return json.loads(unescape(found.group(1)))


def test_the_viewer_shows_a_session_read_only_without_its_token(researcher_client):
    # (Anonymous requests to /research/sessions/<id> are refused by the access matrix in
    # tests/security, which covers every route.)
    alice, _ = _sessions()
    response = researcher_client.get(f"/research/sessions/{alice.id}")
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    assert alice.token not in html  # a researcher viewing a session cannot act in it
    boot = _bootstrap(html)
    assert boot["read_only"] is True and boot["token"] is None and boot["csrf_token"] is None
    assert set(boot["api"].values()) == {None}
    assert [a["span"]["text"] for a in boot["annotations"]] == ["Łukasz", "he slept"]
    assert [p["paragraph_id"] for p in boot["document"]["paragraphs"]] == [0, 1]
    assert boot["position"] == 1  # every reached paragraph on screen, the last as current
    assert 'data-module="annotator"' in html  # the annotator page's own code draws it
    # The export view lists the removed annotation too, paragraphs labelled both ways.
    assert "paragraph 1 (id 0)" in html and "paragraph 2 (id 1)" in html
    assert "quietly" in html and "removed" in html
    assert "&lt;b&gt;who?&lt;/b&gt;" in html and "<b>who?</b>" not in html
    assert researcher_client.get("/research/sessions/999999").status_code == 404


def test_the_document_page_links_each_session_to_the_viewer(researcher_client):
    alice, bob = _sessions()
    html = researcher_client.get(f"/research/documents/{alice.document.external_id}").get_data(
        as_text=True
    )
    for session in (alice, bob):
        assert f'href="/research/sessions/{session.id}"' in html
    assert "paragraph_id</code> 0–2" in html


def test_a_round_is_created_from_the_console_with_the_clis_rules(researcher_client):
    _sessions()
    page = researcher_client.get("/research/rounds")
    assert page.status_code == 200
    form = {"name": "console-1", "judgments_per_item": "2", "seed": "7", "sample": ""}
    refused = researcher_client.post("/research/rounds", data=form)
    assert refused.status_code == 400  # no CSRF token
    assert db.session.scalar(db.select(db.func.count(ValidationRound.id))) == 0

    form["csrf_token"] = _csrf(page.get_data(as_text=True))
    response = researcher_client.post("/research/rounds", data=form, follow_redirects=True)
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    assert "Created round console-1: 2 item(s), seed 7." in html
    assert "Left out 1 annotation(s) of sessions not submitted." in html
    round_ = db.session.scalars(db.select(ValidationRound).filter_by(name="console-1")).one()
    assert (round_.judgments_per_item, round_.seed) == (2, 7)
    items = db.session.scalars(db.select(ValidationItem).filter_by(round_id=round_.id)).all()
    assert sorted(i.origin_annotator for i in items) == ["direct:alice", "direct:alice"]

    form.update(name="console-2", include_unsubmitted="y", sample="2")
    researcher_client.post("/research/rounds", data=form)
    round_ = db.session.scalars(db.select(ValidationRound).filter_by(name="console-2")).one()
    assert (
        len(db.session.scalars(db.select(ValidationItem).filter_by(round_id=round_.id)).all()) == 2
    )


def test_round_form_errors_are_shown_per_field(researcher_client):
    _sessions()
    token = _csrf(researcher_client.get("/research/rounds").get_data(as_text=True))
    bad = {"csrf_token": token, "name": "bad name!", "judgments_per_item": "0", "sample": "-1"}
    response = researcher_client.post("/research/rounds", data=bad)
    assert response.status_code == 400
    html = response.get_data(as_text=True)
    for field, message in (
        ("name", "Use letters, digits"),
        ("judgments_per_item", "Give a whole number"),
        ("sample", "at least 1"),
    ):
        tag = re.search(rf'<input[^>]*id="{field}"[^>]*>', html).group(0)
        assert 'aria-invalid="true"' in tag and f"{field}-error" in tag
        error = re.search(rf'id="{field}-error">([^<]*)<', html).group(1)
        assert message in error
    assert 'value="bad name!"' in html  # the input is kept
    assert db.session.scalar(db.select(db.func.count(ValidationRound.id))) == 0

    good = {"csrf_token": token, "name": "twice", "judgments_per_item": "1"}
    assert researcher_client.post("/research/rounds", data=good).status_code == 302
    again = researcher_client.post("/research/rounds", data=good)
    assert again.status_code == 400
    assert "A round named twice already exists." in again.get_data(as_text=True)


def test_a_round_with_nothing_submitted_says_why(researcher_client):
    make_documents()
    bob = make_session("doc-a", "bob", status="active")
    add_annotation(bob, 0, "harbour", "new-person")
    token = _csrf(researcher_client.get("/research/rounds").get_data(as_text=True))
    form = {"csrf_token": token, "name": "empty", "judgments_per_item": "1"}
    response = researcher_client.post("/research/rounds", data=form)
    assert response.status_code == 400
    html = response.get_data(as_text=True)
    assert "The round was not created" in html
    assert "1 annotation(s) of unsubmitted sessions left out" in html


def test_the_rounds_page_gives_prolific_and_mturk_links_for_validators(researcher_client):
    _sessions()
    token = _csrf(researcher_client.get("/research/rounds").get_data(as_text=True))
    form = {"csrf_token": token, "name": "links", "judgments_per_item": "1"}
    assert researcher_client.post("/research/rounds", data=form).status_code == 302
    html = unescape(researcher_client.get("/research/rounds").get_data(as_text=True))
    base = "http://localhost/validate/links"
    assert (
        f"{base}?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}&STUDY_ID={{{{%STUDY_ID%}}}}"
        "&SESSION_ID={{%SESSION_ID%}}" in html
    )
    assert f"<ExternalURL>{base}</ExternalURL>" in html
    assert f"{base}?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE" in html
