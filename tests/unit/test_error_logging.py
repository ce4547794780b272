"""The app's own error log lines never show a capability token, nor a forged line."""

from __future__ import annotations

import logging

from app import create_app
from tests.support.apps import make_test_config


def _app_with_failing_route(tmp_path):
    app = create_app(make_test_config(f"sqlite:///{tmp_path / 'app.db'}"))

    @app.get("/s/<token>/boom")
    def boom(token):
        raise RuntimeError("boom")

    return app


def test_unhandled_error_log_line_redacts_the_token_and_escapes_newlines(tmp_path, caplog):
    app = _app_with_failing_route(tmp_path)
    token = "SeCrEtToKeN1234567890abcdef"
    with caplog.at_level(logging.ERROR, logger=app.logger.name):
        response = app.test_client().get(f"/s/{token}%0AINFO%20forged/boom")
    assert response.status_code == 500
    lines = [record.getMessage() for record in caplog.records]
    logged = [line for line in lines if line.startswith("Unhandled error on GET")]
    assert logged == ["Unhandled error on GET '/s/<redacted>\\nINFO forged/boom'"], lines
    assert all(token not in line and "\n" not in line for line in lines)
