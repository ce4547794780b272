"""A worker's public id must not let anyone else act for them; failing is final (issue 26
points 1 and 2; issue 27 points 2 and 6).

Every attack is made through the real HTTP flow by a second client that knows only what
every participant sees: the victim's PROLIFIC_PID (or MTurk workerId) and the STUDY_ID.
Before the fix, a junk SESSION_ID was enough to fail the victim in training, to make /start
resume the attacker's session for the victim (who then got a 403), or to lock an MTurk
worker out by declining consent; Prolific's API was never asked; a placeholder was taken as
a worker id; a reopened study link gave a second document.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from flask import g
from sqlalchemy.exc import IntegrityError

from app.core.extensions import db
from app.models import (
    AnnotationSession,
    Annotator,
    IdentityConflict,
    TrainingAttempt,
)
from tests.support.accounts import add_account
from tests.support.apps import app_factory, make_test_config
from tests.support.identity import (
    CONTACT,
    STUDY_ID,
    consent,
    csrf,
    form,
    import_study,
    practice_check,
    prolific,
    session_of,
    sessions_count,
    study_taxonomy,
)
from tests.support.prolific import API_TOKEN, prolific_api
from tests.support.training import right_answers
from tests.support.worker_api import read_to_the_end, token_from

VICTIM = prolific("real-submission")
JUNK = prolific("junk-submission")
SANDBOX = "https://workersandbox.mturk.com"
NEXT = {"paragraph_id": 1}  # a move to the second paragraph


@pytest.fixture
def make_app(database_uri, tmp_path):
    """`make_app(taxonomy=..., **config)`: an app on the test database with the study's
    practice text and four documents imported."""

    def config(taxonomy: str | None = None, **overrides) -> dict:
        path = taxonomy or study_taxonomy(tmp_path)
        return make_test_config(database_uri, TAXONOMY_PATH=path, **overrides)

    factory = app_factory(config)
    build = next(factory)

    def make(*args, **kwargs):
        application = build(*args, **kwargs)
        with application.app_context():
            import_study(application, tmp_path)
            db.session.remove()
        return application

    yield make
    next(factory, None)


@pytest.fixture
def app(make_app):
    application = make_app()
    with application.app_context():
        yield application


class Console:
    """A researcher's browser. The test's app context is shared by every request it makes
    (Flask reuses a pushed one), so what a worker's page cached in `g` (Flask-Login's user,
    Flask-WTF's CSRF token) is dropped before each researcher request."""

    def __init__(self, app) -> None:
        account = add_account("r@example.org", password_hash="x")
        db.session.commit()
        self.client = app.test_client()
        with self.client.session_transaction() as session:
            session["_user_id"] = f"{account.id}:0"
            session["_fresh"] = True

    def get(self, url: str):
        self._forget()
        return self.client.get(url)

    def post(self, url: str, **kwargs):
        self._forget()
        return self.client.post(url, **kwargs)

    @staticmethod
    def _forget() -> None:
        for cached in ("_login_user", "csrf_token"):
            g.pop(cached, None)


def researcher_client(app) -> Console:
    """A client logged in as a researcher."""
    return Console(app)


def refused(response, status: int, says: str) -> str:
    """The refusal page's HTML, after checking its status and what it says."""
    html = response.get_data(as_text=True)
    assert response.status_code == status, (response.status_code, html[:300])
    assert response.mimetype == "text/html"
    assert says in html, html
    return html


# --- first binding wins (no token) -----------------------------------------------------------


def test_another_submission_of_a_bound_participant_gets_the_conflict_page(app):
    """The issue's second attack: another document with the victim's PID and one heartbeat
    made /start resume the attacker's session, and the victim's own links got 403."""
    victim = app.test_client()
    token = token_from(victim.get("/start", query_string=VICTIM))
    attacker = app.test_client()
    for path in ("/start", "/annotate/doc-3", "/id=doc-4"):
        html = refused(attacker.get(path, query_string=JUNK), 409, "already has a submission")
        assert CONTACT in html and f"mailto:{CONTACT}" in html
        assert "return this submission" in html
        assert token not in html and "real-submission" not in html
    assert sessions_count() == 1
    conflict = db.session.scalars(db.select(IdentityConflict)).one()
    assert conflict.bound_submission == "real-submission"
    assert conflict.submission == "junk-submission"
    assert conflict.arrivals == 3 and conflict.decision is None
    # The victim, in their browser and in another, still lands on their own session.
    assert token_from(victim.get("/start", query_string=VICTIM)) == token
    assert token_from(app.test_client().get("/start", query_string=VICTIM)) == token


