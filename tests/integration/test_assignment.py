"""GET /start: fair, quota-bound, never the same document twice, abandoned places freed,
attention checks at their share, and no overfilling when workers arrive at once."""

from __future__ import annotations

import threading
from collections import Counter

from app.core.extensions import db
from app.crowd.assignment.service import DocumentOption, choose_document
from app.models import AnnotationSession, Annotator
from tests.support.assignment import (
    add_documents,
    assert_no_tasks,
    idle_for,
    occupied,
    session_of,
    start,
)
from tests.support.rows import add_span

# --- the pure rule --------------------------------------------------------------------------


def test_choose_document_rule():
    docs = [DocumentOption(1, 2, False), DocumentOption(2, 1, False), DocumentOption(3, 1, False)]
    assert choose_document(docs, 3, 0.0, 0, 4) == 2  # fewest occupied, then lowest id
    assert choose_document([DocumentOption(1, 3, False)], 3, 0.0, 0, 3) is None  # full
    with_check = [*docs, DocumentOption(9, 5, True)]
    assert choose_document(with_check, 3, 0.1, 0, 9) == 9  # 0 < 0.1 * 10
    assert choose_document(with_check, 3, 0.1, 1, 9) == 2  # 1 >= 0.1 * 10
    assert choose_document([DocumentOption(9, 0, True)], 3, 0.5, 0, 0) is None  # checks alone


# --- fairness and quota --------------------------------------------------------------------


def test_documents_fill_evenly_up_to_the_quota(make_app):
    app = make_app(annotators_per_document=3, attention_check_share=0.0)
    with app.app_context():
        ids = add_documents(3)
        client = app.test_client()
        for index in range(9):
            session = session_of(start(client, f"w{index}"))
            # every document reaches n before any gets n + 1, ties go to the lower id
            assert session.document_id == ids[index % 3]
            counts = occupied()
            assert max(counts.values()) - min(counts.get(i, 0) for i in ids) <= 1
        assert occupied() == Counter({ids[0]: 3, ids[1]: 3, ids[2]: 3})
        assert_no_tasks(start(client, "w9"))
        assert occupied() == Counter({ids[0]: 3, ids[1]: 3, ids[2]: 3})


def test_a_worker_resumes_and_never_gets_a_document_twice(make_app):
    app = make_app(annotators_per_document=3, attention_check_share=0.0)
    with app.app_context():
        ids = add_documents(2)
        client = app.test_client()
        first = session_of(start(client, "alice"))
        again = session_of(start(client, "alice"))
        assert again.id == first.id  # an active session is resumed

        first.status = "submitted"
        db.session.commit()
        second = session_of(start(client, "alice"))
        assert second.document_id == ids[1] != first.document_id

        second.status = "submitted"
        db.session.commit()
        assert_no_tasks(start(client, "alice"))  # both done: nothing else for alice
        assert session_of(start(client, "bob")).document_id == ids[0]


def test_platform_identities_get_assignments(make_app):
    app = make_app(annotators_per_document=2, attention_check_share=0.0)
    with app.app_context():
        ids = add_documents(1)
        client = app.test_client()
        prolific = session_of(
            client.get(
                "/start",
                query_string={"PROLIFIC_PID": "p1", "STUDY_ID": "s1", "SESSION_ID": "x1"},
            )
        )
        assert prolific.document_id == ids[0]
        assert prolific.platform == "prolific"
        assert prolific.platform_params == {"study_id": "s1", "session_id": "x1"}
        mturk = session_of(
            client.get(
                "/start", query_string={"workerId": "W1", "assignmentId": "A1", "hitId": "H1"}
            )
        )
        assert mturk.platform == "mturk"
        assert mturk.document_id == ids[0]


def test_anonymous_worker_is_remembered_by_cookie(make_app):
    app = make_app(annotators_per_document=3, attention_check_share=0.0)
    with app.app_context():
        add_documents(2)
        client = app.test_client()
        response = client.get("/start")
        assert "falte_anon=" in response.headers["Set-Cookie"]
        assert response.headers["Cache-Control"] == "no-store"
        first = session_of(response)
        assert session_of(client.get("/start")).id == first.id
        assert db.session.scalar(db.select(db.func.count(Annotator.id))) == 1


def test_mturk_preview_takes_no_place(make_app):
    app = make_app(annotators_per_document=1, attention_check_share=0.0)
    with app.app_context():
        add_documents(1)
        client = app.test_client()
        response = client.get(
            "/start", query_string={"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE", "hitId": "H"}
        )
        assert response.status_code == 200
        html = response.get_data(as_text=True)
        assert "Task preview" in html
        assert "New person not introduced" in html
        assert db.session.scalar(db.select(db.func.count(AnnotationSession.id))) == 0


def test_bad_identity_parameter_is_a_400(make_app):
    app = make_app()
    with app.app_context():
        add_documents(1)
        response = app.test_client().get("/start", query_string={"annotator": "x" * 201})
        assert response.status_code == 400


