"""Places in a study's quota (app.crowd.assignment.claims): a session whose page was never loaded,
or idle for claim_minutes, gives its place back; its worker comes back to their work and
takes the place back, over the quota if need be; the page's heartbeat keeps the place.
On PostgreSQL, assignment is serialised per document: many simultaneous arrivals never
overfill a document, and a document being decided on does not hold up the others."""

from __future__ import annotations

import threading
import time
import uuid
from collections import Counter
from contextlib import contextmanager
from datetime import timedelta

import pytest
from sqlalchemy import create_engine, text

from app.core.extensions import db
from app.core.security import capability_csrf_token
from app.crowd.assignment.claims import ClaimRule, holds_place
from app.crowd.assignment.service import occupied_places
from app.models import AnnotationSession, Annotator, Document, utcnow
from tests.support.assignment import add_documents, assert_no_tasks, idle_for, session_of, start

QUOTA_ONE = {"annotators_per_document": 1, "attention_check_share": 0.0}


@contextmanager
def one_document(make_app, **settings):
    """An app with these settings and one document, in its context: the test client and the
    document's id."""
    app = make_app(**settings)
    with app.app_context():
        [document_id] = add_documents(1)
        yield app.test_client(), document_id


def load_page(client, session: AnnotationSession) -> None:
    """What the worker's browser does after /start: load /s/<token>."""
    assert client.get(f"/s/{session.token}").status_code == 200


def opened(client, external_id: str) -> AnnotationSession:
    """A worker who starts and whose browser then loads the page."""
    session = session_of(start(client, external_id))
    load_page(client, session)
    return session


def move(client, session: AnnotationSession, paragraph_id: int):
    """PUT position: the page's Next (or Previous)."""
    return client.put(
        f"/api/sessions/{session.token}/position",
        json={"paragraph_id": paragraph_id},
        headers=headers(session.token),
    )


def save(client, session: AnnotationSession, annotation_id: str | None = None):
    """POST one annotation on the first paragraph."""
    span = {"paragraph_id": 0, "start": 0, "end": 4, "text": "Anna"}
    return client.post(
        f"/api/sessions/{session.token}/annotations",
        json={"id": annotation_id or str(uuid.uuid4()), "category": "new-person", "span": span},
        headers=headers(session.token),
    )


def holding(claim_minutes: int = 10, later: float = 0) -> Counter:
    """Places occupied per document now (or `later` minutes from now), by the claim rule."""
    db.session.expire_all()
    places = occupied_places(ClaimRule.at(utcnow() + timedelta(minutes=later), claim_minutes))
    db.session.commit()
    return places


def headers(token: str) -> dict[str, str]:
    return {"X-CSRFToken": capability_csrf_token("annotate", token)}


def heartbeat(client, token: str, **kwargs):
    return client.post(f"/api/sessions/{token}/heartbeat", headers=headers(token), **kwargs)


# --- never loaded, idle, back --------------------------------------------------------------


def test_the_first_page_load_is_recorded_at_once(make_app):
    with one_document(make_app, **QUOTA_ONE) as (client, _):
        session = session_of(start(client, "w"))
        assert session.page_loaded_at is None
        load_page(client, session)  # within a minute of /start: no activity write is due
        db.session.expire_all()
        assert db.session.get(AnnotationSession, session.id).page_loaded_at is not None


def test_a_session_never_loaded_gives_its_place_back(make_app):
    with one_document(make_app, **QUOTA_ONE) as (client, document_id):
        script = session_of(start(client, "script"))  # follows no redirect
        assert_no_tasks(start(client, "early"))  # a browser needs a moment to load the page
        idle_for(script, 2)
        worker = session_of(start(client, "worker"))
        assert worker.document_id == document_id
        db.session.expire_all()
        assert db.session.get(AnnotationSession, script.id).status == "active"  # not abandoned
        assert holding() == Counter({document_id: 1})


def test_an_idle_session_gives_its_place_back_after_claim_minutes(make_app):
    with one_document(make_app, claim_minutes=10, **QUOTA_ONE) as (client, document_id):
        idle = opened(client, "idle")
        idle_for(idle, 9)
        assert_no_tasks(start(client, "eager"))  # 9 minutes: still holds the place
        idle_for(idle, 11)
        assert session_of(start(client, "eager")).document_id == document_id
        assert holding() == Counter({document_id: 1})