def test_the_dashboard_lists_conflicts_and_allow_gives_the_submission_a_session_of_its_own(app):
    victim = app.test_client()
    token = token_from(victim.get("/start", query_string=VICTIM))
    assert consent(victim, token).status_code == 303
    attacker = app.test_client()
    assert attacker.get("/start", query_string=JUNK).status_code == 409
    console = researcher_client(app)
    page = console.get("/research/").get_data(as_text=True)
    assert 'id="conflicts-heading"' in page
    assert "real-submission" in page and "junk-submission" in page
    assert ">Allow</button>" in page and ">Keep refused</button>" in page
    conflict = db.session.scalars(db.select(IdentityConflict)).one()

    kept = console.post(f"/research/identity-conflicts/{conflict.id}", data={"decision": "refused"})
    assert kept.status_code == 400  # the console's CSRF token is required
    csrf_token = page.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
    kept = console.post(
        f"/research/identity-conflicts/{conflict.id}",
        data={"decision": "refused", "csrf_token": csrf_token},
    )
    assert kept.status_code == 303
    assert attacker.get("/start", query_string=JUNK).status_code == 409

    allowed = console.post(
        f"/research/identity-conflicts/{conflict.id}",
        data={"decision": "allowed", "csrf_token": csrf_token},
    )
    assert allowed.status_code == 303
    other = token_from(attacker.get("/start", query_string=JUNK))
    assert other != token
    assert session_of(other).document_id != session_of(token).document_id
    # What the allowed submission does touches nothing of the first one: it declines,
    # sends heartbeats; the victim's /start still resumes the victim's session at its step.
    assert consent(attacker, other, "decline").status_code == 303
    attacker.post(f"/api/sessions/{other}/heartbeat", headers=csrf(other))
    assert token_from(victim.get("/start", query_string=VICTIM)) == token
    assert session_of(token).outcome is None
    assert victim.get(f"/s/{token}").headers["Location"] == f"/s/{token}/training"


def test_what_an_allowed_submission_fails_in_training_does_not_fail_another(app):
    victim = app.test_client()
    token = token_from(victim.get("/start", query_string=VICTIM))
    attacker = app.test_client()
    attacker.get("/start", query_string=JUNK)
    conflict = db.session.scalars(db.select(IdentityConflict)).one()
    conflict.decision = "allowed"
    db.session.commit()
    other = token_from(attacker.get("/start", query_string=JUNK))
    consent(attacker, other)
    assert practice_check(attacker, other, []).get_json()["failed"] is True
    assert session_of(other).outcome == "failed_training"
    consent(victim, token)
    assert victim.get(f"/s/{token}").headers["Location"] == f"/s/{token}/training"
    assert practice_check(victim, token, right_answers()).get_json()["passed"] is True


# --- Prolific's API (with a token) -----------------------------------------------------------


@pytest.fixture
def api():
    with prolific_api() as stand_in:
        yield stand_in


def api_app(make_app, api, **config):
    return make_app(PROLIFIC_API_TOKEN=API_TOKEN, PROLIFIC_API_URL=api.url, **config)


def test_an_open_submission_of_the_participant_is_verified(make_app, api):
    api.submissions["real-submission"] = ("victim-pid", STUDY_ID, "ACTIVE")
    app = api_app(make_app, api)
    with app.app_context():
        token = token_from(app.test_client().get("/start", query_string=VICTIM))
        assert session_of(token).verification == "verified"
        assert api.asked == [("/api/v1/submissions/real-submission/", f"Token {API_TOKEN}")]
        # Reopening the link asks nothing more: the submission has its session.
        assert token_from(app.test_client().get("/start", query_string=VICTIM)) == token
        assert len(api.asked) == 1


