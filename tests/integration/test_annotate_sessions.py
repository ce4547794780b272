"""Starting and resuming sessions, the annotator page's context, previews, completion page."""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any

import pytest
from flask import template_rendered
from sqlalchemy import event

from app.annotate.serializers import public_document_id
from app.core.extensions import db
from app.core.persistence import AUTOCOMMIT_BIND
from app.core.security import capability_csrf_token
from app.crowd.identity import ANON_COOKIE, OpenRefused, WorkerIdentity
from app.crowd.sessions import start_or_resume_session
from app.models import AnnotationSession, Annotator, Document
from app.taxonomy import current_taxonomy
from tests.support import worker_api as api

SANDBOX = "https://workersandbox.mturk.com"


@contextmanager
def rendered(app):
    """Collect (template name, context) of every template rendered inside the block."""
    seen: list[tuple[str, dict[str, Any]]] = []

    def record(sender, template, context, **extra):
        seen.append((template.name, context))

    template_rendered.connect(record, app)
    try:
        yield seen
    finally:
        template_rendered.disconnect(record, app)


def sessions_count() -> int:
    """How many sessions are stored."""
    return db.session.scalar(db.select(db.func.count(AnnotationSession.id)))


@pytest.fixture
def document(app) -> Document:
    """doc-1 imported."""
    api.make_document()
    return db.session.scalars(db.select(Document)).one()


# --- start / resume ---------------------------------------------------------------------


def test_prolific_worker_gets_one_session_per_document(client, document):
    params = {"PROLIFIC_PID": "p-1", "STUDY_ID": "study", "SESSION_ID": "s-1"}
    token = api.start_session(client, **params)
    row = api.session_row(token)
    assert (row.platform, row.annotator.external_id) == ("prolific", "p-1")
    assert row.platform_params == {"study_id": "study", "session_id": "s-1"}
    assert row.taxonomy_version == current_taxonomy().version
    assert (row.status, row.position, row.furthest) == ("active", 0, 0)
    assert len(token) >= 22  # >= 128 bits of URL-safe base64
    # Same submission, same document: same session. Another SESSION_ID is another
    # Prolific submission: the participant is bound to the first (app.crowd.submissions), so it
    # gets the conflict page, even in the same browser, and the stored parameters stay.
    assert api.start_session(client, **params) == token
    again = client.get("/annotate/doc-1", query_string={**params, "SESSION_ID": "s-2"})
    assert again.status_code == 409
    assert api.session_row(token).platform_params == {"study_id": "study", "session_id": "s-1"}
    other = api.start_session(client, PROLIFIC_PID="p-2", STUDY_ID="study", SESSION_ID="s-3")
    assert other != token
    assert sessions_count() == 2


def test_mturk_worker_params_are_stored(client, document):
    params = {
        "workerId": "W1",
        "assignmentId": "A1",
        "hitId": "H1",
        "turkSubmitTo": SANDBOX,
    }
    token = api.start_session(client, **params)
    row = api.session_row(token)
    assert (row.platform, row.annotator.external_id) == ("mturk", "W1")
    assert row.platform_params == {
        "assignment_id": "A1",
        "hit_id": "H1",
        "turk_submit_to": SANDBOX,
    }
    assert api.start_session(client, **params) == token


def test_annotator_parameter_identifies_a_direct_worker(client, document):
    token = api.start_session(client, annotator="alice")
    assert api.session_row(token).annotator.label == "direct:alice"
    assert api.start_session(client, annotator="alice") == token
    assert api.start_session(client, annotator="bob") != token


def test_anonymous_worker_is_remembered_by_a_cookie(app, document):
    client = app.test_client()
    response = client.get("/annotate/doc-1")
    cookie = response.headers["Set-Cookie"]
    assert cookie.startswith(f"{ANON_COOKIE}=")
    assert "HttpOnly" in cookie
    assert "SameSite=Lax" in cookie
    assert "Max-Age=31536000" in cookie
    assert "Secure" not in cookie
    token = api.token_from(response)
    again = client.get("/annotate/doc-1")
    assert again.headers["Location"] == f"/s/{token}"
    assert "Set-Cookie" not in again.headers  # the cookie is kept, not renewed
    stranger = app.test_client().get("/annotate/doc-1")
    assert stranger.headers["Location"] != f"/s/{token}"
    assert api.session_row(token).platform == "anonymous"


