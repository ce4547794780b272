"""The console's study setup pages (issue 30 points 2 and 3): a taxonomy uploaded, checked
as `flask check-taxonomy` checks it, shown as a difference and saved as a new version; the
documents page's upload imported in the background, all or nothing; retiring and
deleting a document."""

from __future__ import annotations

import base64
import hashlib
import json
import re

import pytest
from flask import g
from sqlalchemy import func, select

from app.core.extensions import db
from app.imports.document_formats import DocumentInput
from app.imports.document_store import import_documents
from app.jobs.queue import compute_and_store
from app.models import Document, DocumentUploadFile, Researcher
from app.research.document_uploads import DOCUMENT_IMPORT
from app.studies import require_study, share, use_study, versions
from tests.support.apps import log_in_directly
from tests.support.assignment import session_of
from tests.support.study_setup import (
    FIXTURES,
    csrf_of,
    hidden_fields,
    owned_study,
    upload_documents,
    upload_taxonomy,
    wait_for_upload,
)
from tests.support.worker_api import save

TAXONOMY = "/research/studies/pilot/taxonomy/upload"
DOCUMENTS = "/research/studies/pilot/documents"


@pytest.fixture
def pilot(app, researcher):
    return owned_study(researcher)


def _fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def _documents(study_id: int) -> list[str]:
    db.session.expire_all()
    query = select(Document.external_id).where(Document.study_id == study_id)
    return sorted(db.session.scalars(query))


# --- the taxonomy ---------------------------------------------------------------------------


def test_a_bad_taxonomy_shows_its_line_escaped(researcher_client, pilot):
    raw = _fixture("broken.yaml").replace(b"Broken", b"<b>Broken</b>")
    response = upload_taxonomy(researcher_client, "pilot", "bad<script>.yaml", raw)
    page = response.get_data(as_text=True)
    assert response.status_code == 422
    assert "bad&lt;script&gt;.yaml:5: categories[0].type: is required" in page, page
    assert "<script>" not in page
    assert len(versions(require_study("pilot"))) == 1  # nothing stored


def test_a_good_taxonomy_shows_its_difference_then_saves_a_new_version(researcher_client, pilot):
    before = pilot.taxonomy_version
    response = upload_taxonomy(
        researcher_client, "pilot", "pilot-v2.yaml", _fixture("pilot-v2.yaml")
    )
    page = response.get_data(as_text=True)
    assert response.status_code == 200, page
    assert "Save as new version" in page
    added = re.search(r"<dt>Categories added</dt><dd>(.*?)</dd>", page)[1]
    changed = re.search(r"<dt>Categories changed</dt><dd>(.*?)</dd>", page)[1]
    assert "repeated" in added and "ungrammatical" in changed
    assert "Section <code>instructions:</code>" in page  # a top-level text changed
    assert "every repetition" in page
    assert require_study("pilot").taxonomy_version == before  # not saved yet

    fields = hidden_fields(page)
    saved = researcher_client.post(TAXONOMY, data=fields)
    assert saved.status_code == 303
    study = require_study("pilot")
    db.session.refresh(study)
    assert study.taxonomy_version != before
    assert [v.source for v in versions(study)] == ["pilot-v1.yaml", "pilot-v2.yaml"]
    listing = researcher_client.get(TAXONOMY).get_data(as_text=True)
    assert study.taxonomy_version[:12] in listing and "new sessions get it" in listing


def test_the_confirmation_must_carry_the_text_that_was_checked(researcher_client, pilot):
    page = upload_taxonomy(
        researcher_client, "pilot", "pilot-v2.yaml", _fixture("pilot-v2.yaml")
    ).get_data(as_text=True)
    fields = hidden_fields(page)
    other = upload_taxonomy(researcher_client, "pilot", "x.yaml", _fixture("pilot-renamed.yaml"))
    fields["content"] = hidden_fields(other.get_data(as_text=True))["content"]
    response = researcher_client.post(TAXONOMY, data=fields)
    assert response.status_code == 400
    assert "not the text that was checked" in response.get_data(as_text=True)
    assert len(versions(require_study("pilot"))) == 1


