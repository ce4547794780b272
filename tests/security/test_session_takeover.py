"""A public id must not open someone else's session (issue 13, points 1, 2 and 7).

Each attack is made by a second client (another browser: no cookies) that knows only the
victim's public id: Prolific PID, MTurk workerId, an annotator name. Before the fix every
one of them was redirected to the victim's /s/<token>. Resuming now needs the browser that
opened the session, the platform's per-submission secret, or a signed annotator link.
"""

from __future__ import annotations

import pytest

from app.core.extensions import db
from app.imports.document_formats import DocumentInput
from app.imports.document_store import import_documents
from app.models import AnnotationSession, Annotator, ValidationSession
from app.rules.platforms import mturk_submit_url
from config.settings import config_for
from tests.support import signed_links
from tests.support.apps import app_factory, make_test_config
from tests.support.taxonomies import taxonomy_variant
from tests.support.worker_api import token_from

SECRET = "a-production-secret-key-of-more-than-32-characters"
SANDBOX = "https://workersandbox.mturk.com"
PARAGRAPHS = ("Anna met Bob at the pier.", "They talked until the ship left.")
REFUSED = "same browser"  # the refusal page says how to get back to one's task
CONFLICT = "already has a submission in this study"  # another SESSION_ID of a bound PID


def sign(target: str, name: str, key: str = SECRET) -> str:
    """The `sig` of a link to TARGET for NAME (docs/contracts.md#signed-links)."""
    return signed_links.sign(key, target, name)


@pytest.fixture
def make_app(database_uri, monkeypatch):
    """An app on the test database: `make_app("production", **config)`; the documents
    doc-1 and doc-2 and the validation round r1 are there."""

    def config(env: str = "testing", **overrides) -> dict:
        monkeypatch.setenv("SECRET_KEY", SECRET)
        return make_test_config(database_uri, APP_ENV=env, SECRET_KEY=SECRET, **overrides)

    yield from app_factory(config)


@pytest.fixture
def world(make_app, database_uri, tmp_path):
    """Two documents and a validation round on the test database (made once per test)."""
    application = make_app()
    with application.app_context():
        import_documents(
            [DocumentInput("doc-1", None, PARAGRAPHS), DocumentInput("doc-2", None, PARAGRAPHS)]
        )
        items = tmp_path / "items.jsonl"
        items.write_text(
            '{"id": "i1", "source": "human", "document_id": "doc-1", "span": {"text": "Bob"}}\n'
        )
        result = application.test_cli_runner().invoke(
            args=["validation", "create-round", "r1", "--items", str(items)]
        )
        assert result.exit_code == 0, result.output
        db.session.remove()
    return make_app


def assert_refused(response, *tokens: str, status: int = 403, says: str = REFUSED) -> None:
    """A 403 page saying how to get back to one's task (or the page `says`), naming no
    token."""
    assert response.status_code == status, (response.status_code, response.headers.get("Location"))
    assert response.mimetype == "text/html"
    html = response.get_data(as_text=True)
    assert says in html
    assert "Location" not in response.headers
    for token in tokens:
        assert token not in html


def stored_params(token: str) -> dict:
    db.session.expire_all()
    row = db.session.scalars(db.select(AnnotationSession).filter_by(token=token)).first()
    if row is None:
        row = db.session.scalars(db.select(ValidationSession).filter_by(token=token)).one()
    return dict(row.platform_params)


PROLIFIC = {"PROLIFIC_PID": "victim-pid", "STUDY_ID": "study-1", "SESSION_ID": "secret-1"}
MTURK = {"workerId": "VICTIM", "assignmentId": "A-victim", "hitId": "H1", "turkSubmitTo": SANDBOX}
OPEN_PATHS = ["/annotate/doc-1", "/id=doc-1", "/start", "/validate/r1"]


# --- the attacks ------------------------------------------------------------------------