def test_claim_minutes_comes_from_the_taxonomy(make_app):
    with one_document(make_app, claim_minutes=30, **QUOTA_ONE) as (client, _):
        idle = opened(client, "idle")
        idle_for(idle, 20)
        assert_no_tasks(start(client, "eager"))
        idle_for(idle, 31)
        assert session_of(start(client, "eager")).annotator.external_id == "eager"


def test_a_released_worker_comes_back_to_their_work_over_quota(make_app):
    with one_document(make_app, **QUOTA_ONE) as (client, document_id):
        slow = opened(client, "slow")
        annotation_id = str(uuid.uuid4())
        assert save(client, slow, annotation_id).status_code == 201
        idle_for(slow, 15)
        fast = session_of(start(client, "fast"))  # the released place goes to someone else
        assert fast.document_id == document_id

        back = session_of(start(client, "slow"))  # the slow worker follows the link again
        assert back.id == slow.id
        state = client.get(f"/api/sessions/{slow.token}").get_json()
        assert [a["id"] for a in state["annotations"]] == [annotation_id]
        assert holding() == Counter({document_id: 2})  # over the quota of 1: both keep working
        assert_no_tasks(start(client, "third"))


def test_the_page_coming_back_takes_the_place_back(make_app):
    with one_document(make_app, **QUOTA_ONE) as (client, document_id):
        away = opened(client, "away")
        idle_for(away, 30)  # a hidden tab sends no heartbeat
        session_of(start(client, "other"))
        assert holding() == Counter({document_id: 1})
        assert heartbeat(client, away.token, json={}).status_code == 204  # visible again
        assert holding() == Counter({document_id: 2})


def test_the_heartbeat_keeps_the_place(make_app):
    with one_document(make_app, **QUOTA_ONE) as (client, document_id):
        reader = opened(client, "reader")
        assert move(client, reader, 1).status_code == 200  # real work: the next paragraph
        idle_for(reader, 30, "started_at")  # opened 30 minutes ago
        idle_for(reader, 9.5)  # reading a long paragraph: no save for a while...
        assert holding(later=1) == Counter()  # ...which would release the place soon
        response = heartbeat(client, reader.token, json={"active_seconds": 58.5})
        assert response.status_code == 204  # ...but the page is open and sends heartbeats
        assert holding(later=9) == Counter({document_id: 1})
        assert_no_tasks(start(client, "eager"))


# --- no place hoarded before real work -----------------------------------------------------


def test_a_heartbeat_alone_holds_a_place_for_five_minutes_only(make_app):
    with one_document(make_app, **QUOTA_ONE) as (client, document_id):
        hoarder = opened(client, "hoarder")
        idle_for(hoarder, 4, "started_at")
        assert heartbeat(client, hoarder.token, json={}).status_code == 204
        assert_no_tasks(start(client, "early"))  # 4 minutes: it still holds the place
        idle_for(hoarder, 6, "started_at")
        idle_for(hoarder, 1.5)
        assert heartbeat(client, hoarder.token, json={}).status_code == 204  # kept alive...
        assert holding() == Counter()  # ...but past 5 minutes without work: released
        worker = session_of(start(client, "worker"))
        assert worker.document_id == document_id
        # Real work brings the hoarder back (its work is never lost), over the quota.
        assert move(client, hoarder, 1).status_code == 200
        assert holding() == Counter({document_id: 2})


@pytest.mark.parametrize("work", ["save", "move"])
def test_a_save_or_a_move_is_real_work_in_its_one_statement(make_app, work):
    with one_document(make_app, **QUOTA_ONE) as (client, document_id):
        worker = opened(client, "worker")
        idle_for(worker, 60, "started_at")
        idle_for(worker, 0.5)  # activity is not due: only the work is written
        assert holding() == Counter()
        if work == "save":
            assert save(client, worker).status_code == 201
        else:
            assert move(client, worker, 1).status_code == 200
        db.session.expire_all()
        assert db.session.get(AnnotationSession, worker.id).worked_at is not None
        assert holding() == Counter({document_id: 1})
        assert_no_tasks(start(client, "other"))


