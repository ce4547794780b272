"""A study's taxonomy, versioned in the database (issue 30): sessions keep the version they
started with, exports say it, a version stored by one server is served by another without
a restart, a version may add categories but not drop a key in use, and the default study
takes TAXONOMY_PATH (a changed file becomes a new version at start; uploads refused)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app import create_app
from app.core.extensions import db
from app.exports.record import ExportFilter, iter_annotation_records
from app.exports.session_rows import iter_session_records
from app.imports.document_formats import DocumentInput
from app.imports.document_store import import_documents
from app.studies import (
    TaxonomyRefused,
    create_study,
    default_study,
    require_study,
    store_taxonomy,
    use_study,
    versions,
)
from app.taxonomy import TaxonomyError, current_taxonomy
from tests.support.apps import dispose_engines, make_test_config
from tests.support.worker_api import read_to_the_end, save, submit

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "studies"
PARAGRAPHS = ("Anna met Bob in Paris.", "They left for Rome.")


def _bytes(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


@pytest.fixture
def pilot(app):
    study = create_study("pilot", "Pilot", status="open")
    store_taxonomy(study, _bytes("pilot-v1.yaml"), "pilot-v1.yaml")
    use_study(study)
    import_documents([DocumentInput(f"doc-{n}", None, PARAGRAPHS) for n in (1, 2, 3)])
    db.session.commit()
    return study


def _open(client, name: str) -> str:
    db.session.commit()
    response = client.get("/study/pilot/start", query_string={"annotator": name})
    assert response.status_code == 302, response.data
    return response.headers["Location"].removeprefix("/s/")


def _state(client, token: str) -> dict:
    client.get(f"/s/{token}")
    answer = client.get(f"/api/sessions/{token}")
    assert answer.status_code == 200, answer.data
    return answer.get_json()


def _mark(client, token: str, category: str):
    return save(
        client,
        token,
        {
            "id": "00000000-0000-4000-8000-000000000001",
            "category": category,
            "span": {"paragraph_id": 0, "start": 0, "end": 4, "text": "Anna"},
            "paired_span": None,
            "comment": None,
        },
    )


def test_sessions_keep_the_version_they_started_with(app, client, pilot):
    v1 = require_study("pilot").taxonomy_version
    first = _open(client, "early")
    assert [c["key"] for c in _state(client, first)["taxonomy"]["categories"]] == [
        "ungrammatical",
        "unclear",
    ]
    assert _mark(client, first, "ungrammatical").status_code == 201
    stored = store_taxonomy(require_study("pilot"), _bytes("pilot-v2.yaml"), "pilot-v2.yaml")
    assert stored.created and stored.version != v1
    second = _open(client, "late")
    late = _state(client, second)["taxonomy"]
    assert late["version"] == stored.version
    assert [c["key"] for c in late["categories"]] == ["ungrammatical", "unclear", "repeated"]
    assert late["categories"][0]["name"] == "Bad grammar"
    # The first session keeps v1: its categories, and `repeated` is refused there.
    early = _state(client, first)["taxonomy"]
    assert early["version"] == v1
    assert [c["key"] for c in early["categories"]] == ["ungrammatical", "unclear"]
    refused = _mark(client, first, "repeated")
    assert refused.status_code == 422
    assert refused.get_json()["error"]["code"] == "unknown_category"
    assert _mark(client, second, "repeated").status_code == 201
    for token in (first, second):
        read_to_the_end(client, token, 2)
        assert submit(client, token).status_code == 200
    # Exports say which version each record used.
    use_study(require_study("pilot"))
    records = {
        r["annotator_id"]: r["taxonomy_version"] for r in iter_annotation_records(ExportFilter())
    }
    assert records == {"direct:early": v1, "direct:late": stored.version}
    sessions = {s["annotator_id"]: s["taxonomy_version"] for s in iter_session_records()}
    assert sessions == {"direct:early": v1, "direct:late": stored.version}
    assert [v.version for v in versions(require_study("pilot"))] == [v1, stored.version]


def test_a_version_may_not_drop_a_key_in_use(app, client, pilot):
    # Before any annotation a key may still go.
    early = store_taxonomy(require_study("pilot"), _bytes("pilot-renamed.yaml"), "renamed.yaml")
    store_taxonomy(require_study("pilot"), _bytes("pilot-v1.yaml"), "pilot-v1.yaml")
    token = _open(client, "w")
    _state(client, token)
    assert _mark(client, token, "ungrammatical").status_code == 201
    with pytest.raises(TaxonomyRefused, match="'ungrammatical' are used by annotations"):
        store_taxonomy(require_study("pilot"), _bytes("pilot-renamed.yaml"), "renamed.yaml")
    # The version stored before the annotation stays; a refusal changes nothing.
    study = require_study("pilot")
    assert study.taxonomy_version != early.version
    # A file with an error: every problem at its line, as check-taxonomy says it.
    with pytest.raises(TaxonomyError) as error:
        store_taxonomy(study, _bytes("broken.yaml"), "broken.yaml")
    assert "broken.yaml:5: categories[0].type: is required" in [
        str(p) for p in error.value.problems
    ]


def test_the_default_study_takes_its_file_and_refuses_uploads(app, tmp_path):
    study = default_study()
    assert study.taxonomy_file == app.config["TAXONOMY_PATH"]
    assert study.taxonomy_version == current_taxonomy().version
    with pytest.raises(TaxonomyRefused, match="takes its taxonomy from the file"):
        store_taxonomy(study, _bytes("pilot-v1.yaml"), "pilot-v1.yaml")
    # A changed file becomes a new version at start.
    changed = tmp_path / "taxonomy.yaml"
    changed.write_bytes(_bytes("pilot-v2.yaml"))
    before = [v.version for v in versions(study)]
    other = create_app(
        make_test_config(app.config["SQLALCHEMY_DATABASE_URI"], TAXONOMY_PATH=str(changed))
    )
    try:
        with other.app_context():
            study = default_study()
            assert study.taxonomy_file == str(changed)
            assert [v.version for v in versions(study)] == [*before, study.taxonomy_version]
            assert {c.key for c in current_taxonomy().categories} == {
                "ungrammatical",
                "unclear",
                "repeated",
            }
    finally:
        with other.app_context():
            db.session.remove()
            dispose_engines()


def test_a_version_stored_by_one_server_is_served_by_another(app, pilot):
    """Two app objects on one database: the second never restarts."""
    other = create_app(make_test_config(app.config["SQLALCHEMY_DATABASE_URI"]))
    try:
        second = other.test_client()
        first_token = _open(second, "a")
        v1 = _state(second, first_token)["taxonomy"]["version"]
        with app.app_context():
            store_taxonomy(require_study("pilot"), _bytes("pilot-v2.yaml"), "pilot-v2.yaml")
        with other.app_context():
            token = _open(second, "b")
            answer = _state(second, token)["taxonomy"]
            assert answer["version"] != v1
            assert "repeated" in [c["key"] for c in answer["categories"]]
            assert _state(second, first_token)["taxonomy"]["version"] == v1
    finally:
        with other.app_context():
            db.session.remove()
            dispose_engines()
