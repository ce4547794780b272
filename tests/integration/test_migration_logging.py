"""Migrating in-process (the test suite's fixtures, the benches' scratch databases) leaves
the app's loggers on: migrations/env.py configures Alembic's logging from alembic.ini
without disabling the loggers that already exist. With logging's default it did, and the
app's error log line and the rate limits' warnings went silent for the rest of the process
(three unit tests failed after a bench had migrated a scratch database in-process)."""

from __future__ import annotations

import logging

from flask_migrate import upgrade

from app import create_app
from tests.support.apps import dispose_engines, make_test_config


def test_an_in_process_migration_leaves_the_apps_loggers_on(tmp_path):
    app = create_app(make_test_config(f"sqlite:///{tmp_path / 'fresh.sqlite3'}"))
    jobs_log = logging.getLogger("app.jobs.queue")
    assert not app.logger.disabled and not jobs_log.disabled
    with app.app_context():
        upgrade()
        dispose_engines()
    assert not app.logger.disabled and not jobs_log.disabled
    heard = Heard()
    app.logger.addHandler(heard)
    try:
        app.logger.error("still heard")
    finally:
        app.logger.removeHandler(heard)
    assert heard.messages == ["still heard"]


class Heard(logging.Handler):
    """The messages that reach the logger it is added to."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())
