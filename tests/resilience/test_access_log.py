"""A real gunicorn, with the project's gunicorn.conf.py, writes its access log without
worker or validator tokens (app/core/gunicorn_logging.py): /s/<redacted>, /v/<redacted>, ...;
the real nginx, with the shipped configurations, writes none in its error log either."""

from __future__ import annotations

import secrets

import pytest
import requests

from tests.support.apps import require_or_skip
from tests.support.nginx import (
    access_log,
    compose_config,
    heroku_config,
    nginx_binary,
    start_nginx,
    stop_nginx,
)
from tests.support.nginx import logs as nginx_logs
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


@pytest.mark.parametrize("shape", ["compose", "heroku"])
def test_nginx_error_log_has_no_tokens(tmp_path, shape):
    """The real nginx with the shipped configuration: a body over the limit (413, which
    nginx logs with the request line) and an upstream that does not answer (502, logged
    with the request line, the upstream URL and the Referer) leave no token in its error
    log; the access log still says what happened, redacted."""
    if nginx_binary() is None:
        require_or_skip("nginx is not installed (scripts/ensure-services.sh installs it)")
    port = free_port()
    if shape == "compose":  # nothing listens on the upstream's port
        config = compose_config(tmp_path, port, [f"127.0.0.1:{free_port()}"])
    else:  # no gunicorn on the socket
        config = heroku_config(tmp_path, port, tmp_path / "no-gunicorn.socket")
    nginx = start_nginx(tmp_path, config, port)
    worker, validator, referred = (secrets.token_urlsafe(24) for _ in range(3))
    url = f"http://127.0.0.1:{port}"
    try:
        with requests.Session() as browser:
            referer = {"Referer": f"{url}/s/{referred}"}
            too_large = browser.post(
                f"{url}/api/sessions/{worker}/annotations",
                data=b"x" * 100_000,
                headers={**referer, "Content-Type": "application/json"},
            )
            assert too_large.status_code == 413
            for path in (f"/s/{worker}", f"/api/validators/{validator}/next", "/static/x.css"):
                assert browser.get(f"{url}{path}", headers=referer).status_code == 502
    finally:
        stop_nginx(nginx)
    errors = nginx_logs(nginx)
    for token in (worker, validator, referred):
        assert token not in errors, errors
    logged = access_log(nginx)
    assert '"POST /api/sessions/<redacted>/annotations HTTP/1.1" 413' in logged, logged
    assert '"GET /s/<redacted> HTTP/1.1" 502' in logged, logged
    assert f'"{url}/s/<redacted>"' in logged
    for token in (worker, validator, referred):
        assert token not in logged