@pytest.mark.parametrize("path", OPEN_PATHS)
@pytest.mark.parametrize(
    "forged",
    [
        {"PROLIFIC_PID": "victim-pid"},
        {"PROLIFIC_PID": "victim-pid", "STUDY_ID": "study-1"},
        {"PROLIFIC_PID": "victim-pid", "STUDY_ID": "study-1", "SESSION_ID": "guess"},
        {"PROLIFIC_PID": "victim-pid", "STUDY_ID": "other", "SESSION_ID": "secret-1"},
    ],
)
def test_a_prolific_id_does_not_open_the_victims_session(world, path, forged):
    app = world()
    with app.app_context():
        victim = token_from(app.test_client().get(path, query_string=PROLIFIC))
        attacker = app.test_client().get(path, query_string=forged)
        if forged.get("SESSION_ID") == "guess" and path != "/validate/r1":
            # Another submission of the bound participant in the same study (issue 26).
            assert_refused(attacker, victim, status=409, says=CONFLICT)
        else:
            assert_refused(attacker, victim)
        assert stored_params(victim) == {"study_id": "study-1", "session_id": "secret-1"}


@pytest.mark.parametrize("path", OPEN_PATHS)
def test_a_worker_id_does_not_open_the_victims_session_nor_move_its_submit_target(world, path):
    app = world()
    with app.app_context():
        victim = token_from(app.test_client().get(path, query_string=MTURK))
        for forged in (
            {"workerId": "VICTIM"},
            {"workerId": "VICTIM", "assignmentId": "A-evil", "turkSubmitTo": SANDBOX},
            {"workerId": "VICTIM", "assignmentId": "A-evil", "hitId": "H1"},
        ):
            answer = app.test_client().get(path, query_string=forged)
            if path == "/start" and "assignmentId" in forged:
                # Another assignment is another session on another document (issue 27
                # point 2): never the victim's.
                assert token_from(answer) != victim
            else:
                assert_refused(answer, victim)
        assert stored_params(victim) == {
            "assignment_id": "A-victim",
            "hit_id": "H1",
            "turk_submit_to": SANDBOX,
        }


@pytest.mark.parametrize("path", OPEN_PATHS)
def test_an_unsigned_annotator_name_does_not_open_the_victims_session_in_production(world, path):
    app = world("production")
    target = {"/start": "start", "/validate/r1": "round:r1"}.get(path, "doc-1")
    with app.app_context():
        signed = {"annotator": "alice", "sig": sign(target, "alice")}
        victim = token_from(app.test_client().get(path, query_string=signed))
        for forged in (
            {"annotator": "alice"},
            {"annotator": "alice", "sig": "0" * 64},
            {"annotator": "alice", "sig": sign(target, "alice", key="another-key")},
            {"annotator": "alice", "sig": sign("doc-2", "alice")},  # another target's link
        ):
            assert_refused(app.test_client().get(path, query_string=forged), victim)


def test_an_unsigned_name_is_refused_in_production_even_for_a_new_session(world):
    app = world("production")
    with app.app_context():
        response = app.test_client().get("/annotate/doc-1", query_string={"annotator": "bob"})
        assert response.status_code == 403
        assert "signed" in response.get_data(as_text=True)
        assert db.session.scalar(db.select(db.func.count(AnnotationSession.id))) == 0


# --- legitimate resumes -----------------------------------------------------------------


@pytest.mark.parametrize("path", OPEN_PATHS)
def test_the_browser_that_opened_a_session_resumes_it(world, path):
    app = world()
    with app.app_context():
        browser = app.test_client()
        token = token_from(browser.get(path, query_string=PROLIFIC))
        # The same browser comes back through a link without the per-submission secret.
        assert token_from(browser.get(path, query_string={"PROLIFIC_PID": "victim-pid"})) == token
        mturk_token = token_from(browser.get(path, query_string={**MTURK, "workerId": "W2"}))
        assert token_from(browser.get(path, query_string={"workerId": "W2"})) == mturk_token


@pytest.mark.parametrize("path", OPEN_PATHS)
@pytest.mark.parametrize(
    "link",
    [
        pytest.param(PROLIFIC, id="prolific-session-id-with-pid-and-study"),
        pytest.param(MTURK, id="mturk-assignment-in-progress"),
    ],
)
def test_the_platform_proof_resumes_the_session_in_another_browser(world, path, link):
    app = world()
    with app.app_context():
        token = token_from(app.test_client().get(path, query_string=link))
        assert token_from(app.test_client().get(path, query_string=link)) == token


