"""Deploy files can't run here (no Docker engine, no Heroku): check that they parse, and
that nginx accepts its configurations (`nginx -t`; tests/resilience runs them)."""

from __future__ import annotations

import gc
import re
import runpy
import shlex
import subprocess
from pathlib import Path
from types import SimpleNamespace

import yaml

from app import create_app
from config.settings import Config
from tests.support.apps import make_test_config, require_or_skip
from tests.support.nginx import compose_config, heroku_config, nginx_binary, render_erb

ROOT = Path(__file__).resolve().parents[2]


def test_procfile_runs_gunicorn_behind_the_nginx_buildpack_and_migrates_on_release():
    lines = dict(
        line.split(":", 1) for line in (ROOT / "Procfile").read_text().splitlines() if line
    )
    web = shlex.split(lines["web"])
    # The buildpack's conventions: bin/start-nginx runs the app server, which listens on
    # /tmp/nginx.socket (GUNICORN_SOCKET tells gunicorn.conf.py).
    assert web[:2] == ["GUNICORN_SOCKET=/tmp/nginx.socket", "bin/start-nginx"]
    assert web[2:] == ["gunicorn", "--config", "gunicorn.conf.py", "app:create_app()"]
    assert lines["release"].strip() == "flask --app app db upgrade"
    # The analysis queue's worker (app/jobs): `heroku ps:scale worker=1`.
    assert shlex.split(lines["worker"]) == ["flask", "--app", "app", "analysis-worker"]


def test_gunicorn_config_reads_port_and_concurrency(monkeypatch):
    monkeypatch.setenv("PORT", "5123")
    monkeypatch.setenv("WEB_CONCURRENCY", "3")
    settings = runpy.run_path(str(ROOT / "gunicorn.conf.py"))
    assert settings["bind"].endswith(":5123")
    assert settings["workers"] == 3
    assert settings["ready_file"] == ""
    assert settings["logger_class"] == "app.core.gunicorn_logging.RedactingLogger"


def test_gunicorn_binds_the_unix_socket_and_touches_the_ready_file(monkeypatch, tmp_path):
    monkeypatch.delenv("GUNICORN_READY_FILE", raising=False)
    monkeypatch.setenv("GUNICORN_SOCKET", "/tmp/nginx.socket")
    settings = runpy.run_path(str(ROOT / "gunicorn.conf.py"))
    assert settings["bind"] == "unix:/tmp/nginx.socket"
    assert settings["ready_file"] == "/tmp/app-initialized"  # what bin/start-nginx waits for
    monkeypatch.setenv("GUNICORN_READY_FILE", str(tmp_path / "ready"))
    settings = runpy.run_path(str(ROOT / "gunicorn.conf.py"))
    try:
        settings["post_worker_init"](SimpleNamespace(wsgi=object()))
    finally:
        gc.unfreeze()
    assert (tmp_path / "ready").exists()


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


def test_compose_publishes_only_nginx_which_fronts_web():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    assert "ports" not in services["web"]  # gunicorn is reached through nginx only
    assert services["web"]["expose"] == ["8000"]
    assert services["web"]["environment"]["TRUSTED_PROXIES"] == "1"
    nginx = services["nginx"]
    assert nginx["image"].startswith("nginx:")
    assert nginx["ports"] == ["8000:80"]
    assert nginx["volumes"] == ["./config/nginx:/etc/falte/nginx:ro"]
    assert nginx["command"][:3] == ["nginx", "-c", "/etc/falte/nginx/nginx.conf"]
    assert nginx["depends_on"]["web"]["condition"] == "service_healthy"
    [publishing] = [name for name, service in services.items() if "ports" in service]
    assert publishing == "nginx"
    conf = (ROOT / "config" / "nginx" / "nginx.conf").read_text()
    assert re.search(r"server web:8000\b", conf) and re.search(r"listen 80;", conf)


def test_compose_shares_rate_limits_through_redis():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    redis = compose["services"]["redis"]
    assert redis["image"].startswith("redis:")
    assert redis["healthcheck"]["test"][-1] == "ping"
    web = compose["services"]["web"]
    assert web["environment"]["RATELIMIT_STORAGE_URI"].endswith("redis://redis:6379/0}")
    assert web["depends_on"]["redis"]["condition"] == "service_healthy"


