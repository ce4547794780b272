"""Capability tokens never reach gunicorn's access log (app/core/gunicorn_logging.py)."""

from __future__ import annotations

import datetime
from types import SimpleNamespace

import pytest
from gunicorn.config import Config

from app.core.gunicorn_logging import RedactingLogger, redact_tokens

TOKEN = "kT3x_9-Zq8WvA0bC1dE2fG3hI4jK5lM6"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"/s/{TOKEN}", "/s/<redacted>"),
        (f"/s/{TOKEN}/complete", "/s/<redacted>/complete"),
        (f"/v/{TOKEN}?x=1", "/v/<redacted>?x=1"),
        (f"/api/sessions/{TOKEN}/annotations/a1", "/api/sessions/<redacted>/annotations/a1"),
        (f"/api/validators/{TOKEN}/next", "/api/validators/<redacted>/next"),
        (
            f"POST /api/sessions/{TOKEN}/submit HTTP/1.1",
            "POST /api/sessions/<redacted>/submit HTTP/1.1",
        ),
        (f"https://annotate.example.org/s/{TOKEN}", "https://annotate.example.org/s/<redacted>"),
        (f"http://127.0.0.1:8000/v/{TOKEN}#top", "http://127.0.0.1:8000/v/<redacted>#top"),
        # Not a token path: unchanged.
        ("/annotate/doc-1?annotator=ann", "/annotate/doc-1?annotator=ann"),
        ("/static/s/app.css", "/static/s/app.css"),
        ("/api/openapi.json", "/api/openapi.json"),
        ("/s/", "/s/"),
        ("-", "-"),
    ],
)
def test_redact_tokens(text, expected):
    assert redact_tokens(text) == expected


def test_access_log_line_has_no_token(tmp_path):
    logger = RedactingLogger(Config())
    environ = {
        "REQUEST_METHOD": "GET",
        "RAW_URI": f"/s/{TOKEN}",
        "PATH_INFO": f"/s/{TOKEN}",
        "QUERY_STRING": "",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_REFERER": f"https://x.example/v/{TOKEN}",
        "REMOTE_ADDR": "127.0.0.1",
    }
    response = SimpleNamespace(
        status="302 FOUND", sent=0, headers=[("Location", f"/s/{TOKEN}/complete")]
    )
    request = SimpleNamespace(headers=[("REFERER", environ["HTTP_REFERER"])])
    logger.cfg.set("accesslog", str(tmp_path / "access.log"))
    logger.cfg.set("access_log_format", '%(r)s %(U)s "%(f)s" %({location}o)s %({referer}i)s')
    logger.setup(logger.cfg)
    logger.access(response, request, environ, datetime.timedelta(seconds=0.01))
    for handler in logger.access_log.handlers:
        handler.close()
    [line] = (tmp_path / "access.log").read_text().splitlines()
    assert TOKEN not in line
    assert line.count("<redacted>") == 5, line
