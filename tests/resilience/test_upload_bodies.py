"""The console's upload addresses take large bodies behind the real nginx with the shipped
configuration (Heroku's shape), and every other address keeps the small limit: nginx
answers 413 itself there (docs/deploying.md)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import requests

from tests.support.apps import require_or_skip
from tests.support.nginx import heroku_config, nginx_before, nginx_binary
from tests.support.servers import free_port, start_gunicorn

GUNICORN = {"WEB_CONCURRENCY": "1", "GUNICORN_THREADS": "2"}


@pytest.fixture
def nginx_in_front(pg_url, tmp_path) -> Iterator[str]:
    """gunicorn on a unix socket, nginx with config/nginx.conf.erb."""
    if nginx_binary() is None:
        require_or_skip("nginx is not installed (scripts/ensure-services.sh installs it)")
    socket_path = tmp_path / "nginx.socket"
    app = start_gunicorn("app:create_app()", pg_url, None, socket_path=socket_path, **GUNICORN)
    port = free_port()
    with nginx_before(app, tmp_path, port, lambda: heroku_config(tmp_path, port, socket_path)):
        yield f"http://127.0.0.1:{port}"


def _post(url: str, size: int) -> requests.Response:
    files = {"documents": ("big.jsonl", b"x" * size)}
    return requests.post(url, files=files, timeout=30, allow_redirects=False)


def test_only_the_upload_addresses_take_large_bodies(nginx_in_front):
    base = nginx_in_front
    documents = _post(f"{base}/research/studies/pilot/documents/upload", 3 * 1024 * 1024)
    taxonomy = _post(f"{base}/research/studies/pilot/taxonomy/upload", 500 * 1024)
    elsewhere = _post(f"{base}/research/rounds", 500 * 1024)
    # The app answered the first two (no CSRF token, no login: not a 413 of nginx's).
    assert documents.status_code != 413, documents.text[:300]
    assert taxonomy.status_code != 413, taxonomy.text[:300]
    assert elsewhere.status_code == 413
    assert "nginx" in elsewhere.text