# --- the heartbeat API ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [None, {}, {"active_seconds": 0}, {"active_seconds": 61}, {"active_seconds": 12.5}],
)
def test_heartbeat_answers_204(make_app, body):
    with one_document(make_app) as (client, _):
        token = session_of(start(client, "w")).token
        kwargs = {} if body is None else {"json": body}
        response = heartbeat(client, token, **kwargs)
        assert response.status_code == 204
        assert response.data == b""
        assert response.headers["Cache-Control"] == "no-store"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"active_seconds": -1}, "active_seconds"),
        ({"active_seconds": "5"}, "active_seconds"),
        ({"active_seconds": True}, "active_seconds"),
        ({"active_seconds": 10**9}, "active_seconds"),
        ({"status": "submitted"}, "status"),
    ],
)
def test_a_bad_heartbeat_is_a_422_and_records_nothing(make_app, body, field):
    with one_document(make_app) as (client, _):
        session = session_of(start(client, "w"))
        idle_for(session, 30)
        response = heartbeat(client, session.token, json=body)
        assert response.status_code == 422
        assert response.get_json()["error"]["details"]["field"] == field
        db.session.expire_all()
        assert db.session.get(AnnotationSession, session.id).page_loaded_at is None


def test_heartbeat_needs_the_csrf_token_and_a_session(make_app):
    with one_document(make_app) as (client, _):
        token = session_of(start(client, "w")).token
        refused = client.post(f"/api/sessions/{token}/heartbeat", json={})
        assert refused.status_code == 403
        assert refused.get_json()["error"]["code"] == "csrf_failed"
        wrong = client.post(f"/api/sessions/{token}/heartbeat", json={}, headers=headers("x"))
        assert wrong.status_code == 403
        missing = heartbeat(client, "no-such-token", json={})
        assert missing.status_code == 404
        assert missing.get_json()["error"]["code"] == "not_found"
        as_text = heartbeat(client, token, data="{}", content_type="text/plain")
        assert as_text.status_code == 415


def test_heartbeat_of_a_submitted_session_is_204(make_app):
    with one_document(make_app) as (client, _):
        session = session_of(start(client, "w"))
        session.status = "submitted"
        db.session.commit()
        assert heartbeat(client, session.token, json={}).status_code == 204
        db.session.expire_all()
        assert db.session.get(AnnotationSession, session.id).status == "submitted"


# --- one rule, two forms -------------------------------------------------------------------


def test_the_sql_rule_matches_the_python_rule(make_app):
    app = make_app()
    with app.app_context():
        [document_id] = add_documents(1)
        now = utcnow()
        rule = ClaimRule.at(now, 10)
        cases = []
        for status in ("active", "submitted", "abandoned"):
            for loaded in (None, now - timedelta(hours=1)):
                for minutes in (0, 0.5, 0.99, 1.01, 5, 9.9, 10.1, 60, 600):
                    for started_minutes, worked in ((4.9, None), (5.1, None), (60, now)):
                        started = now - timedelta(minutes=started_minutes)
                        seen = now - timedelta(minutes=minutes)
                        cases.append((status, loaded, seen, started, worked))
        for index, (status, loaded, seen, started, worked) in enumerate(cases):
            annotator = Annotator(platform="direct", external_id=f"w{index}")
            db.session.add(annotator)
            db.session.flush()
            db.session.add(
                AnnotationSession(
                    document_id=document_id,
                    annotator_id=annotator.id,
                    status=status,
                    taxonomy_version="test",
                    platform="direct",
                    page_loaded_at=loaded,
                    last_seen_at=seen,
                    started_at=started,
                    worked_at=worked,
                )
            )
        db.session.commit()
        rows = db.session.execute(
            db.select(
                AnnotationSession.status,
                AnnotationSession.page_loaded_at,
                AnnotationSession.last_seen_at,
                AnnotationSession.started_at,
                AnnotationSession.worked_at,
                holds_place(AnnotationSession),
            ),
            rule.params(),
        ).all()
        assert len(rows) == len(cases)
        for *columns, in_sql in rows:
            assert bool(in_sql) == rule.occupies(*columns), columns
        # submitted: all 54; active, opened within 5 minutes or worked (2 of 3): 3 never
        # loaded (< 1 min), 6 loaded (<= 10 min)
        assert sum(bool(row[-1]) for row in rows) == 54 + 2 * (3 + 6)


