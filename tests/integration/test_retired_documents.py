"""Retired documents (issue 30 point 3): no new sessions, but a worker's session on one
goes on, and the document stays in the exports."""

from __future__ import annotations

from app.core.extensions import db
from app.exports.session_rows import iter_session_records
from app.models import Document, utcnow
from tests.support.assignment import add_documents, assert_no_tasks, session_of, start


def retire(document_id: int) -> None:
    db.session.get(Document, document_id).retired_at = utcnow()
    db.session.commit()


def test_a_retired_document_is_never_assigned(make_app):
    app = make_app(annotators_per_document=3, attention_check_share=0.0)
    with app.app_context():
        first, second = add_documents(2)
        retire(first)
        client = app.test_client()
        for index in range(3):  # the retired document has the lower id and no sessions
            assert session_of(start(client, f"w{index}")).document_id == second
        assert_no_tasks(start(client, "w3"))


def test_a_session_on_a_document_retired_meanwhile_is_resumed(make_app):
    app = make_app(annotators_per_document=3, attention_check_share=0.0)
    with app.app_context():
        (only,) = add_documents(1)
        client = app.test_client()
        first = session_of(start(client, "alice"))
        retire(only)
        assert session_of(start(client, "alice")).id == first.id  # her work goes on
        assert_no_tasks(start(client, "bob"))
        exported = [row["document_id"] for row in iter_session_records()]
        assert exported == [db.session.get(Document, only).external_id]  # still exported


def test_a_retired_attention_check_is_never_assigned(make_app):
    app = make_app(annotators_per_document=3, attention_check_share=0.5)
    with app.app_context():
        ids = add_documents(1, checks=1)
        check = next(i for i in ids if db.session.get(Document, i).gold)
        retire(check)
        client = app.test_client()
        assert session_of(start(client, "w0")).document_id != check
