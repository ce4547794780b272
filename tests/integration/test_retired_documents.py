"""Retired documents (issue 30 point 3): no new sessions from any door (/start, the
document links, the development index), but a worker's session on one goes on, and the
document stays in the exports."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from app.core.extensions import db
from app.exports.session_rows import iter_session_records
from app.imports.document_formats import DocumentInput
from app.imports.document_store import import_documents
from app.models import AnnotationSession, Document, utcnow
from app.studies import use_study
from tests.support.assignment import add_documents, assert_no_tasks, session_of, start
from tests.support.signed_links import sign
from tests.support.study_setup import owned_study

KEY = "test-secret-key"  # tests/support/apps.py make_test_config's SECRET_KEY
JSON = {"Accept": "application/json"}


def retire(document_id: int, retired: bool = True) -> None:
    db.session.get(Document, document_id).retired_at = utcnow() if retired else None
    db.session.commit()


def _sessions(document_id: int) -> int:
    db.session.expire_all()
    query = select(func.count()).where(AnnotationSession.document_id == document_id)
    return db.session.scalar(query)


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


# --- the other doors: document links and the development index (issue 30 point 3) --------


def _signed(path: str, target: str, name: str) -> dict[str, str]:
    """A signed annotator link's query (docs/contracts.md#signed-links)."""
    return {"annotator": name, "sig": sign(KEY, target, name)}


@pytest.fixture
def links_app(app):
    """Production's rule: a document link opens only signed (the researchers' own)."""
    app.config["UNSIGNED_ANNOTATOR_LINKS"] = False
    return app


@pytest.mark.parametrize("door", ["/annotate/{}", "/id={}"])
def test_a_document_link_opens_no_new_session_on_a_retired_document(links_app, door):
    (only,) = add_documents(1)
    external_id = db.session.get(Document, only).external_id
    path = door.format(external_id)
    alice = links_app.test_client()
    first = session_of(alice.get(path, query_string=_signed(path, external_id, "alice")))
    retire(only)
    again = alice.get(path, query_string=_signed(path, external_id, "alice"))
    assert session_of(again).id == first.id  # her session on it resumes
    refused = links_app.test_client().get(path, query_string=_signed(path, external_id, "bob"))
    assert refused.status_code == 410
    assert "This text takes no new tasks" in refused.get_data(as_text=True)
    assert _sessions(only) == 1  # bob got none
    as_json = links_app.test_client().get(
        path, query_string=_signed(path, external_id, "carol"), headers=JSON
    )
    assert as_json.status_code == 410
    assert as_json.get_json()["error"]["code"] == "document_retired"
    retire(only, False)
    reopened = links_app.test_client().get(path, query_string=_signed(path, external_id, "bob"))
    assert session_of(reopened).document_id == only  # un-retired: handed out again


def test_a_studys_document_link_opens_no_new_session_on_a_retired_document(links_app, researcher):
    pilot = owned_study(researcher)
    use_study(pilot)
    import_documents([DocumentInput("p1", None, ("Anna met Bob.",))])
    document = db.session.scalars(select(Document).where(Document.study_id == pilot.id)).one()
    path = "/study/pilot/annotate/p1"
    alice = links_app.test_client()
    first = session_of(alice.get(path, query_string=_signed(path, "pilot/p1", "alice")))
    retire(document.id)
    assert session_of(alice.get(path, query_string=_signed(path, "pilot/p1", "alice"))).id == (
        first.id
    )
    refused = links_app.test_client().get(path, query_string=_signed(path, "pilot/p1", "bob"))
    assert refused.status_code == 410
    assert "This text takes no new tasks" in refused.get_data(as_text=True)
    assert _sessions(document.id) == 1


def test_the_development_index_lists_no_retired_document(make_app):
    app = make_app({"APP_ENV": "development"})
    with app.app_context():
        kept, retired = add_documents(2)
        retire(retired)
        page = app.test_client().get("/").get_data(as_text=True)
        assert db.session.get(Document, kept).external_id in page
        assert db.session.get(Document, retired).external_id not in page
