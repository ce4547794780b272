"""Prolific in the tests: Playwright answers for app.prolific.com (no network), and a real
HTTP stand-in of Prolific's submissions API (GET /api/v1/submissions/<id>/)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from playwright.sync_api import Page, Route, expect

PROLIFIC = "https://app.prolific.com/submissions/complete?cc="
API_TOKEN = "stand-in-token"


def stub_prolific(page: Page) -> list[str]:
    """Answer every request to app.prolific.com in the browser; the URLs asked for."""
    asked: list[str] = []

    def answer(route: Route) -> None:
        asked.append(route.request.url)
        route.fulfill(status=200, content_type="text/html", body="<title>Prolific</title>")

    page.route("https://app.prolific.com/**", answer)
    return asked


@dataclass
class ProlificStandIn:
    """What the stand-in knows and how it behaves: `submissions` maps a SESSION_ID to
    (participant, study_id, status); `status` forces every answer's HTTP status (a 5xx);
    `delay` seconds before answering (a timeout). `asked` lists (path, Authorization)."""

    url: str = ""
    submissions: dict[str, tuple[str, str, str]] = field(default_factory=dict)
    status: int | None = None
    delay: float = 0.0
    asked: list[tuple[str, str | None]] = field(default_factory=list)


def _handler(state: ProlificStandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            state.asked.append((self.path, self.headers.get("Authorization")))
            if state.delay:
                time.sleep(state.delay)
            prefix, suffix = "/api/v1/submissions/", "/"
            submission = self.path.removeprefix(prefix).removesuffix(suffix)
            if self.headers.get("Authorization") != f"Token {API_TOKEN}":
                self._send(401, {"error": "Invalid token"})
            elif state.status is not None:
                self._send(state.status, {"error": "stand-in failure"})
            elif not self.path.startswith(prefix) or submission not in state.submissions:
                self._send(404, {"error": "Not found"})
            else:
                participant, study_id, status = state.submissions[submission]
                body = {
                    "id": submission,
                    "participant": participant,
                    "study_id": study_id,
                    "status": status,
                }
                self._send(200, body)

        def _send(self, status: int, body: dict) -> None:
            data = json.dumps(body).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the app gave up (a timeout)
                pass

        def log_message(self, *args) -> None:
            pass

    return Handler


@contextmanager
def prolific_api() -> Iterator[ProlificStandIn]:
    """A stand-in of Prolific's API on 127.0.0.1 (a real HTTP server in a thread) for the
    app's PROLIFIC_API_URL, with API_TOKEN as the valid token."""
    state = ProlificStandIn()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    server.daemon_threads = True
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


def returned_with(page: Page, asked: list[str], code: str) -> None:
    """The page's "Return to the study" link goes to Prolific with `code`, and the page
    follows it there (once: `asked`, from stub_prolific)."""
    target = f"{PROLIFIC}{code}"
    expect(page.get_by_role("link", name="Return to the study")).to_have_attribute("href", target)
    page.wait_for_url(target)
    assert asked == [target]