@pytest.mark.parametrize("path", OPEN_PATHS)
def test_a_new_assignment_never_rewrites_the_submit_target_of_another(world, path):
    """A different assignmentId is another assignment, not proof; the browser that opened
    the session still resumes its work, which stays bound to the assignment that began it."""
    app = world()
    with app.app_context():
        browser = app.test_client()
        token = token_from(browser.get(path, query_string=MTURK))
        other_assignment = {
            **MTURK,
            "assignmentId": "A-new",
            "turkSubmitTo": "https://www.mturk.com",
        }
        if path == "/start":
            # The study link: one assignment, one session and one document (issue 27).
            other = token_from(app.test_client().get(path, query_string=other_assignment))
            assert other != token
            assert token_from(browser.get(path, query_string=other_assignment)) == other
        else:
            assert_refused(app.test_client().get(path, query_string=other_assignment), token)
            assert token_from(browser.get(path, query_string=other_assignment)) == token
        assert stored_params(token) == {
            "assignment_id": "A-victim",
            "hit_id": "H1",
            "turk_submit_to": SANDBOX,
        }


@pytest.mark.parametrize("env", ["testing", "production"])
@pytest.mark.parametrize("path", OPEN_PATHS)
def test_a_signed_link_resumes_in_another_browser(world, env, path):
    app = world(env)
    target = {"/start": "start", "/validate/r1": "round:r1"}.get(path, "doc-1")
    query = {"annotator": "alice", "sig": sign(target, "alice")}
    with app.app_context():
        token = token_from(app.test_client().get(path, query_string=query))
        assert token_from(app.test_client().get(path, query_string=query)) == token


@pytest.mark.parametrize("env", ["testing", "development"])
def test_unsigned_names_work_in_development_and_testing(world, env):
    app = world(env)
    with app.app_context():
        token = token_from(app.test_client().get("/annotate/doc-1?annotator=carol"))
        assert token_from(app.test_client().get("/annotate/doc-1?annotator=carol")) == token
        assert token_from(app.test_client().get("/validate/r1?annotator=carol"))


def test_a_new_identity_on_a_new_document_still_opens_a_new_session(world):
    """Creating a session for a never-seen (identity, document) stays as it was; it gives
    no access to the identity's other sessions."""
    app = world()
    with app.app_context():
        victim = token_from(app.test_client().get("/annotate/doc-1", query_string=PROLIFIC))
        attacker = app.test_client()
        own = token_from(
            attacker.get("/annotate/doc-2", query_string={"PROLIFIC_PID": "victim-pid"})
        )
        assert own != victim
        assert_refused(
            attacker.get("/annotate/doc-1", query_string={"PROLIFIC_PID": "victim-pid"}), victim
        )


# --- point 7: turkSubmitTo --------------------------------------------------------------

LOOK_ALIKES = [
    "https://evil.com\\.mturk.com",
    "https://evil.com\\@www.mturk.com",
    "https://www.mturk.com@evil.com",
    "https://user@www.mturk.com",
    "https://www.mturk.com:8443",
    "https://www.mturk.com:443",
    "http://www.mturk.com",
    "https://evil.mturk.com",
    "https://www.mturk.com.evil.com",
    "https://www.mturk.com/evil",
    "https://www.mturk.com//evil.com",
    "https://www.mturk.com?next=https://evil.com",
    "https://www.mturk.com#x",
    "https:///www.mturk.com",
    "//www.mturk.com",
    "https://WWW.MTURK.COM.",
    "https://www.mturk.com\\",
    "https://www.mturk.com\t@evil.com",
    "https://www\u3002mturk\u3002com",
    "https://xn--www-mturk.com",
    "javascript:alert(1)//www.mturk.com",
]


@pytest.mark.parametrize("value", LOOK_ALIKES)
def test_look_alike_submit_targets_are_refused(world, value):
    assert mturk_submit_url(value) is None
    app = world()
    with app.app_context():
        query = {"workerId": "W9", "assignmentId": "A9", "turkSubmitTo": value}
        response = app.test_client().get("/annotate/doc-1", query_string=query)
        assert response.status_code == 400
        assert "turkSubmitTo" in response.get_data(as_text=True)
        assert db.session.scalar(db.select(db.func.count(AnnotationSession.id))) == 0