def test_compose_runs_the_analysis_worker_on_the_same_database_and_redis():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    worker = services["worker"]
    assert worker["build"] == "."
    assert worker["command"] == ["flask", "--app", "app", "analysis-worker"]
    assert "ports" not in worker and "expose" not in worker
    web_env, worker_env = services["web"]["environment"], worker["environment"]
    assert worker_env["DATABASE_URL"] == web_env["DATABASE_URL"]
    assert worker_env["QUEUE_URL"] == web_env["QUEUE_URL"] == "${QUEUE_URL:-redis://redis:6379/0}"
    assert worker_env["APP_ENV"] == "production" and "SECRET_KEY" in worker_env
    for service in ("db", "redis", "web"):  # web migrates before the worker reads a table
        assert worker["depends_on"][service]["condition"] == "service_healthy"
    assert worker["restart"] == "unless-stopped"
    # The command exists, and its --help answers.
    app = create_app(make_test_config("sqlite://"))
    result = app.test_cli_runner().invoke(args=["analysis-worker", "--help"])
    assert result.exit_code == 0 and "ANALYSIS_TIME_LIMIT" in result.output


def _directives(text: str) -> dict[str, str]:
    """`name value;` lines of an nginx file (the last one of each name)."""
    return dict(re.findall(r"^\s*([a-z_]+)\s+([^;{]*);", text, re.M))


def test_proxy_conf_buffers_whole_requests_within_the_apps_body_limit():
    proxy = _directives((ROOT / "config" / "nginx" / "proxy.conf").read_text())
    assert proxy["proxy_request_buffering"] == "on"
    assert proxy["proxy_buffering"] == "on"
    limit = Config().MAX_CONTENT_LENGTH
    assert proxy["client_max_body_size"] == f"{limit // 1024}k"
    assert proxy["client_body_buffer_size"] == f"{limit // 1024}k"  # bodies stay in memory
    for timeout in ("client_body_timeout", "client_header_timeout"):
        assert 1 <= int(proxy[timeout].rstrip("s")) <= 30, timeout
    text = (ROOT / "config" / "nginx" / "proxy.conf").read_text()
    assert "X-Forwarded-For $proxy_add_x_forwarded_for;" in text
    assert "X-Forwarded-Proto $falte_forwarded_proto;" in text


def test_both_shapes_include_the_shared_proxy_conf():
    compose = (ROOT / "config" / "nginx" / "nginx.conf").read_text()
    heroku = (ROOT / "config" / "nginx.conf.erb").read_text()
    # Relative to each main file's directory: /etc/falte/nginx/ in compose, config/ on Heroku.
    assert re.search(r"^\s*include proxy\.conf;", compose, re.M)
    assert re.search(r"^\s*include nginx/proxy\.conf;", heroku, re.M)
    for text in (compose, heroku):
        assert "$falte_forwarded_proto" in text and "access_log" in text and " falte;" in text
        assert "proxy_set_header" not in text  # all in proxy.conf (a location would hide it)


def test_heroku_template_follows_the_buildpack_conventions():
    rendered = render_erb((ROOT / "config" / "nginx.conf.erb").read_text(), {"PORT": "31234"})
    assert "daemon off;" in rendered
    assert re.search(r"^\s*listen 31234;", rendered, re.M)
    assert "server unix:/tmp/nginx.socket " in rendered
    # The router's X-Forwarded-Proto is passed on, not replaced by nginx's own http.
    assert "default $http_x_forwarded_proto;" in rendered


def test_nginx_accepts_both_configurations(tmp_path):
    binary = nginx_binary()
    if binary is None:
        require_or_skip("nginx is not installed (scripts/ensure-services.sh installs it)")
    shapes = {
        "heroku": heroku_config(tmp_path / "heroku", 31234, tmp_path / "nginx.socket"),
        "compose": compose_config(tmp_path / "compose", 31235, ["127.0.0.1:31236"]),
    }
    for shape, conf in shapes.items():
        prefix = conf.parents[1] if shape == "heroku" else conf.parents[2]
        checked = subprocess.run(
            [binary, "-t", "-p", f"{prefix}/", "-c", str(conf), "-g", f"pid {prefix}/n.pid;"]
            if shape == "compose"
            else [binary, "-t", "-p", f"{prefix}/", "-c", str(conf)],
            capture_output=True,
            text=True,
        )
        assert checked.returncode == 0, (shape, checked.stderr)


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