def test_a_study_managed_by_a_file_refuses_uploads(app, researcher_client, researcher):
    study = require_study("default")
    assert study.taxonomy_file  # TAXONOMY_PATH, taken at start
    share(study, researcher, "editor")
    response = upload_taxonomy(researcher_client, "default", "v2.yaml", _fixture("pilot-v2.yaml"))
    page = response.get_data(as_text=True)
    assert response.status_code == 409
    assert "change that file instead" in page
    assert "Save as new version" not in page


def test_removing_a_key_in_use_mid_study_is_refused_with_the_reason(app, researcher_client, pilot):
    use_study(pilot)
    import_documents([DocumentInput("d1", None, ("Anna met Bob.",))])
    worker = app.test_client()
    from_start = worker.get("/study/pilot/start", query_string={"annotator": "w1"})
    token = from_start.headers["Location"].removeprefix("/s/")
    worker.get(f"/s/{token}")
    answer = save(
        worker,
        token,
        {
            "id": "00000000-0000-4000-8000-000000000001",
            "category": "ungrammatical",
            "span": {"paragraph_id": 0, "start": 0, "end": 4, "text": "Anna"},
            "paired_span": None,
            "comment": None,
        },
    )
    assert answer.status_code in (200, 201), answer.data
    g.pop("_login_user", None)  # the worker's requests shared this app context's `g`
    page = upload_taxonomy(
        researcher_client, "pilot", "renamed.yaml", _fixture("pilot-renamed.yaml")
    ).get_data(as_text=True)
    assert "cannot be saved" in page and "&#39;ungrammatical&#39;" in page
    assert "Save as new version" not in page
    raw = _fixture("pilot-renamed.yaml")
    forced = researcher_client.post(  # as a page checked before the annotation would send
        TAXONOMY,
        data={
            "csrf_token": csrf_of(researcher_client, TAXONOMY),
            "action": "save",
            "name": "renamed.yaml",
            "content": base64.b64encode(raw).decode(),
            "content_hash": hashlib.sha256(raw).hexdigest(),
        },
    )
    assert forced.status_code == 409
    assert "not remove or rename a key in use" in forced.get_data(as_text=True)
    assert len(versions(require_study("pilot"))) == 1


def _account(email: str, role: str | None, study) -> int:
    account = Researcher(email=email, password_hash="x")
    db.session.add(account)
    db.session.commit()
    if role:
        share(study, account, role)
    return account.id


def test_viewers_read_editors_write_strangers_see_nothing(make_app):
    # No app context around the requests: Flask-Login keeps the user it loaded in `g`,
    # which a shared context would carry from one client's request to another's.
    app = make_app()
    with app.app_context():
        study = owned_study(_owner())
        use_study(study)
        import_documents([DocumentInput("d1", None, ("Anna met Bob.",))])
        ids = {role: _account(f"{role}@example.org", role, study) for role in ("viewer", "editor")}
        ids["stranger"] = _account("stranger@example.org", None, study)
        document_id = db.session.scalar(select(Document.id))
        db.session.remove()
    clients = {}
    for role, account_id in ids.items():
        clients[role] = app.test_client()
        with app.app_context():
            log_in_directly(clients[role], db.session.get(Researcher, account_id))
    for url in (TAXONOMY, DOCUMENTS):
        assert clients["viewer"].get(url).status_code == 200
        assert clients["stranger"].get(url).status_code == 404
    assert "Upload and import" not in clients["viewer"].get(DOCUMENTS).get_data(as_text=True)
    assert "Upload and import" in clients["editor"].get(DOCUMENTS).get_data(as_text=True)
    retire = f"{DOCUMENTS}/{document_id}/retire"
    viewer_token = csrf_of(clients["viewer"], DOCUMENTS)
    assert clients["viewer"].post(retire, data={"csrf_token": viewer_token}).status_code == 403
    stranger_token = csrf_of(clients["viewer"], TAXONOMY)
    assert clients["stranger"].post(retire, data={"csrf_token": stranger_token}).status_code in (
        400,  # the viewer's token is not the stranger's: CSRF refuses first
        404,
    )
    assert app.test_client().get(DOCUMENTS).status_code == 302  # to the login page
    with app.app_context():
        assert db.session.get(Document, document_id).retired_at is None
    editor_token = csrf_of(clients["editor"], DOCUMENTS)
    assert clients["editor"].post(retire, data={"csrf_token": editor_token}).status_code == 303