def test_anonymous_cookie_is_secure_when_configured(app, client, document):
    app.config["SESSION_COOKIE_SECURE"] = True
    assert "Secure" in client.get("/annotate/doc-1").headers["Set-Cookie"]


def test_falte_address_does_the_same(client, document):
    response = client.get("/id=doc-1", query_string={"annotator": "alice"})
    assert response.status_code == 302
    assert response.headers["Location"] == f"/s/{api.start_session(client, annotator='alice')}"
    assert sessions_count() == 1


@pytest.mark.parametrize("path", ["/annotate/nope", "/id=nope", "/annotate/" + "n" * 300])
def test_unknown_document_is_a_404_page(client, document, path):
    response = client.get(path, query_string={"annotator": "alice"})
    assert response.status_code == 404
    assert response.mimetype == "text/html"
    assert b"nope" in response.data or b"nnnn" in response.data
    assert sessions_count() == 0


def test_bad_identity_parameter_is_a_400_page(client, document):
    response = client.get("/annotate/doc-1", query_string={"PROLIFIC_PID": "a\x00b"})
    assert response.status_code == 400
    assert sessions_count() == 0


def test_abandoned_session_becomes_active_on_resume(client, document):
    token = api.start_session(client)
    row = api.session_row(token)
    row.status = "abandoned"
    db.session.commit()
    assert api.start_session(client) == token
    assert api.session_row(token).status == "active"


def test_attention_check_flag_comes_from_the_documents_gold(app, client):
    gold = [{"paragraph_id": 0, "start": 0, "end": 3, "category": "new-person"}]
    api.make_document("doc-gold", gold=gold)
    api.make_document("doc-plain")
    assert api.session_row(api.start_session(client, "doc-gold")).is_attention_check is True
    assert api.session_row(api.start_session(client, "doc-plain")).is_attention_check is False


def test_domain_function_creates_or_resumes(app, document):
    identity = WorkerIdentity("direct", "carol", owner=True)  # as from a signed link
    first = start_or_resume_session(document, identity)
    second = start_or_resume_session(document, identity)
    assert first.id == second.id
    assert first.token == second.token
    assert sessions_count() == 1
    # The same name proving nothing (no signature, cookie or platform secret): refused.
    with pytest.raises(OpenRefused):
        start_or_resume_session(document, WorkerIdentity("direct", "carol"))


def _start_in_thread(app, barrier: threading.Barrier, out: list) -> None:
    with app.app_context():
        client = app.test_client()
        barrier.wait()
        out.append(client.get("/annotate/doc-1?annotator=racer").headers.get("Location"))
        db.session.remove()