@pytest.mark.parametrize(
    "known",
    [
        None,  # 404: no such submission
        ("someone-else", STUDY_ID, "ACTIVE"),
        ("victim-pid", "another-study", "ACTIVE"),
        ("victim-pid", STUDY_ID, "RETURNED"),
    ],
)
@pytest.mark.parametrize("path", ["/start", "/annotate/doc-1"])
def test_a_submission_prolific_does_not_confirm_is_refused(make_app, api, known, path):
    if known is not None:
        api.submissions["junk-submission"] = known
    app = api_app(make_app, api)
    with app.app_context():
        response = app.test_client().get(path, query_string=JUNK)
        html = refused(response, 403, "Prolific does not list this submission as yours")
        assert API_TOKEN not in html
        assert sessions_count() == 0
        assert db.session.scalar(db.select(db.func.count(IdentityConflict.id))) == 0


@pytest.mark.parametrize("trouble", ["server error", "timeout"])
def test_without_an_answer_in_time_the_worker_is_let_in_unverified(make_app, api, trouble):
    if trouble == "server error":
        api.status = 503
    else:
        api.delay = 1.0
    app = api_app(make_app, api, PROLIFIC_API_TIMEOUT=0.3)
    with app.app_context():
        token = token_from(app.test_client().get("/start", query_string=VICTIM))
        assert session_of(token).verification == "unverified"
        console = researcher_client(app)
        page = console.get("/research/").get_data(as_text=True)
        assert "let in <strong>unverified</strong>" in page
        assert '<span class="tag tag--flag">unverified</span>' in page
        export = console.get("/research/export/sessions.csv").get_data(as_text=True)
        header, row = export.lstrip("\ufeff").splitlines()[:2]
        assert row.split(",")[header.split(",").index("verification")] == "unverified"


def test_the_api_timeout_defaults_to_three_seconds(make_app):
    assert make_app().config["PROLIFIC_API_TIMEOUT"] == 3
    assert make_app().config["PROLIFIC_API_URL"] == "https://api.prolific.com"


# --- no step out of order --------------------------------------------------------------------


def test_training_moves_and_text_are_refused_before_consent(app):
    """The issue's first attack: one empty training check before consent failed the victim
    for good, and PUT /position answered paragraph text before consent."""
    client = app.test_client()
    token = token_from(client.get("/start", query_string=VICTIM))
    check = practice_check(client, token, [])
    assert check.status_code == 409 and check.get_json()["error"]["code"] == "step_pending"
    assert db.session.scalar(db.select(db.func.count(TrainingAttempt.id))) == 0
    move = client.put(f"/api/sessions/{token}/position", json=NEXT, headers=csrf(token))
    assert move.status_code == 409 and move.get_json()["error"]["code"] == "step_pending"
    assert "rained" not in move.get_data(as_text=True)
    assert session_of(token).furthest == 0
    # The suggestions' spans quote the text too.
    assert client.get(f"/api/sessions/{token}/suggestions").status_code == 409
    # In order, the same requests work: consent, training, then the task.
    consent(client, token)
    assert practice_check(client, token, right_answers()).get_json()["passed"] is True
    early = client.put(f"/api/sessions/{token}/position", json=NEXT, headers=csrf(token))
    assert early.status_code == 409  # the task page was not served yet
    assert client.get(f"/s/{token}").status_code == 200
    move = client.put(f"/api/sessions/{token}/position", json=NEXT, headers=csrf(token))
    assert move.status_code == 200 and "rained" in move.get_data(as_text=True)


# --- MTurk: consent belongs to the assignment ------------------------------------------------


