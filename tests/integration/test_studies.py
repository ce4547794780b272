"""Two studies on one server (issue 30): workers enter one at /study/<slug>/start (the
default study at /start), a signed link for one study opens nothing in another, a closed
or archived study opens nothing, and neither study sees the other's documents, sessions,
figures or exports."""

from __future__ import annotations

import json

import pytest

from app.core.extensions import db
from app.crowd.paragraph_times import iter_paragraph_records
from app.crowd.prolific_api import api_enabled, api_token
from app.crowd.settings import study_settings
from app.exports.annotations import iter_annotation_records
from app.exports.record import ExportFilter
from app.exports.session_rows import iter_session_records
from app.imports.document_formats import DocumentInput
from app.imports.document_store import import_documents
from app.models import AnnotationSession, Document
from app.research.dashboard import load_study
from app.studies import StudyError, create_study, default_study, set_status, use_study
from tests.support.signed_links import sign
from tests.support.worker_api import read_to_the_end, save, submit

KEY = "test-secret-key"  # tests/support/apps.py make_test_config's SECRET_KEY
PARAGRAPHS = ("Anna met Bob in Paris.", "They left for Rome.")


@pytest.fixture
def two_studies(app):
    """The default study with `doc-1`, and an open study `pilot` with its own `doc-1`
    (another text: external ids are unique per study) and `pilot-only`."""
    use_study(default_study())
    import_documents([DocumentInput("doc-1", "Default", PARAGRAPHS)])
    pilot = create_study("pilot", "Pilot", status="open")
    use_study(pilot)
    import_documents(
        [
            DocumentInput("doc-1", "Pilot one", ("Pilot text one.", "And more.")),
            DocumentInput("pilot-only", "Pilot two", ("Pilot text two.", "And more.")),
        ]
    )
    use_study(default_study())
    db.session.commit()
    return pilot


def _document_of(token: str) -> tuple[str, str]:
    """(study slug, document external id) of the session with this token."""
    db.session.expire_all()
    session = db.session.scalars(db.select(AnnotationSession).filter_by(token=token)).one()
    document = db.session.get(Document, session.document_id)
    slug = db.session.scalar(
        db.text("SELECT slug FROM studies WHERE id = :id"), {"id": session.study_id}
    )
    assert document.study_id == session.study_id
    return slug, document.external_id


def _enter(client, path: str, **params: str) -> str:
    db.session.commit()
    response = client.get(path, query_string=params)
    assert response.status_code == 302, response.data
    return response.headers["Location"].removeprefix("/s/")


def _annotate_and_submit(client, token: str, quote: str) -> None:
    client.get(f"/s/{token}")
    answer = save(
        client,
        token,
        {
            "id": "00000000-0000-4000-8000-000000000001",
            "category": "ungrammatical",
            "span": {"paragraph_id": 0, "start": 0, "end": len(quote), "text": quote},
            "paired_span": None,
            "comment": None,
        },
    )
    assert answer.status_code == 201, answer.data
    read_to_the_end(client, token, 2)
    assert submit(client, token).status_code == 200


def test_each_start_link_hands_out_its_own_studys_documents(app, client, two_studies):
    seen = {_document_of(_enter(client, "/study/pilot/start", annotator=f"w{n}")) for n in (1, 2)}
    assert seen == {("pilot", "doc-1"), ("pilot", "pilot-only")}
    # /start serves the default study: its one document, never the pilot's.
    assert _document_of(_enter(client, "/start", annotator="w9")) == ("default", "doc-1")
    assert _document_of(_enter(client, "/study/default/start", annotator="w8")) == (
        "default",
        "doc-1",
    )
    # A document link opens the document of its own study.
    assert _document_of(_enter(client, "/study/pilot/annotate/doc-1", annotator="w7")) == (
        "pilot",
        "doc-1",
    )
    assert _document_of(_enter(client, "/annotate/doc-1", annotator="w7")) == ("default", "doc-1")
    missing = client.get("/annotate/pilot-only", query_string={"annotator": "w7"})
    assert missing.status_code == 404


def test_a_signed_link_for_one_study_opens_nothing_in_another(app, two_studies):
    app.config["UNSIGNED_ANNOTATOR_LINKS"] = False
    client = app.test_client()
    # Default study: TARGET as before studies were rows; another study: "<slug>/TARGET".
    default_sig = sign(KEY, "start", "ann")
    pilot_sig = sign(KEY, "pilot/start", "ann")
    assert client.get("/study/pilot/start?annotator=ann&sig=" + default_sig).status_code == 403
    assert client.get("/start?annotator=ann&sig=" + pilot_sig).status_code == 403
    doc_sig = sign(KEY, "pilot/doc-1", "ann")
    assert client.get(f"/annotate/doc-1?annotator=ann&sig={doc_sig}").status_code == 403
    assert _document_of(
        _enter(client, "/study/pilot/annotate/doc-1", annotator="ann", sig=doc_sig)
    ) == ("pilot", "doc-1")
    assert (
        _document_of(
            _enter(
                client, "/study/pilot/start", annotator="bea", sig=sign(KEY, "pilot/start", "bea")
            )
        )[0]
        == "pilot"
    )
    assert _document_of(
        _enter(client, "/start", annotator="bea", sig=sign(KEY, "start", "bea"))
    ) == (
        "default",
        "doc-1",
    )


