"""Smaller findings of the hostile test: the public home page lists documents in
development only (never attention checks), and only worker and validator pages may be
framed (FRAME_ANCESTORS); researcher pages and all others send frame-ancestors 'none'."""

from __future__ import annotations

import re

from app import create_app
from app.core.extensions import db
from app.imports.document_formats import DocumentInput
from app.imports.document_store import import_documents
from tests.support.apps import dispose_engines, log_in_directly, make_test_config
from tests.support.routes import assert_walked, rules, url_for_rule

FRAMED_PAGES = ("/annotate/", "/id=", "/start", "/s/", "/validate/", "/v/", "/study/")
GOLD = [{"paragraph_id": 0, "start": 0, "end": 4, "category": "ungrammatical"}]


def _documents() -> None:
    import_documents(
        [
            DocumentInput("visible-doc", "Visible", ("Some text here.",)),
            DocumentInput("check-doc", "Check", ("Gold text here.",), gold=GOLD),
        ]
    )


def test_home_page_lists_documents_in_development_only(app, client, database_uri, monkeypatch):
    _documents()
    page = client.get("/").get_data(as_text=True)  # testing
    assert "visible-doc" not in page and "check-doc" not in page
    assert "open the link you were given" in page

    app.config["APP_ENV"] = "development"
    page = client.get("/").get_data(as_text=True)
    assert 'href="/annotate/visible-doc"' in page
    assert "check-doc" not in page  # an attention check is never listed

    key = "p" * 8 + "0123456789abcdefghijklmnopqrstuv"
    monkeypatch.setenv("SECRET_KEY", key)
    production = create_app(make_test_config(database_uri, APP_ENV="production", SECRET_KEY=key))
    with production.app_context():
        response = production.test_client().get("/", base_url="https://localhost")
        page = response.get_data(as_text=True)
        assert response.status_code == 200
        assert "visible-doc" not in page and "check-doc" not in page
        db.session.remove()
        dispose_engines()


def _frame_ancestors(response) -> str:
    return re.search(r"frame-ancestors ([^;]+)", response.headers["Content-Security-Policy"])[1]


def test_frame_ancestors_per_blueprint(app, world, researcher):
    configured = app.config["FRAME_ANCESTORS"]
    assert configured != "'none'"
    client = app.test_client()
    log_in_directly(client, researcher)
    seen, walked = {"framed": 0, "research": 0}, []
    for rule, methods in rules(app):
        if "GET" not in methods:
            continue
        walked.append(rule)
        url = url_for_rule(rule, world)
        response = client.get(url)
        response.close()
        value = _frame_ancestors(response)
        if url.startswith(FRAMED_PAGES):
            assert value == configured, url
            seen["framed"] += 1
        elif not url.startswith("/api/"):  # JSON is not framed: either value is harmless
            assert value == "'none'", url
            seen["research"] += url.startswith("/research/")
    assert_walked(app, walked, "GET")
    # The researcher's own error pages too (e.g. an unknown round).
    assert _frame_ancestors(client.get("/research/rounds/no-such-round")) == "'none'"
    assert _frame_ancestors(client.get("/s/no-such-token")) == configured
    assert seen["framed"] >= 5 and seen["research"] >= 5, seen
