"""Suggestion arms (issue 18): each worker in one arm, arms balanced over arrivals."""

from __future__ import annotations

from collections import Counter

from app.core.extensions import db
from app.models import AnnotationSession
from tests.support.assignment import add_documents, session_of
from tests.support.assignment import start as start_link
from tests.support.worker_api import token_from


def _arms() -> Counter:
    db.session.expire_all()
    return Counter(db.session.scalars(db.select(AnnotationSession.arm)))


def test_twenty_arrivals_split_evenly_and_a_worker_keeps_their_arm(make_app):
    app = make_app(annotators_per_document=20, suggestion_arms="{show: 0.5, none: 0.5}")
    client = app.test_client()
    with app.app_context():
        add_documents(2)
        arms_of = {}
        for number in range(20):
            session = session_of(start_link(client, f"w{number}"))
            assert session.arm is None  # chosen when the page is first loaded
            assert client.get(f"/s/{session.token}").status_code == 200
            db.session.expire_all()
            arms_of[f"w{number}"] = db.session.get(AnnotationSession, session.id).arm
            counts = Counter(arms_of.values())
            # After every arrival, within one worker of 50/50.
            assert abs(counts["show"] - counts["none"]) <= 1
        assert _arms() == Counter({"show": 10, "none": 10})
        # w0 submits nothing but opens the other document: the same arm again.
        other = client.get("/annotate/doc-001", query_string={"annotator": "w0"})
        token = token_from(other)
        page = client.get(f"/s/{token}")
        assert page.status_code == 200
        db.session.expire_all()
        second = db.session.scalars(db.select(AnnotationSession).filter_by(token=token)).one()
        assert second.arm == arms_of["w0"]


def test_uneven_weights_and_no_arms_without_suggestions(make_app):
    app = make_app(annotators_per_document=20, suggestion_arms="{show: 3, none: 1}")
    client = app.test_client()
    with app.app_context():
        add_documents(1)
        for number in range(8):
            session = session_of(start_link(client, f"w{number}"))
            client.get(f"/s/{session.token}")
        assert _arms() == Counter({"show": 6, "none": 2})

    plain = make_app(annotators_per_document=20)
    client = plain.test_client()
    with plain.app_context():
        session = session_of(start_link(client, "x"))
        client.get(f"/s/{session.token}")
        db.session.expire_all()
        assert db.session.get(AnnotationSession, session.id).arm is None