# --- PostgreSQL: serialised per document ---------------------------------------------------


def arrive_together(app, workers: list[str]) -> list[tuple[int, str]]:
    """GET /start for every worker at the same moment, one thread each."""
    barrier = threading.Barrier(len(workers))
    results: list[tuple[int, str]] = []
    errors: list[BaseException] = []

    def arrive(worker: str) -> None:
        client = app.test_client()
        try:
            barrier.wait(timeout=30)
            response = client.get("/start", query_string={"annotator": worker})
            results.append((response.status_code, response.headers.get("Location", "")))
        except BaseException as exc:  # reported below, in the main thread
            errors.append(exc)

    threads = [threading.Thread(target=arrive, args=(worker,)) for worker in workers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, errors
    return results


def test_many_simultaneous_arrivals_never_overfill_on_postgresql(make_postgres_app):
    # Fewer connections than threads (two engines of at most 16): the shared server's
    # max_connections is 100, and arrivals also queue for connections in production.
    app = make_postgres_app(
        {"SQLALCHEMY_ENGINE_OPTIONS": {"pool_size": 8, "max_overflow": 8, "pool_timeout": 60}},
        annotators_per_document=3,
        attention_check_share=0.0,
    )
    with app.app_context():
        ids = add_documents(8)  # 24 places
        client = app.test_client()
        for index in range(5):  # some places taken already, unevenly
            session_of(start(client, f"early-{index}"))
    results = arrive_together(app, [f"w{index}" for index in range(48)])
    assert Counter(status for status, _ in results) == Counter({302: 19, 200: 29})
    with app.app_context():
        assert holding() == Counter({document_id: 3 for document_id in ids})
        sessions = db.session.scalars(db.select(AnnotationSession)).all()
        assert len(sessions) == 24
        assert len({s.token for s in sessions}) == 24


def test_one_worker_arriving_many_times_at_once_gets_one_session(make_app):
    app = make_app(annotators_per_document=3, attention_check_share=0.0)
    with app.app_context():
        add_documents(4)
    results = arrive_together(app, ["double-click"] * 8)
    assert {status for status, _ in results} == {302}
    assert len({location for _, location in results}) == 1
    with app.app_context():
        assert db.session.scalar(db.select(db.func.count(AnnotationSession.id))) == 1


def test_a_document_being_decided_on_is_skipped_not_waited_for(make_postgres_app, postgres_url):
    app = make_postgres_app(**QUOTA_ONE)
    with app.app_context():
        first, second = add_documents(2)
    other = create_engine(postgres_url)
    try:
        with other.connect() as connection, connection.begin():
            connection.execute(
                text("SELECT id FROM documents WHERE id = :id FOR NO KEY UPDATE"), {"id": first}
            )
            started = time.monotonic()
            with app.app_context():
                session = session_of(start(app.test_client(), "w"))
                assert session.document_id == second
            assert time.monotonic() - started < 10
    finally:
        other.dispose()


def test_arrivals_wait_when_every_document_with_room_is_being_decided_on(
    make_postgres_app, postgres_url
):
    app = make_postgres_app(**QUOTA_ONE)
    with app.app_context():
        [only] = add_documents(1)
    other = create_engine(postgres_url)
    results: list = []
    try:
        with other.connect() as connection:
            transaction = connection.begin()
            connection.execute(
                text("SELECT id FROM documents WHERE id = :id FOR NO KEY UPDATE"), {"id": only}
            )
            arrival = threading.Thread(
                target=lambda: results.append(start(app.test_client(), "w").status_code)
            )
            arrival.start()
            arrival.join(timeout=1)
            assert arrival.is_alive()  # waiting for the lock, not "No tasks left"
            transaction.commit()
            arrival.join(timeout=30)
    finally:
        other.dispose()
    assert results == [302]
    with app.app_context():
        assert holding() == Counter({only: 1})
        assert db.session.scalar(db.select(db.func.count(Document.id))) == 1
