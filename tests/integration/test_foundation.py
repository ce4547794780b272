"""App-level behaviour on both databases: health check, home page, migrations, headers."""

from __future__ import annotations

from flask_migrate import check, downgrade, upgrade
from sqlalchemy import inspect

from app import create_app
from app.core.extensions import db
from tests.support.apps import make_test_config

CONTRACT_TABLES = {
    "documents",
    "paragraphs",
    "annotators",
    "annotation_sessions",
    "annotations",
    "validation_rounds",
    "validation_items",
    "validation_judgments",
    "researchers",
    "analysis_results",  # issue 31: the Third wave's names (docs/contracts.md section 10)
}


def test_healthz_ok(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.get_json() == {"status": "ok"}


def test_healthz_503_when_database_is_gone():
    unreachable = "postgresql+psycopg2://nobody:x@127.0.0.1:1/none"
    app = create_app(make_test_config(unreachable))
    response = app.test_client().get("/healthz")
    assert response.status_code == 503
    assert response.get_json()["status"] == "unavailable"


def test_contract_tables_exist(app):
    assert set(inspect(db.engine).get_table_names()) >= CONTRACT_TABLES


def test_downgrade_to_base_and_upgrade_again(app):
    downgrade(revision="base")
    assert not CONTRACT_TABLES & set(inspect(db.engine).get_table_names())
    upgrade()
    assert set(inspect(db.engine).get_table_names()) >= CONTRACT_TABLES


def test_models_match_migrations(app):
    # `flask db check`: raises (exit 1) when the models need a migration that isn't there.
    check()


def test_security_headers_on_pages(client):
    response = client.get("/")
    csp = response.headers["Content-Security-Policy"]
    assert "default-src 'self'" in csp
    assert "frame-ancestors" in csp
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Referrer-Policy"] == "same-origin"


def test_unknown_api_path_gets_json_envelope(client):
    response = client.get("/api/nothing-here")
    assert response.status_code == 404
    assert response.get_json()["error"]["code"] == "not_found"


def test_unknown_page_gets_html(client):
    response = client.get("/nothing-here", headers={"Accept": "text/html"})
    assert response.status_code == 404
    assert b"<html" in response.data