@pytest.mark.parametrize("value", [SANDBOX, "https://www.mturk.com", "https://www.mturk.com/"])
def test_mturk_origins_are_accepted(world, value):
    origin = value.rstrip("/")
    assert mturk_submit_url(value) == f"{origin}/mturk/externalSubmit"
    app = world()
    with app.app_context():
        query = {"workerId": "W9", "assignmentId": "A9", "turkSubmitTo": value}
        token = token_from(app.test_client().get("/annotate/doc-1", query_string=query))
        assert stored_params(token)["turk_submit_to"] == origin


# --- point 2: production needs a study link; opens are rate-limited ---------------------


@pytest.mark.parametrize("path", ["/start", "/annotate/doc-1", "/id=doc-1", "/validate/r1"])
def test_production_asks_for_the_study_link_instead_of_making_anonymous_workers(world, path):
    app = world("production")
    with app.app_context():
        response = app.test_client().get(path)
        assert response.status_code == 400
        assert "study link" in response.get_data(as_text=True)
        assert not any("falte_" in c for c in response.headers.getlist("Set-Cookie"))
        assert db.session.scalar(db.select(db.func.count(Annotator.id))) == 0


def test_a_study_may_accept_anonymous_workers(world, tmp_path):
    app = world(
        "production",
        TAXONOMY_PATH=str(taxonomy_variant(tmp_path, study_lines="  anonymous: true\n")),
    )
    with app.app_context():
        browser = app.test_client()
        response = browser.get("/start")
        token = token_from(response)
        assert "Secure" in response.headers["Set-Cookie"]
        assert token_from(browser.get("/start")) == token
        # A made-up anonymous cookie is not one the app issued: a new worker, not theirs.
        forger = app.test_client()
        forger.set_cookie("falte_anon", "A" * 24)
        assert token_from(forger.get("/start")) != token


def test_a_cookie_from_the_app_still_opens_in_production(world, tmp_path):
    """A worker remembered by the anonymous cookie (from a study that accepted them) keeps
    working after the study stops accepting new anonymous workers."""
    anonymous = world(
        "production",
        TAXONOMY_PATH=str(taxonomy_variant(tmp_path, study_lines="  anonymous: true\n")),
    )
    with anonymous.app_context():
        browser = anonymous.test_client()
        token = token_from(browser.get("/annotate/doc-1"))
        cookies = {name: browser.get_cookie(name).value for name in ("falte_anon",)}
    app = world("production")
    with app.app_context():
        later = app.test_client()  # the same browser, after a redeploy without anonymous
        for name, value in cookies.items():
            later.set_cookie(name, value)
        assert token_from(later.get("/annotate/doc-1")) == token


def _opens(app, addresses, path="/annotate/doc-1"):
    client = app.test_client()
    return [
        client.get(path, query_string={"PROLIFIC_PID": f"p-{i}"}, headers={"X-Forwarded-For": a})
        for i, a in enumerate(addresses)
    ]


@pytest.mark.parametrize("path", OPEN_PATHS)
def test_opens_are_rate_limited_per_client_address(world, path):
    app = world(OPEN_RATE_LIMIT="3 per minute", TRUSTED_PROXIES=1)
    with app.app_context():
        responses = _opens(app, ["203.0.113.1"] * 4 + ["203.0.113.2"], path)
        assert [r.status_code for r in responses] == [302, 302, 302, 429, 302]
        seconds = responses[3].headers["Retry-After"]
        assert 1 <= int(seconds) <= 60
        html = responses[3].get_data(as_text=True)
        assert f"Too many attempts; try again in {seconds} seconds." in html


def test_open_rate_limit_defaults_to_60_per_minute():
    assert config_for("production").OPEN_RATE_LIMIT == "60 per minute"
    assert config_for("development").OPEN_RATE_LIMIT == "60 per minute"


def test_head_requests_count_as_opens(world):
    """HEAD runs the GET view (it opens a session too): it must not bypass the limit."""
    app = world(OPEN_RATE_LIMIT="2 per minute")
    with app.app_context():
        client = app.test_client()
        statuses = [
            client.open("/start", method=method, query_string={"PROLIFIC_PID": f"h-{i}"})
            for i, method in enumerate(("HEAD", "HEAD", "GET"))
        ]
        assert [r.status_code for r in statuses] == [302, 302, 429]
