"""The app served on 127.0.0.1 in a background thread, for a browser or a second client."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass

from flask import Flask
from werkzeug.serving import make_server

from app import create_app
from tests.support.apps import dispose_engines, make_test_config


@dataclass
class LiveServer:
    """A running app: its base URL and the Flask app (for database set-up and checks)."""

    url: str
    app: Flask

    def stop(self) -> None:
        """Shut the server down."""
        self._server.shutdown()
        self._thread.join(timeout=10)


def start_live_server(database_uri: str, **overrides) -> LiveServer:
    """Serve a fresh app on a free port in a background thread."""
    app = create_app(make_test_config(database_uri, **overrides))
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    live = LiveServer(url=f"http://127.0.0.1:{server.server_port}", app=app)
    live._server = server
    live._thread = thread
    return live


@contextlib.contextmanager
def serving(database_uri: str, **overrides) -> Iterator[LiveServer]:
    """The app served on 127.0.0.1 over the given (migrated, empty) database."""
    live = start_live_server(database_uri, **overrides)
    try:
        yield live
    finally:
        live.stop()
        with live.app.app_context():
            dispose_engines()


def run_commands(live: LiveServer, *commands: list[str]) -> None:
    """Run `flask` commands (each a list of arguments) in the served app; each must
    succeed."""
    runner = live.app.test_cli_runner()
    for args in commands:
        result = runner.invoke(args=[str(arg) for arg in args])
        assert result.exit_code == 0, (args, result.output)