def test_concurrent_starts_give_one_session(app, document):
    db.session.commit()
    db.session.remove()
    barrier = threading.Barrier(6)
    locations: list = []
    threads = [
        threading.Thread(target=_start_in_thread, args=(app, barrier, locations)) for _ in range(6)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(locations) == 6
    assert len(set(locations)) == 1, locations
    assert sessions_count() == 1
    assert db.session.scalar(db.select(db.func.count(Annotator.id))) == 1


# --- MTurk preview -------------------------------------------------------------------------


def test_mturk_preview_is_read_only_and_creates_nothing(app, client, document):
    with rendered(app) as seen:
        response = client.get(
            "/annotate/doc-1",
            query_string={"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE", "hitId": "H1"},
        )
    assert response.status_code == 200
    assert response.headers["Cache-Control"] == "no-store"
    assert "Set-Cookie" not in response.headers
    assert sessions_count() == 0
    assert db.session.scalar(db.select(db.func.count(Annotator.id))) == 0
    name, context = seen[0]
    assert name == "annotate/session.html"
    assert (context["preview"], context["read_only"]) == (True, True)
    bootstrap = context["bootstrap"]
    assert bootstrap["token"] is None
    assert bootstrap["csrf_token"] is None
    assert bootstrap["status"] == "preview"
    assert bootstrap["document"]["paragraphs"] == [{"paragraph_id": 0, "text": api.PARAGRAPHS[0]}]
    assert bootstrap["document"]["total_paragraphs"] == 3
    assert bootstrap["annotations"] == []
    assert set(bootstrap["api"].values()) == {None}
    assert (bootstrap["completion"], bootstrap["mturk"]) == (None, None)
    assert api.PARAGRAPHS[1].encode() not in response.data


# --- the annotator page ----------------------------------------------------------------------


def test_session_page_context(app, client, document):
    token = api.start_session(client, workerId="W1", assignmentId="A1", turkSubmitTo=SANDBOX)
    with rendered(app) as seen:
        response = client.get(f"/s/{token}")
    assert response.status_code == 200
    assert response.headers["Cache-Control"] == "no-store"
    assert response.headers["Referrer-Policy"] == "same-origin"
    name, context = seen[0]
    assert name == "annotate/session.html"
    assert context["csrf_token_value"] == capability_csrf_token("annotate", token)
    assert (context["read_only"], context["preview"]) == (False, False)
    assert context["taxonomy"] is current_taxonomy()
    # The page knows the document by the session's opaque id, never its external id.
    assert context["document"].external_id == public_document_id(token) != "doc-1"
    assert context["document"].external_id == context["bootstrap"]["document"]["id"]
    bootstrap = context["bootstrap"]
    api_state = client.get(f"/api/sessions/{token}").get_json()
    for key, value in api_state.items():
        assert bootstrap[key] == value, key
    assert bootstrap["token"] == token
    assert bootstrap["csrf_token"] == context["csrf_token_value"]
    assert (bootstrap["read_only"], bootstrap["preview"]) == (False, False)
    assert bootstrap["api"] == {
        "session": f"/api/sessions/{token}",
        "annotations": f"/api/sessions/{token}/annotations",
        "position": f"/api/sessions/{token}/position",
        "submit": f"/api/sessions/{token}/submit",
        "heartbeat": f"/api/sessions/{token}/heartbeat",
        "suggestions": f"/api/sessions/{token}/suggestions",
    }
    assert bootstrap["completion"] is None
    assert bootstrap["mturk"] == {
        "submit_to": f"{SANDBOX}/mturk/externalSubmit",
        "assignment_id": "A1",
    }
    assert bootstrap["max_comment_length"] == 2000
    # The meta tag carries the capability CSRF token, not Flask-WTF's cookie-bound one.
    assert f'name="csrf-token" content="{context["csrf_token_value"]}"'.encode() in response.data


@pytest.mark.parametrize("path", ["/s/{token}", "/api/sessions/{token}"])
def test_reading_a_session_records_activity_without_a_transaction(client, document, path):
    token = api.start_session(client)
    assert api.save(client, token, api.body()).status_code == 201
    row = api.session_row(token)
    row.status = "abandoned"
    before = api.make_stale(token)
    with statements() as sent:
        assert client.get(path.format(token=token)).status_code == 200
    db.session.expire_all()
    stored = api.session_row(token)
    assert stored.status == "active"  # an abandoned session comes back when read
    assert stored.last_seen_at > before
    if db.engine.dialect.name == "postgresql":
        # One statement reads the session, writes its activity (due: it was abandoned)
        # and starts the visit of the paragraph it shows; then its annotations.
        kinds = [" ".join(s.split()[:3]) for s in sent]
        assert kinds == ["WITH found AS", "SELECT annotations.id, annotations.session_id,"], sent
        assert "UPDATE annotation_sessions SET" in sent[0]
        assert "INSERT INTO paragraph_timings" in sent[0]  # no BEGIN or COMMIT either
    # Read again within the minute: no activity write.
    db.session.commit()
    seen = api.session_row(token).last_seen_at
    with statements() as again:
        assert client.get(path.format(token=token)).status_code == 200
    if db.engine.dialect.name == "sqlite":
        assert not any(s.startswith("UPDATE") for s in again)
    db.session.expire_all()
    assert api.session_row(token).last_seen_at == seen


@pytest.mark.parametrize(
    "submit_to",
    ["https://evil.example", "http://www.mturk.com", "https://www.mturk.com.evil.example"],
)
def test_mturk_submit_target_must_be_an_mturk_origin(app, client, document, submit_to):
    query = {"workerId": "W1", "assignmentId": "A1", "turkSubmitTo": submit_to}
    assert client.get("/annotate/doc-1", query_string=query).status_code == 400
    assert sessions_count() == 0
    # Without turkSubmitTo the session has no MTurk form to post.
    token = api.start_session(client, workerId="W1", assignmentId="A1", turkSubmitTo="")
    with rendered(app) as seen:
        client.get(f"/s/{token}")
    assert seen[0][1]["bootstrap"]["mturk"] is None


def test_submitted_session_page_is_read_only_with_completion(app, client, document):
    token = api.start_session(client)
    api.save(client, token, api.body())
    api.move(client, token, 1)
    api.move(client, token, 2)
    completion = api.submit(client, token).get_json()
    with rendered(app) as seen:
        client.get(f"/s/{token}")
    context = seen[0][1]
    assert context["read_only"] is True
    assert context["bootstrap"]["read_only"] is True
    assert context["bootstrap"]["status"] == "submitted"
    assert context["bootstrap"]["completion"] == completion
    assert len(context["bootstrap"]["annotations"]) == 1


def test_unknown_token_pages_are_404(client, document):
    for path in ("/s/not-a-token", "/s/not-a-token/complete", f"/s/{'x' * 300}"):
        response = client.get(path)
        assert response.status_code == 404
        assert response.mimetype == "text/html"


def test_session_page_keeps_the_document_text_out_of_html_markup(app, client):
    api.make_document("doc-x", paragraphs=("<script>alert(1)</script> & more",))
    token = api.start_session(client, "doc-x")
    response = client.get(f"/s/{token}")
    assert b"<script>alert(1)</script>" not in response.data


# --- completion page ------------------------------------------------------------------------


def _finished(client, **params: str) -> str:
    token = api.start_session(client, **params)
    api.move(client, token, 1)
    api.move(client, token, 2)
    assert api.submit(client, token).status_code == 200
    return token


def test_complete_page_redirects_until_submitted(client, document):
    token = api.start_session(client)
    response = client.get(f"/s/{token}/complete")
    assert response.status_code == 302
    assert response.headers["Location"] == f"/s/{token}"


def test_complete_page_shows_the_code(client, document):
    token = _finished(client)
    response = client.get(f"/s/{token}/complete")
    assert response.status_code == 200
    assert response.headers["Cache-Control"] == "no-store"
    code = api.session_row(token).completion_code
    page = response.get_data(as_text=True)
    assert code in page
    assert "Copy code" in page
    assert 'data-module="complete"' in page
    assert "js-mturk-form" not in page


def test_complete_page_posts_the_mturk_assignment(client, document):
    token = _finished(client, workerId="W9", assignmentId="A9", hitId="H9", turkSubmitTo=SANDBOX)
    page = client.get(f"/s/{token}/complete").get_data(as_text=True)
    assert f'action="{SANDBOX}/mturk/externalSubmit"' in page
    assert 'method="post"' in page
    assert 'name="assignmentId" value="A9"' in page


def test_complete_page_links_back_to_prolific(client, document):
    token = _finished(client, PROLIFIC_PID="p-9")
    code = api.session_row(token).completion_code
    page = client.get(f"/s/{token}/complete").get_data(as_text=True)
    assert f"https://app.prolific.com/submissions/complete?cc={code}" in page


def test_home_page_links_to_the_start_address(app, client, document):
    app.config["APP_ENV"] = "development"  # the document list is shown in development only
    page = client.get("/").get_data(as_text=True)
    assert 'href="/annotate/doc-1"' in page


def test_writes_refresh_last_seen(client, document):
    token = api.start_session(client)
    before = api.make_stale(token)
    assert api.save(client, token, api.body(), headers=api.csrf(token)).status_code == 201
    assert api.session_row(token).last_seen_at > before


# --- writes: one guarded statement each (app.annotate.writes) --------------------------------


def test_a_move_after_another_tab_submitted_is_refused(client, document):
    token = api.start_session(client)
    row = api.session_row(token)
    row.status = "submitted"  # in another tab
    db.session.commit()
    refused = api.move(client, token, 1)
    assert (refused.status_code, api.error_of(refused)["code"]) == (409, "session_submitted")
    assert (api.session_row(token).position, api.session_row(token).furthest) == (0, 0)


def test_a_move_back_never_lowers_how_far_the_worker_read(client, document):
    token = api.start_session(client)
    for paragraph_id in (1, 2):  # another tab reads on to the last paragraph
        assert api.move(client, token, paragraph_id).status_code == 200
    moved = api.move(client, token, 1).get_json()
    assert (moved["position"], moved["furthest"], moved["paragraphs"]) == (1, 2, [])
    stored = api.session_row(token)
    assert (stored.position, stored.furthest) == (1, 2)


@contextmanager
def statements(engines_used: list | None = None):
    """The SQL statements sent on any of the app's engines inside the block (and, in
    `engines_used`, the engine each went through)."""
    sent: list[str] = []

    def record(conn, cursor, statement, parameters, context, executemany):
        sent.append(statement)
        if engines_used is not None:
            engines_used.append(conn.engine)

    engines = list(db.engines.values())
    for engine in engines:
        event.listen(engine, "before_cursor_execute", record)
    try:
        yield sent
    finally:
        for engine in engines:
            event.remove(engine, "before_cursor_execute", record)


def test_a_save_is_one_statement(client, document):
    token = api.start_session(client)
    db.session.commit()
    with statements() as sent:
        saved = api.save(client, token, api.body(span=api.span(0, "harbour")))
    assert saved.status_code == 201
    assert saved.get_json()["span"] == api.span(0, "harbour")
    if db.engine.dialect.name == "postgresql":  # with the activity write, when due
        assert len(sent) == 1 and sent[0].startswith("WITH touched AS"), sent
        assert "INSERT INTO annotations" in sent[0]
    else:  # the activity write, then the api.save
        assert len(sent) == 2 and sent[1].startswith("INSERT INTO annotations"), sent
    assert [a.span_text for a in api.session_row(token).annotations] == ["harbour"]


def test_a_save_after_another_tab_submitted_is_refused(client, document):
    token = api.start_session(client)
    assert api.save(client, token, api.body()).status_code == 201
    row = api.session_row(token)
    row.status = "submitted"  # by another server process, say
    db.session.commit()
    refused = api.save(client, token, api.body(span=api.span(0, "harbour")))
    assert (refused.status_code, api.error_of(refused)["code"]) == (409, "session_submitted")
    assert len(api.session_row(token).annotations) == 1


def test_a_save_still_needs_the_paragraph_reached(client, document):
    token = api.start_session(client)
    assert api.save(client, token, api.body()).status_code == 201
    refused = api.save(client, token, api.body(span=api.span(1, "dawn")))
    assert refused.status_code == 422
    assert api.error_of(refused)["details"]["field"] == "span.paragraph_id"
    assert len(api.session_row(token).annotations) == 1


def test_an_abandoned_session_saves_and_comes_back(client, document):
    token = api.start_session(client)
    assert api.save(client, token, api.body()).status_code == 201
    row = api.session_row(token)
    row.status = "abandoned"
    db.session.commit()
    assert api.save(client, token, api.body(span=api.span(0, "harbour"))).status_code == 201
    assert api.session_row(token).status == "active"


def test_a_save_is_checked_against_the_documents_current_text(client, document):
    token = api.start_session(client)
    assert api.move(client, token, 0).status_code == 200
    # No annotation yet, so the text may still be replaced.
    api.make_document(paragraphs=("Ada met Bea at the pier.", *api.PARAGRAPHS[1:]))
    stale = api.save(client, token, api.body())  # "Łukasz" at the old offsets
    assert stale.status_code == 422
    assert api.error_of(stale)["code"] == "quote_mismatch"
    assert api.session_row(token).annotations == []
    fresh = {"paragraph_id": 0, "start": 8, "end": 11, "text": "Bea"}
    assert api.save(client, token, api.body(span=fresh)).status_code == 201


def test_a_workers_first_open_is_one_statement_after_the_document(client, document):
    postgresql = db.engine.dialect.name == "postgresql"
    db.session.commit()
    with statements() as sent:
        token = api.start_session(client, PROLIFIC_PID="p-9", STUDY_ID="st", SESSION_ID="se")
    if postgresql:  # elsewhere the ORM path (start_or_resume_session) opens it
        # The link's study and its document in one statement (app.annotate.opening, issue
        # 30). A Prolific participant is bound to their first submission
        # (app.crowd.submissions, issue 26): one INSERT more than another worker's open.
        assert len(sent) == 3, sent
        assert sent[0].startswith("SELECT studies.id")
        assert "LEFT OUTER JOIN documents" in sent[0]
        assert "INSERT INTO submission_bindings" in sent[1]
        assert sent[2].startswith("WITH new_annotator AS")
    row = api.session_row(token)
    assert (row.annotator.label, row.platform) == ("prolific:p-9", "prolific")
    assert row.platform_params == {"study_id": "st", "session_id": "se"}
    assert (row.status, row.position, row.furthest, row.submitted_at) == ("active", 0, 0, None)
    assert row.taxonomy_version == current_taxonomy().version
    assert row.is_attention_check is False
    assert len(row.completion_code) == 26 and row.completion_code.isalnum()
    assert abs(row.last_seen_at - row.started_at).total_seconds() < 1
    # The first save is one statement too (with the activity write).
    db.session.commit()
    with statements() as saved:
        assert api.save(client, token, api.body()).status_code == 201
    if postgresql:
        assert len(saved) == 1 and "INSERT INTO annotations" in saved[0], saved
    # Opening it again resumes it (the other path): same session, stored parameters.
    assert api.start_session(client, PROLIFIC_PID="p-9", STUDY_ID="st", SESSION_ID="se") == token
    assert api.session_row(token).platform_params == {"study_id": "st", "session_id": "se"}
    assert sessions_count() == 1


def test_a_returning_worker_opens_another_document_in_one_statement(client, document):
    api.make_document("doc-2")
    first = api.start_session(client, annotator="dora")
    db.session.commit()
    with statements() as sent:
        second = api.start_session(client, "doc-2", annotator="dora")
    if db.engine.dialect.name == "postgresql":
        # The link's study and the document, then one statement: the worker's existing
        # annotator row is reused.
        assert len(sent) == 2, sent
    assert first != second
    assert api.session_row(first).annotator_id == api.session_row(second).annotator_id
    assert db.session.scalar(db.select(db.func.count(Annotator.id))) == 1
    assert api.session_row(second).document.external_id == "doc-2"


def test_worker_writes_on_postgresql_run_on_the_autocommit_engine(app, client, document):
    autocommit = db.engines.get(AUTOCOMMIT_BIND)
    if db.engine.dialect.name != "postgresql":
        assert autocommit is None  # SQLite writes use the request's session
        return
    token = api.start_session(client)
    db.session.commit()  # no transaction left open by the test itself
    used: list = []
    with statements(used):
        assert api.save(client, token, api.body()).status_code == 201
        assert api.move(client, token, 1).status_code == 200
    assert used and all(engine is autocommit for engine in used)
    # Those connections never leave autocommit: no BEGIN, no isolation-level switch.
    with autocommit.connect() as connection:
        assert connection.connection.dbapi_connection.autocommit is True


def test_a_move_is_one_statement_and_reveals_the_paragraph(client, document):
    token = api.start_session(client)
    db.session.commit()
    with statements() as sent:
        moved = api.move(client, token, 1)
    if db.engine.dialect.name == "postgresql":  # the api.move and the timings in one
        assert len(sent) == 1 and sent[0].startswith("WITH moved AS"), sent
        assert "INSERT INTO paragraph_timings" in sent[0]
    else:  # how far the worker had read, the api.move, the timings (app/annotate/timings.py),
        # the paragraph's text (SQLite cannot correlate it inside RETURNING: app.annotate.writes)
        assert [" ".join(s.split()[:3]) for s in sent] == [
            "SELECT annotation_sessions.furthest FROM",
            "UPDATE annotation_sessions SET",
            "INSERT INTO paragraph_timings",
            "SELECT paragraphs.text FROM",
        ], sent
    assert moved.get_json() == {
        "position": 1,
        "furthest": 1,
        "paragraphs": [{"paragraph_id": 1, "text": api.PARAGRAPHS[1]}],
    }
    back = api.move(client, token, 0).get_json()
    assert (back["position"], back["furthest"], back["paragraphs"]) == (0, 1, [])
    again = api.move(client, token, 1).get_json()
    assert (again["furthest"], again["paragraphs"]) == (1, [])
    stored = api.session_row(token)
    assert (stored.position, stored.furthest) == (1, 1)


@pytest.mark.parametrize(
    ("change", "target", "status", "code"),
    [
        ({"status": "submitted"}, 1, 409, "session_submitted"),
        ({}, 2, 422, "position_out_of_range"),
    ],
)
def test_a_refused_move_is_explained(client, document, change, target, status, code):
    token = api.start_session(client)
    row = api.session_row(token)
    for name, value in change.items():
        setattr(row, name, value)
    db.session.commit()
    refused = api.move(client, token, target)
    assert (refused.status_code, api.error_of(refused)["code"]) == (status, code)
    assert (api.session_row(token).position, api.session_row(token).furthest) == (0, 0)


def test_a_move_reveals_the_documents_current_text(client, document):
    token = api.start_session(client)
    assert api.move(client, token, 0).status_code == 200
    api.make_document(paragraphs=(api.PARAGRAPHS[0], "A new second paragraph.", api.PARAGRAPHS[2]))
    moved = api.move(client, token, 1).get_json()
    assert moved["paragraphs"] == [{"paragraph_id": 1, "text": "A new second paragraph."}]


def _remove(client, token: str, annotation_id: str):
    return client.delete(
        f"/api/sessions/{token}/annotations/{annotation_id}", headers=api.csrf(token)
    )


def test_a_remove_is_one_statement_and_replays(client, document):
    token = api.start_session(client)
    saved = api.body()
    assert api.save(client, token, saved).status_code == 201
    db.session.commit()
    with statements() as sent:
        assert _remove(client, token, saved["id"]).status_code == 204
    if db.engine.dialect.name == "postgresql":
        assert len(sent) == 1 and "UPDATE annotations" in sent[0], sent
    assert api.session_row(token).annotations[0].deleted_at is not None
    db.session.commit()
    assert _remove(client, token, saved["id"]).status_code == 204  # a replay
    unknown = _remove(client, token, "00000000-0000-4000-8000-000000000000")
    assert (unknown.status_code, api.error_of(unknown)["code"]) == (404, "not_found")
    assert _remove(client, token, "not-a-uuid").status_code == 404


@pytest.mark.parametrize("status", ["submitted", "abandoned"])
def test_a_remove_checks_the_session_state(client, document, status):
    token = api.start_session(client)
    saved = api.body()
    assert api.save(client, token, saved).status_code == 201
    row = api.session_row(token)
    row.status = status  # in another tab or process
    db.session.commit()
    answer = _remove(client, token, saved["id"])
    if status == "submitted":
        assert (answer.status_code, api.error_of(answer)["code"]) == (409, "session_submitted")
        assert api.session_row(token).annotations[0].deleted_at is None
    else:  # a remove revives an abandoned session, as any write does
        assert answer.status_code == 204
        assert api.session_row(token).status == "active"
        assert api.session_row(token).annotations[0].deleted_at is not None


def test_a_submit_is_one_statement_and_idempotent(app, client, document):
    app.config["COMPLETION_URL"] = "https://app.prolific.com/submissions/complete?cc={code}"
    token = api.start_session(client, PROLIFIC_PID="p-1", STUDY_ID="s", SESSION_ID="x")
    assert api.save(client, token, api.body()).status_code == 201
    early = api.submit(client, token)
    assert (early.status_code, api.error_of(early)["code"]) == (422, "not_finished")
    assert api.session_row(token).status == "active"
    for paragraph_id in (1, 2):
        assert api.move(client, token, paragraph_id).status_code == 200
    db.session.commit()
    with statements() as sent:
        first = api.submit(client, token)
    assert first.status_code == 200
    assert len(sent) == 1 and sent[0].startswith("UPDATE annotation_sessions"), sent
    row = api.session_row(token)
    assert (row.status, row.submitted_at is not None, row.outcome) == (
        "submitted",
        True,
        "completed",
    )
    assert first.get_json() == {
        "completion_code": row.completion_code,
        "redirect_url": f"https://app.prolific.com/submissions/complete?cc={row.completion_code}",
        "outcome": "completed",
        "shown_code": row.completion_code,
    }
    db.session.commit()
    assert api.submit(client, token).get_json() == first.get_json()  # again: explained
    assert (api.save(client, token, api.body(span=api.span(0, "harbour"))).status_code) == 409