def test_declining_under_a_workers_id_does_not_lock_their_assignment_out(make_app, tmp_path):
    app = make_app(study_taxonomy(tmp_path, training=False, prolific_study_id=None))
    with app.app_context():
        forged = {"workerId": "VICTIM", "assignmentId": "A-junk", "turkSubmitTo": SANDBOX}
        attacker = app.test_client()
        junk = token_from(attacker.get("/start", query_string=forged))
        assert consent(attacker, junk, "decline").headers["Location"] == f"/s/{junk}/end"
        real = {"workerId": "VICTIM", "assignmentId": "A-real", "turkSubmitTo": SANDBOX}
        worker = app.test_client()
        token = token_from(worker.get("/start", query_string=real))
        assert token != junk
        session = session_of(token)
        assert (session.outcome, session.submission) == (None, "A-real")
        assert worker.get(f"/s/{token}").headers["Location"] == f"/s/{token}/consent"
        # Reopening the HIT lands on the same session (one assignment, one session).
        assert token_from(app.test_client().get("/start", query_string=real)) == token


# --- the study's Prolific id -----------------------------------------------------------------


@pytest.mark.parametrize("path", ["/start", "/annotate/doc-1", "/id=doc-1"])
@pytest.mark.parametrize("study", ["another-study", None])
def test_arrivals_with_another_study_id_or_none_are_refused(app, path, study):
    response = app.test_client().get(path, query_string=prolific("s-9", study=study))
    refused(response, 403, "This link belongs to another study")
    assert sessions_count() == 0


def test_production_refuses_prolific_arrivals_until_the_study_names_its_id(
    make_app, tmp_path, monkeypatch
):
    secret = "a-production-secret-key-of-more-than-32-characters"
    monkeypatch.setenv("SECRET_KEY", secret)
    unnamed = study_taxonomy(tmp_path, prolific_study_id=None)
    app = make_app(unnamed, APP_ENV="production", SECRET_KEY=secret)
    with app.app_context():
        refused(app.test_client().get("/start", query_string=VICTIM), 503, "not open yet")
    app = make_app(study_taxonomy(tmp_path), APP_ENV="production", SECRET_KEY=secret)
    with app.app_context():
        no_submission = {"PROLIFIC_PID": "victim-pid", "STUDY_ID": STUDY_ID}
        refused(app.test_client().get("/start", query_string=no_submission), 400, "study link")
        assert token_from(app.test_client().get("/start", query_string=VICTIM))


def test_check_taxonomy_reports_a_prolific_study_without_its_id(make_app, tmp_path):
    app = make_app()
    unnamed = study_taxonomy(tmp_path, prolific_study_id=None)
    result = app.test_cli_runner().invoke(args=["check-taxonomy", unnamed])
    assert result.exit_code == 0, result.output
    assert "study.prolific_study_id: missing" in result.output
    named = app.test_cli_runner().invoke(args=["check-taxonomy", study_taxonomy(tmp_path)])
    assert "prolific_study_id: missing" not in named.output
    assert f"prolific study id: {STUDY_ID}" in named.output


# --- failing is final ------------------------------------------------------------------------


def test_failing_training_cannot_be_retried_under_another_study_id_or_submission(app):
    """The issue: another document's link with another STUDY_ID, or none, trained again,
    and the second try passed."""
    client = app.test_client()
    token = token_from(client.get("/start", query_string=VICTIM))
    consent(client, token)
    assert practice_check(client, token, []).get_json()["failed"] is True
    for study in ("another-study", None):
        retry = client.get("/annotate/doc-3", query_string=prolific("x-2", study=study))
        refused(retry, 403, "another study")
    refused(client.get("/annotate/doc-3", query_string=prolific("x-3")), 409, "already has")
    # The same submission on another document's link: its own session, at its end.
    again = token_from(client.get("/annotate/doc-3", query_string=VICTIM))
    assert again == token
    assert client.get(f"/s/{token}").headers["Location"] == f"/s/{token}/end"
    assert sessions_count() == 1