def test_closed_archived_draft_and_unknown_studies_open_nothing(app, client, two_studies):
    for path in ("/study/nope/start", "/study/nope/annotate/doc-1"):
        unknown = client.get(path, query_string={"annotator": "a"})
        assert unknown.status_code == 404, path
        assert "There is no such study" in unknown.get_data(as_text=True), path
    draft = create_study("draft-one", "Draft")
    use_study(draft)
    import_documents([DocumentInput("d", None, PARAGRAPHS)])
    db.session.commit()
    # A draft takes no workers, only the researchers' signed links.
    page = client.get("/study/draft-one/start", query_string={"PROLIFIC_PID": "p1"})
    assert page.status_code == 410
    assert "This study is not open yet" in page.get_data(as_text=True)
    signed = sign(KEY, "draft-one/start", "res")
    assert _document_of(_enter(client, "/study/draft-one/start", annotator="res", sig=signed)) == (
        "draft-one",
        "d",
    )
    # A worker who began in the pilot may finish after it closed; nobody new gets in.
    token = _enter(client, "/study/pilot/start", annotator="early")
    set_status(two_studies, "closed")
    for path in ("/study/pilot/start", "/study/pilot/annotate/doc-1"):
        closed = client.get(path, query_string={"annotator": "late"})
        assert closed.status_code == 410, path
        text = closed.get_data(as_text=True)
        assert "This study is closed" in text
        assert "Return submission" in text
    _annotate_and_submit(client, token, "Pilot")
    set_status(two_studies, "archived")
    archived = client.get("/study/pilot/start", query_string={"annotator": "late"})
    assert archived.status_code == 410
    with pytest.raises(StudyError, match="cannot become open"):
        set_status(two_studies, "open")
    # Its data stays.
    use_study(two_studies)
    assert [r["annotator_id"] for r in iter_annotation_records(ExportFilter())] == ["direct:early"]


def test_two_studies_do_not_see_each_others_sessions_figures_or_exports(
    app, client, two_studies, researcher_client
):
    default_token = _enter(client, "/start", annotator="alice")
    pilot_token = _enter(client, "/study/pilot/start", annotator="bob")
    _annotate_and_submit(client, default_token, "Anna")
    _annotate_and_submit(client, pilot_token, _document_text(pilot_token)[:5])

    use_study(default_study())
    records = list(iter_annotation_records(ExportFilter()))
    assert [(r["annotator_id"], r["document_id"]) for r in records] == [("direct:alice", "doc-1")]
    assert [s["annotator_id"] for s in iter_session_records()] == ["direct:alice"]
    alice = _session_id(default_token)
    assert {p["session_id"] for p in iter_paragraph_records()} == {alice}
    figures = load_study(study_settings())
    assert [d.external_id for d in figures.documents] == ["doc-1"]
    assert [s.annotator for s in figures.sessions] == ["direct:alice"]

    use_study(two_studies)
    records = list(iter_annotation_records(ExportFilter()))
    assert [r["annotator_id"] for r in records] == ["direct:bob"]
    assert [s["annotator_id"] for s in iter_session_records()] == ["direct:bob"]
    assert {p["session_id"] for p in iter_paragraph_records()} == {_session_id(pilot_token)}
    figures = load_study(study_settings())
    assert sorted(d.external_id for d in figures.documents) == ["doc-1", "pilot-only"]
    assert [s.annotator for s in figures.sessions] == ["direct:bob"]

    # The console (the default study's today) shows none of the pilot's work. (A fresh
    # app context: the test's own one remembers the worker's requests' anonymous user.)
    with app.app_context():
        dashboard = researcher_client.get("/research/").get_data(as_text=True)
        export = researcher_client.get("/research/export/annotations.jsonl")
    assert "direct:alice" in dashboard
    assert "pilot-only" not in dashboard and "direct:bob" not in dashboard
    lines = [json.loads(line) for line in export.get_data(as_text=True).splitlines() if line]
    assert [line["annotator_id"] for line in lines] == ["direct:alice"]


def test_a_worker_failing_in_one_study_starts_afresh_in_another(app, client, two_studies):
    token = _enter(client, "/start", annotator="carl")
    db.session.execute(
        db.update(AnnotationSession)
        .where(AnnotationSession.token == token)
        .values(outcome="failed_training", status="abandoned")
    )
    db.session.commit()
    pilot_token = _enter(client, "/study/pilot/start", annotator="carl")
    db.session.expire_all()
    session = db.session.scalars(db.select(AnnotationSession).filter_by(token=pilot_token)).one()
    assert session.outcome is None and session.status == "active"


def _session_id(token: str) -> str:
    db.session.expire_all()
    return str(db.session.scalar(db.select(AnnotationSession.id).filter_by(token=token)))


def _document_text(token: str) -> str:
    db.session.expire_all()
    session = db.session.scalars(db.select(AnnotationSession).filter_by(token=token)).one()
    document = db.session.get(Document, session.document_id)
    return document.paragraphs[0].text


def test_a_studys_own_prolific_token_wins_over_the_setting(app, two_studies):
    app.config["PROLIFIC_API_TOKEN"] = None
    two_studies.prolific_api_token = "pilot-token"
    db.session.commit()
    use_study(default_study())
    assert not api_enabled()
    use_study(two_studies)
    assert api_enabled() and api_token() == "pilot-token"
    app.config["PROLIFIC_API_TOKEN"] = "server-token"
    use_study(default_study())
    assert api_token() == "server-token"


def test_the_development_home_page_links_each_document_in_its_study(app, client, two_studies):
    app.config["APP_ENV"] = "development"  # the document list is shown in development only
    page = client.get("/").get_data(as_text=True)
    assert 'href="/annotate/doc-1"' in page
    assert 'href="/study/pilot/annotate/doc-1"' in page
    assert 'href="/study/pilot/annotate/pilot-only"' in page
    assert 'href="/annotate/pilot-only"' not in page