def _owner() -> Researcher:
    owner = Researcher(email="owner@example.org", password_hash="x")
    db.session.add(owner)
    db.session.commit()
    return owner


# --- the documents --------------------------------------------------------------------------

GOOD = b'{"id": "a1", "text": "One.\\n\\nTwo."}\n{"id": "a2", "paragraphs": ["Three."]}\n'
BAD_LINE_3 = b'{"id": "b1", "text": "One."}\n{"id": "b2", "text": "Two."}\n{"id": "b3"}\n'


def test_an_error_in_the_second_file_imports_nothing_and_names_file_and_line(
    researcher_client, pilot
):
    response = upload_documents(
        researcher_client, "pilot", {"good.jsonl": GOOD, "bad.jsonl": BAD_LINE_3}
    )
    assert response.status_code == 303
    upload_id = int(re.search(r"upload=(\d+)", response.headers["Location"])[1])
    states = wait_for_upload(researcher_client, "pilot", upload_id)
    assert states[-1]["status"] == "failed"
    assert any(p.startswith("bad.jsonl:3:") for p in states[-1]["problems"]), states[-1]
    assert _documents(pilot.id) == []  # not even good.jsonl's
    page = researcher_client.get(f"{DOCUMENTS}?upload={upload_id}").get_data(as_text=True)
    assert "Nothing was imported" in page and "bad.jsonl:3:" in page
    left = db.session.scalar(select(func.count()).select_from(DocumentUploadFile))
    assert left == 0  # the bytes are dropped once the import ended


def test_a_good_upload_imports_in_the_background_with_progress_to_done(researcher_client, pilot):
    many = "".join(
        json.dumps({"id": f"m{n:04d}", "paragraphs": [f"Text {n}."]}) + "\n" for n in range(1200)
    ).encode()
    gold = [{"paragraph_id": 0, "start": 0, "end": 4, "category": "unclear"}]
    practice = (
        json.dumps({"id": "check-1", "paragraphs": ["Anna met Bob."], "gold": gold}) + "\n"
    ).encode()
    response = upload_documents(
        researcher_client, "pilot", {"many.jsonl": many, "checks.jsonl": practice}
    )
    assert response.status_code == 303
    upload_id = int(re.search(r"upload=(\d+)", response.headers["Location"])[1])
    states = wait_for_upload(researcher_client, "pilot", upload_id)
    last = states[-1]
    assert last["status"] == "done", last
    assert last["done"] == last["total"] == 1201
    assert "1201 documents: 1201 new" in last["summary"]
    assert len(_documents(pilot.id)) == 1201
    page = researcher_client.get(DOCUMENTS).get_data(as_text=True)
    assert "Imported: 1201 documents" in page
    assert "attention check" in page and "Page 1 of 13" in page
    assert page.count('<th scope="row">') == 100
    # The same files again: unchanged, nothing written twice.
    again = upload_documents(researcher_client, "pilot", {"checks.jsonl": practice})
    upload_id = int(re.search(r"upload=(\d+)", again.headers["Location"])[1])
    assert "1 unchanged" in wait_for_upload(researcher_client, "pilot", upload_id)[-1]["summary"]


def test_a_dry_run_writes_nothing(researcher_client, pilot):
    response = upload_documents(researcher_client, "pilot", {"good.jsonl": GOOD}, dry_run="1")
    upload_id = int(re.search(r"upload=(\d+)", response.headers["Location"])[1])
    last = wait_for_upload(researcher_client, "pilot", upload_id)[-1]
    assert last["status"] == "done" and "nothing written" in last["summary"]
    assert _documents(pilot.id) == []


def test_a_file_over_the_limit_gets_413_with_a_clear_message(make_app):
    app = make_app({"DOCUMENT_UPLOAD_MAX_BYTES": 1000, "DOCUMENT_UPLOAD_MAX_FILES": 2})
    with app.app_context():
        account = Researcher(email="r@example.org", password_hash="x")
        db.session.add(account)
        db.session.commit()
        owned_study(account)
        client = app.test_client()
        log_in_directly(client, account)
        big = b'{"id": "x", "text": "' + b"y" * 1500 + b'"}\n'
        response = upload_documents(client, "pilot", {"big.jsonl": big})
        assert response.status_code == 413
        assert "larger than" in response.get_data(as_text=True)
        huge = upload_documents(client, "pilot", {"a.jsonl": big * 50, "b.jsonl": big})
        assert huge.status_code == 413
        assert "each file may have at most" in huge.get_data(as_text=True)
        assert _documents(require_study("pilot").id) == []


