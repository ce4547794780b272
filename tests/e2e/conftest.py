"""Browser tests: a live server in a thread and Chromium driven by Playwright.

The browser is /usr/bin/chromium where present (Debian's package; Playwright cannot
download its own here), otherwise Playwright's own Chromium. Any native dialog
(alert/confirm/prompt) fails the test: crowd platforms' iframes suppress them, and an
XSS payload that runs would open one.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import pytest

from app.core.extensions import db
from app.imports.document_formats import DocumentInput
from app.imports.document_store import import_documents
from app.taxonomy import current_taxonomy
from tests.support.accounts import add_account
from tests.support.apps import require_or_skip
from tests.support.js_harness import open_harness
from tests.support.live_server import LiveServer, serving
from tests.support.research_console import EMAIL, PASSWORD
from tests.support.synthetic_study import seed_study

SYSTEM_CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


def pytest_collection_modifyitems(items):
    """Mark every test in this folder as e2e."""
    for item in items:
        if "tests/e2e/" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session")
def base_url() -> str | None:
    """No base URL: tests use live_server.url. (pytest-playwright's fallback fixture is a
    method on a plugin object, which pytest 9 turns into an error under -W error.)"""
    return None


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    """Launch Debian's Chromium when present, with flags for this closed network."""
    args = {**browser_type_launch_args, "args": CHROMIUM_ARGS}
    if Path(SYSTEM_CHROMIUM).exists():
        args["executable_path"] = SYSTEM_CHROMIUM
    return args


@pytest.fixture(scope="session")
def browser(browser_type, browser_type_launch_args):
    """One Chromium for the run; a clear failure (CI) or skip (locally) when none."""
    try:
        launched = browser_type.launch(**browser_type_launch_args)
    except Exception as exc:
        require_or_skip(f"Chromium could not be launched ({exc}); run `make test`")
    yield launched
    launched.close()


@pytest.fixture
def page(context):
    """A page on which any native dialog fails the test."""
    new_page = context.new_page()
    dialogs: list[str] = []

    def on_dialog(dialog):
        dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    new_page.on("dialog", on_dialog)
    yield new_page
    assert not dialogs, f"native dialogs opened: {dialogs}"


@pytest.fixture
def js_harness(page) -> tuple:
    """A blank page that imports static/js modules without the app (tests/support/js_harness),
    and the fake API that answers its requests."""
    return page, open_harness(page)


@pytest.fixture
def live_app(tmp_path, sqlite_template) -> Iterator[Callable[..., LiveServer]]:
    """Start the app for the browser: `live_app(taxonomy=path, documents=[...], **config)`
    serves it on 127.0.0.1 over a fresh copy of the migrated SQLite template, with that
    taxonomy file (default: the shipped one), config and documents imported; each call is
    another app and database, and every one is stopped after the test."""
    numbers = itertools.count(1)
    with contextlib.ExitStack() as running:

        def start(
            taxonomy: Path | str | None = None, documents: Iterable[DocumentInput] = (), **config
        ) -> LiveServer:
            database = tmp_path / f"e2e-{next(numbers)}.sqlite3"
            shutil.copy(sqlite_template, database)
            if taxonomy is not None:
                config["TAXONOMY_PATH"] = str(taxonomy)
            live = running.enter_context(serving(f"sqlite:///{database}", **config))
            if documents:
                with live.app.app_context():
                    import_documents(list(documents))
                    db.session.remove()
            return live

        yield start


@pytest.fixture
def live_server(live_app) -> LiveServer:
    """The app with the shipped taxonomy on a fresh SQLite file, served on 127.0.0.1."""
    return live_app()


@pytest.fixture
def server(database_uri) -> Iterator[LiveServer]:
    """The live app on SQLite, then on PostgreSQL (tests/conftest.py's database_uri)."""
    with serving(database_uri) as live:
        yield live


@pytest.fixture
def console(live_server):
    """A live app with a researcher account and a small seeded study."""
    with live_server.app.app_context():
        add_account(EMAIL, PASSWORD)
        db.session.commit()
        seed_study(12, 3, 8, categories=current_taxonomy().keys, check_documents=1, workers=9)
        db.session.remove()
    return live_server