def test_training_attempts_are_numbered_atomically_per_worker_and_study(make_app, tmp_path):
    """Four checks at once from four documents stored four attempts numbered 1."""
    app = make_app(study_taxonomy(tmp_path, consent=False, prolific_study_id=None))
    with app.app_context():
        client = app.test_client()
        tokens = [
            token_from(client.get(f"/annotate/{doc}", query_string={"annotator": "w1"}))
            for doc in ("doc-1", "doc-2", "doc-3", "doc-4")
        ]
        for token in tokens:
            assert client.get(f"/s/{token}/training").status_code == 200
        db.session.remove()
        barrier = threading.Barrier(len(tokens))
        answers = {}

        def send(token: str) -> None:
            with app.app_context():
                barrier.wait()
                answers[token] = practice_check(app.test_client(), token, [])

        threads = [threading.Thread(target=send, args=(token,)) for token in tokens]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        db.session.expire_all()
        attempts = db.session.scalars(db.select(TrainingAttempt)).all()
        assert [a.attempt for a in attempts] == [1]  # attempts: 1; the rest were refused
        assert sorted(r.status_code for r in answers.values()) == [200, 409, 409, 409]
        duplicate = TrainingAttempt(
            **{
                column: getattr(attempts[0], column)
                for column in ("annotator_id", "study_key", "submission", "document_id")
            },
            session_id=session_of(tokens[-1]).id,
            attempt=1,
            spans=[],
            feedback=[],
        )
        db.session.add(duplicate)
        with pytest.raises(IntegrityError):
            db.session.commit()
        db.session.rollback()
        # Every other document of the worker ends with failed_training too.
        for token in tokens:
            assert client.get(f"/s/{token}", follow_redirects=True).request.path.endswith("/end")


def test_failed_checks_is_final_on_every_later_document(make_app, tmp_path):
    """The issue: after failed_checks, opening another document and submitting gave
    `completed`."""
    path = study_taxonomy(
        tmp_path,
        consent=False,
        training=False,
        prolific_study_id=None,
        study_lines="  attention_checks: fail\n",
    )
    app = make_app(path)
    with app.app_context():
        check = {
            "id": "check-1",
            "paragraphs": ["Mara baked bread.", "Lord Findon came in."],
            "gold": [{"paragraph_id": 1, "start": 0, "end": 11, "category": "new-person"}],
        }
        records = tmp_path / "check.jsonl"
        records.write_text(json.dumps(check) + "\n", encoding="utf-8")
        imported = app.test_cli_runner().invoke(args=["import-documents", str(records)])
        assert imported.exit_code == 0, imported.output
        client = app.test_client()
        alice = {"annotator": "alice"}
        early = token_from(client.get("/annotate/doc-4", query_string=alice))  # opened before
        failing = token_from(client.get("/annotate/check-1", query_string=alice))
        client.get(f"/s/{failing}")
        read_to_the_end(client, failing, 2)
        done = client.post(f"/api/sessions/{failing}/submit", headers=csrf(failing))
        assert done.get_json()["outcome"] == "failed_checks"
        later = token_from(client.get("/annotate/doc-2", query_string=alice))
        assert client.get(f"/s/{later}").headers.get("Location") == f"/s/{later}/end"
        end = client.get(f"/s/{later}/end").get_data(as_text=True)
        assert "Your part in this study has ended" in end
        assert client.post(f"/api/sessions/{later}/submit", headers=csrf(later)).status_code == 409
        assert session_of(later).outcome == "failed_checks"
        # The document opened before the failure: submitting it does not complete either.
        client.get(f"/s/{early}")
        read_to_the_end(client, early, 2)
        answer = client.post(f"/api/sessions/{early}/submit", headers=csrf(early)).get_json()
        assert answer["outcome"] == "failed_checks"
        # /start gives nothing that could end otherwise: a worker flagged by the checks
        # gets no session at all (issue 28 point 5, app.crowd.checks.flagged), only the end.
        before = sessions_count()
        start = client.get("/start", query_string=alice)
        assert start.status_code == 200
        assert "no more documents for you in this study" in start.get_data(as_text=True)
        assert sessions_count() == before
        outcomes = db.session.scalars(db.select(AnnotationSession.outcome)).all()
        assert "completed" not in outcomes


# --- issue 27 point 2: one submission, one session -------------------------------------------