def test_retire_unretire_and_delete(app, researcher_client, pilot):
    use_study(pilot)
    import_documents([DocumentInput(f"d{n}", None, ("Anna met Bob.",)) for n in (1, 2)])
    first, second = db.session.scalars(select(Document.id).order_by(Document.id)).all()
    token = csrf_of(researcher_client, DOCUMENTS)
    assert (
        researcher_client.post(
            f"{DOCUMENTS}/{first}/retire", data={"csrf_token": token}
        ).status_code
        == 303
    )
    db.session.expire_all()
    assert db.session.get(Document, first).retired_at is not None
    worker = app.test_client()
    session = session_of(worker.get("/study/pilot/start", query_string={"annotator": "w1"}))
    assert session.document_id == second  # the retired one is passed over
    assert "retired" in researcher_client.get(DOCUMENTS).get_data(as_text=True)
    refused = researcher_client.post(
        f"{DOCUMENTS}/{second}/delete", data={"csrf_token": token}, follow_redirects=True
    )
    assert "was not deleted: it has 1 session" in refused.get_data(as_text=True)
    assert _documents(pilot.id) == ["d1", "d2"]
    researcher_client.post(f"{DOCUMENTS}/{first}/unretire", data={"csrf_token": token})
    db.session.expire_all()
    assert db.session.get(Document, first).retired_at is None
    deleted = researcher_client.post(
        f"{DOCUMENTS}/{first}/delete", data={"csrf_token": token}, follow_redirects=True
    )
    assert "Deleted d1" in deleted.get_data(as_text=True)
    assert _documents(pilot.id) == ["d2"]


def test_another_servers_worker_imports_an_upload_from_the_database(make_app):
    # Server A takes the upload; its queue does not answer, so nothing runs there. Server
    # B's worker runs the job: the files' bytes reach it through the database only.
    server_a = make_app({"QUEUE_URL": "redis://127.0.0.1:9/0"})
    server_b = make_app()
    with server_a.app_context():
        owner = _owner()
        owned_study(owner)
        owner_id = owner.id
        db.session.remove()
    client = server_a.test_client()
    with server_a.app_context():
        log_in_directly(client, db.session.get(Researcher, owner_id))
    response = upload_documents(client, "pilot", {"good.jsonl": GOOD})
    upload_id = int(re.search(r"upload=(\d+)", response.headers["Location"])[1])
    waiting = client.get(f"{DOCUMENTS}/uploads/{upload_id}.json").get_json()
    assert waiting["status"] == "queued"
    with server_b.app_context():
        payload = {"upload": upload_id}
        outcome = compute_and_store(
            DOCUMENT_IMPORT, DOCUMENT_IMPORT.key(payload), payload, "server-b-worker"
        )
        assert outcome == "done"
    state = client.get(f"{DOCUMENTS}/uploads/{upload_id}.json").get_json()
    assert state["status"] == "done" and state["done"] == state["total"] == 2
    with server_a.app_context():
        assert _documents(require_study("pilot").id) == ["a1", "a2"]


def test_a_taxonomy_over_a_megabyte_gets_413_with_the_limit(researcher_client, pilot):
    raw = b"title: Big\n# " + b"x" * (1024 * 1024) + b"\n"
    # One multipart body in memory (the test client would spool a dict's to a file that
    # nothing closes once the app refuses it unread).
    body = (
        b'--b\r\nContent-Disposition: form-data; name="taxonomy"; filename="big.yaml"\r\n'
        b"Content-Type: text/yaml\r\n\r\n" + raw + b"\r\n--b--\r\n"
    )
    response = researcher_client.post(
        TAXONOMY, data=body, content_type="multipart/form-data; boundary=b"
    )
    assert response.status_code == 413
    assert "a taxonomy may have at most 1024 KB" in response.get_data(as_text=True)
