"""Deploy files can't run here (no Docker engine): check that they parse."""

from __future__ import annotations

import gc
import re
import runpy
from pathlib import Path
from types import SimpleNamespace

import yaml

from app import create_app
from tests.conftest import make_test_config

ROOT = Path(__file__).resolve().parents[2]


def test_procfile_runs_gunicorn_and_migrates_on_release():
    lines = dict(
        line.split(":", 1) for line in (ROOT / "Procfile").read_text().splitlines() if line
    )
    assert lines["web"].strip().startswith("gunicorn --config gunicorn.conf.py")
    assert "app:create_app()" in lines["web"]
    assert lines["release"].strip() == "flask --app app db upgrade"


def test_gunicorn_config_reads_port_and_concurrency(monkeypatch):
    monkeypatch.setenv("PORT", "5123")
    monkeypatch.setenv("WEB_CONCURRENCY", "3")
    settings = runpy.run_path(str(ROOT / "gunicorn.conf.py"))
    assert settings["bind"].endswith(":5123")
    assert settings["workers"] == 3


def test_gunicorn_workers_compile_templates_freeze_and_say_ready(tmp_path):
    settings = runpy.run_path(str(ROOT / "gunicorn.conf.py"))
    app = create_app(make_test_config(f"sqlite:///{tmp_path / 'app.db'}"))
    assert gc.get_freeze_count() == 0
    assert len(app.jinja_env.cache) == 0
    try:
        logged: list[tuple] = []
        log = SimpleNamespace(info=lambda *args: logged.append(args))
        settings["post_worker_init"](SimpleNamespace(wsgi=app, log=log))
        assert gc.get_freeze_count() > 0
        assert logged and logged[0][0].startswith("Worker ready")  # servers.py waits for it
    finally:
        gc.unfreeze()
    compiled = {template.name for template in app.jinja_env.cache.values()}
    assert {"annotate/session.html", "base.html", "validation/session.html"} <= compiled
    settings["post_worker_init"](SimpleNamespace(wsgi=object()))  # not a Flask app: fine
    gc.unfreeze()


def test_compose_has_postgres_with_volume_and_healthcheck():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    db = compose["services"]["db"]
    assert db["image"].startswith("postgres:16")
    assert any(volume.endswith(":/var/lib/postgresql/data") for volume in db["volumes"])
    assert "pg_isready" in " ".join(db["healthcheck"]["test"])
    assert "pgdata" in compose["volumes"]


def test_compose_web_builds_migrates_and_waits_for_healthy_db():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    web = compose["services"]["web"]
    assert web["build"] == "."
    assert web["depends_on"]["db"]["condition"] == "service_healthy"
    env = web["environment"]
    assert env["APP_ENV"] == "production"
    assert env["DATABASE_URL"].startswith("postgresql://") and "@db:5432/" in env["DATABASE_URL"]
    assert "SECRET_KEY" in env
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "db upgrade" in dockerfile and "gunicorn" in dockerfile
    assert re.search(r"^FROM python:3\.11", dockerfile, re.MULTILINE)


def test_env_example_lists_every_variable_the_config_reads():
    read = set()
    for path in [ROOT / "config" / "settings.py", ROOT / "gunicorn.conf.py"]:
        read |= set(re.findall(r"""environ\.get\(\s*["']([A-Z_]+)["']""", path.read_text()))
        read |= set(re.findall(r"""env\.get\(\s*["']([A-Z_]+)["']""", path.read_text()))
    listed = set(re.findall(r"^#?\s*([A-Z_]+)=", (ROOT / ".env.example").read_text(), re.M))
    assert read - {"HOST"} <= listed, read - listed


def test_python_version_pinned_for_heroku():
    assert (ROOT / ".python-version").read_text().strip() == "3.11"
