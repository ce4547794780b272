"""A real gunicorn, with the project's gunicorn.conf.py, writes its access log without
worker or validator tokens (app/gunicorn_logging.py): /s/<redacted>, /v/<redacted>, ..."""

from __future__ import annotations

import secrets

import requests

from tests.support.servers import free_port, start_gunicorn, stop


def test_gunicorn_access_log_redacts_tokens(pg_url, tmp_path):
    log = tmp_path / "access.log"
    port = free_port()
    server = start_gunicorn("app:create_app()", pg_url, port, access_log=str(log))
    url = f"http://127.0.0.1:{port}"
    try:
        with requests.Session() as browser:
            opened = browser.get(f"{url}/annotate/fault-doc?annotator=logged")
            worker = opened.url.rsplit("/", 1)[-1]
            validator = secrets.token_urlsafe(24)  # unknown: a 404 is logged all the same
            referer = {"Referer": f"{url}/s/{worker}"}
            paths = [
                f"/s/{worker}",
                f"/api/sessions/{worker}",
                f"/v/{validator}",
                f"/api/validators/{validator}/next",
            ]
            for path in paths:
                browser.get(f"{url}{path}", headers=referer)
    finally:
        stop(server)
    text = log.read_text()
    assert worker not in text and validator not in text, text
    for path in ("/s/", "/api/sessions/", "/v/", "/api/validators/"):
        assert f"GET {path}<redacted>" in text, (path, text)
    assert f'"{url}/s/<redacted>"' in text  # the Referer too
