"""A static page for unit-testing the browser's ES modules in Chromium without the app:
Playwright's router serves a blank page and static/ from the working tree on a made-up
origin, and answers /api/ requests from a script the test writes (FakeApi)."""

from __future__ import annotations

import json
import mimetypes
from pathlib import Path

from playwright.sync_api import Page, Route

STATIC = Path(__file__).resolve().parents[2] / "static"
ORIGIN = "http://harness.test"
HARNESS = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="csrf-token" content="harness-token"><title>JS units</title></head>
<body><main id="main"></main></body></html>"""


class FakeApi:
    """The routed API: answers each request with the next status of a script."""

    def __init__(self) -> None:
        self.script: list[int] = []
        self.seen: list[dict] = []

    def answer(self, route: Route) -> None:
        """Record the request and answer with the next scripted status (200 when none)."""
        request = route.request
        body = request.post_data
        self.seen.append(
            {
                "method": request.method,
                "path": request.url.removeprefix(ORIGIN),
                "body": json.loads(body) if body else None,
                "csrf": request.headers.get("x-csrftoken"),
            }
        )
        status = self.script.pop(0) if self.script else 200
        payload = (
            {"ok": True}
            if status < 400
            else {"error": {"code": f"c{status}", "message": f"m{status}"}}
        )
        route.fulfill(status=status, content_type="application/json", body=json.dumps(payload))


def open_harness(page: Page) -> FakeApi:
    """Route the harness origin on `page` and open its blank page; the API it answers with."""
    api = FakeApi()

    def serve(route: Route) -> None:
        path = route.request.url.removeprefix(ORIGIN).split("?")[0]
        if path.startswith("/api/"):
            api.answer(route)
        elif path.startswith("/static/"):
            file = (STATIC / path.removeprefix("/static/")).resolve()
            if STATIC not in file.parents or not file.is_file():
                route.fulfill(status=404, body="")
                return
            kind = (
                "text/javascript" if file.suffix == ".mjs" else mimetypes.guess_type(file.name)[0]
            )
            route.fulfill(status=200, content_type=kind or "text/plain", body=file.read_bytes())
        else:
            route.fulfill(status=200, content_type="text/html", body=HARNESS)

    page.route(f"{ORIGIN}/**", serve)
    page.goto(f"{ORIGIN}/")
    return api
