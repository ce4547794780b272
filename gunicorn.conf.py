"""gunicorn settings, read from the environment (Heroku sets PORT and WEB_CONCURRENCY).

gunicorn always runs behind a buffering proxy in the deployed shapes (nginx:
docs/deploying.md, "nginx in front"): its threads block reading a request, so a few
clients sending their body one byte a second would hold them all. On Heroku the nginx
buildpack's conventions hold: GUNICORN_SOCKET=/tmp/nginx.socket, and /tmp/app-initialized
touched once a worker is ready (nginx starts then)."""

import gc
import os
from pathlib import Path

socket_path = os.environ.get("GUNICORN_SOCKET")
if socket_path:
    bind = f"unix:{socket_path}"
else:
    bind = f"{os.environ.get('HOST', '0.0.0.0')}:{os.environ.get('PORT', '8000')}"  # noqa: S104
# The file the nginx buildpack's bin/start-nginx waits for before it starts nginx.
ready_file = os.environ.get("GUNICORN_READY_FILE") or (
    "/tmp/app-initialized" if socket_path else ""  # noqa: S108 (the buildpack's path)
)
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
# Threads let one worker overlap database round trips; what the app keeps in memory is
# only caches (safe to lose, per process).
worker_class = "gthread"
threads = int(os.environ.get("GUNICORN_THREADS", "4"))
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "30"))
graceful_timeout = 20
keepalive = 5
accesslog = "-"
errorlog = "-"
# Worker and validator tokens never reach the access log (/s/<redacted>).
logger_class = "app.core.gunicorn_logging.RedactingLogger"
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")


def post_worker_init(worker):
    """Once the app is loaded: compile its templates, so that the first workers to open a
    task after a deploy or restart do not wait for it (~40 ms a page, ~200 ms under
    load); then move everything allocated at start-up (modules, app, SQLAlchemy metadata,
    taxonomy, templates) out of the garbage collector's sight: it lives as long as the
    worker, and full collections no longer walk it (about 2% of a worker's CPU). Then
    touch the ready file, if any: the first worker ready lets nginx take traffic."""
    jinja_env = getattr(getattr(worker, "wsgi", None), "jinja_env", None)
    if jinja_env is not None and jinja_env.loader is not None:
        for name in jinja_env.list_templates(extensions=["html"]):
            jinja_env.get_template(name)
    gc.freeze()
    if ready_file:
        Path(ready_file).touch()
    if hasattr(worker, "log"):
        worker.log.info("Worker ready (pid: %s)", os.getpid())