def test_reopening_the_study_link_after_submit_resumes_the_same_session(make_app, tmp_path):
    path = study_taxonomy(tmp_path, training=False)
    # No attention check: the practice text, without `training:`, would be one, and a
    # worker flagged by it gets the study's end at /start (issue 28 point 5), not their
    # session.
    path_text = (
        Path(path)
        .read_text(encoding="utf-8")
        .replace("attention_check_share: 0.1", "attention_check_share: 0.0")
    )
    assert "attention_check_share: 0.0" in path_text
    after = 'survey:\n  after:\n    - {key: fine, type: text, text: "Anything else?"}\n'
    Path(path).write_text(path_text + after, encoding="utf-8")
    app = make_app(path)
    with app.app_context():
        client = app.test_client()
        token = token_from(client.get("/start", query_string=VICTIM))
        consent(client, token)
        assert client.get(f"/s/{token}").status_code == 200
        read_to_the_end(client, token, 2)
        client.post(f"/api/sessions/{token}/submit", headers=csrf(token))
        for browser in (client, app.test_client()):
            again = browser.get("/start", query_string=VICTIM)
            assert token_from(again) == token
            assert browser.get(f"/s/{token}").headers["Location"] == f"/s/{token}/survey/after"
        client.post(f"/s/{token}/survey/after", data=form(token, **{"q-fine": "ok"}))
        assert token_from(client.get("/start", query_string=VICTIM)) == token
        assert client.get(f"/s/{token}/complete").status_code == 200
        submission = db.select(db.func.count(AnnotationSession.id)).filter_by(
            submission="real-submission"
        )
        assert db.session.scalar(submission) == 1
        assert sessions_count() == 1
        # A signed (here: unsigned, testing) annotator link still gets another document.
        named = app.test_client()
        first = token_from(named.get("/start", query_string={"annotator": "lab-member"}))
        session = session_of(first)
        session.status = "submitted"
        db.session.commit()
        assert token_from(named.get("/start", query_string={"annotator": "lab-member"})) != first


def test_one_submission_arriving_at_once_is_one_session(app):
    """Ten arrivals of one new submission at the same moment (a double click, a reload
    storm): the first makes the session, the others wait for the worker's lock and resume
    it. Before, they decided again from the worker's other sessions (none of this
    submission's) and tried a second session, which the unique constraint refused (500)."""
    db.session.remove()
    barrier = threading.Barrier(10)
    answers = []

    def arrive() -> None:
        with app.app_context():
            barrier.wait()
            answers.append(app.test_client().get("/start", query_string=VICTIM))

    threads = [threading.Thread(target=arrive) for _ in range(10)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(r.status_code for r in answers) == [302] * 10
    assert len({token_from(r) for r in answers}) == 1
    assert sessions_count() == 1


# --- issue 27 point 6: placeholders ----------------------------------------------------------


@pytest.mark.parametrize(
    "query",
    [
        "PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}",
        "PROLIFIC_PID=%25PROLIFIC_PID%25&STUDY_ID=study-1&SESSION_ID=%25SESSION_ID%25",
        "PROLIFIC_PID=p-1&STUDY_ID=study-1&SESSION_ID={{%SESSION_ID%}}",
        "workerId=${workerId}&assignmentId=${assignmentId}&hitId=H1",
        "workerId=W1&assignmentId={{assignmentId}}&hitId=H1",
    ],
)
@pytest.mark.parametrize("path", ["/start", "/annotate/doc-1", "/validate/r1"])
def test_unexpanded_placeholders_are_refused_with_a_page_that_explains(app, query, path, tmp_path):
    items = tmp_path / "items.jsonl"
    items.write_text('{"source": "human", "document_id": "doc-1", "span": {"text": "Bob"}}\n')
    command = ["validation", "create-round", "r1", "--items", str(items)]
    created = app.test_cli_runner().invoke(args=command)
    assert created.exit_code == 0, created.output
    response = app.test_client().get(f"{path}?{query}")
    html = refused(response, 400, "This link has not been filled in")
    assert "placeholder" in html and "<code>" in html
    assert db.session.scalar(db.select(db.func.count(Annotator.id))) == 0
    assert sessions_count() == 0