def test_no_documents_at_all_means_no_tasks(make_app):
    app = make_app()
    with app.app_context():
        assert_no_tasks(start(app.test_client(), "w"))


# --- abandonment ---------------------------------------------------------------------------


def test_abandoned_sessions_free_their_place_and_keep_annotations(make_app):
    # A claim longer than the abandonment: this is about abandonment (see test_claims.py).
    app = make_app(
        annotators_per_document=1,
        attention_check_share=0.0,
        abandon_after_minutes=30,
        claim_minutes=60,
    )
    with app.app_context():
        ids = add_documents(1)
        client = app.test_client()
        idle = session_of(start(client, "idle"))
        assert client.get(f"/s/{idle.token}").status_code == 200  # the page was loaded
        add_span(idle.id, 0, 0, "Anna", "new-person")
        idle_for(idle, 20)
        assert_no_tasks(start(client, "eager"))  # 20 minutes idle: still holds the place

        idle_for(idle, 31)
        taken = session_of(start(client, "eager"))
        assert taken.document_id == ids[0]
        db.session.expire_all()
        idle = db.session.get(AnnotationSession, idle.id)
        assert idle.status == "abandoned"
        assert len(idle.annotations) == 1  # nothing the worker did is lost
        assert occupied() == Counter({ids[0]: 1})

        # The idle worker comes back: the document is full again, so no task for them.
        assert_no_tasks(start(client, "idle"))


def test_returning_worker_resumes_an_abandoned_session_when_there_is_room(make_app):
    app = make_app(annotators_per_document=1, attention_check_share=0.0, abandon_after_minutes=30)
    with app.app_context():
        add_documents(1)
        client = app.test_client()
        idle = session_of(start(client, "idle"))
        idle_for(idle, 120)
        other = session_of(start(client, "other"))  # marks idle abandoned, takes the place
        db.session.expire_all()
        assert db.session.get(AnnotationSession, idle.id).status == "abandoned"

        idle_for(other, 60)  # now the other one goes quiet
        back = session_of(start(client, "idle"))
        assert back.id == idle.id  # the same session, with whatever was saved in it
        assert back.status == "active"
        db.session.expire_all()
        assert db.session.get(AnnotationSession, other.id).status == "abandoned"


def test_abandon_minutes_config_overrides_the_taxonomy(make_app):
    app = make_app(
        {"ABANDON_AFTER_MINUTES": 5},
        annotators_per_document=1,
        attention_check_share=0.0,
        abandon_after_minutes=600,
    )
    with app.app_context():
        add_documents(1)
        client = app.test_client()
        idle = session_of(start(client, "idle"))
        idle_for(idle, 6)
        assert session_of(start(client, "eager")).annotator.external_id == "eager"


# --- attention checks ----------------------------------------------------------------------


def test_attention_checks_are_handed_out_at_the_share(make_app):
    app = make_app(annotators_per_document=3, attention_check_share=0.1)
    with app.app_context():
        ids = add_documents(10, checks=1)
        check_id = ids[-1]
        client = app.test_client()
        got = [session_of(start(client, f"w{index}")) for index in range(20)]
        checks = [index for index, session in enumerate(got) if session.document_id == check_id]
        # checks < 0.1 * (occupied + 1): the 1st and the 11th arrival get the check.
        assert checks == [0, 10]
        assert all(
            session.is_attention_check == (index in checks) for index, session in enumerate(got)
        )
        regular = Counter(s.document_id for s in got if s.document_id != check_id)
        assert max(regular.values()) - min(regular.values()) <= 1


def test_no_checks_when_the_share_is_zero(make_app):
    app = make_app(annotators_per_document=3, attention_check_share=0.0)
    with app.app_context():
        ids = add_documents(2, checks=1)
        client = app.test_client()
        got = {session_of(start(client, f"w{index}")).document_id for index in range(6)}
        assert got == set(ids[:2])
        assert_no_tasks(start(client, "late"))  # only the check is left: no task


# --- concurrency ---------------------------------------------------------------------------


def test_simultaneous_arrivals_never_overfill(make_app):
    app = make_app(annotators_per_document=2, attention_check_share=0.0)
    workers = 14
    with app.app_context():
        ids = add_documents(3)  # 6 places for 14 workers
    barrier = threading.Barrier(workers)
    results: list[tuple[int, str]] = []
    errors: list[BaseException] = []

    def arrive(index: int) -> None:
        client = app.test_client()
        try:
            barrier.wait(timeout=30)
            response = client.get("/start", query_string={"annotator": f"w{index}"})
            results.append((response.status_code, response.headers.get("Location", "")))
        except BaseException as exc:  # reported below, in the main thread
            errors.append(exc)

    threads = [threading.Thread(target=arrive, args=(i,)) for i in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, errors
    statuses = Counter(status for status, _ in results)
    assert statuses == Counter({302: 6, 200: workers - 6})
    with app.app_context():
        assert occupied() == Counter({ids[0]: 2, ids[1]: 2, ids[2]: 2})
