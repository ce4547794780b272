"""Scale-out: two gunicorn servers on one PostgreSQL serve one worker's session
alternately (as a load balancer would) with consistent state. The app keeps nothing in
process memory that this could contradict."""

from __future__ import annotations

import re

import pytest
import requests

from tests.resilience.conftest import PARAGRAPH
from tests.support.servers import free_port, start_gunicorn, stop
from tests.support.worker_api import body, quote, token_from


@pytest.fixture
def two_servers(pg_url):
    ports = [free_port(), free_port()]
    processes = [start_gunicorn("app:create_app()", pg_url, p, WEB_CONCURRENCY="1") for p in ports]
    yield [f"http://127.0.0.1:{p}" for p in ports]
    for process in processes:
        stop(process)


def test_one_session_alternating_between_two_servers(two_servers):
    a, b = two_servers
    with requests.Session() as browser:
        first = browser.get(f"{a}/annotate/fault-doc?annotator=roamer", allow_redirects=False)
        token = token_from(first)
        again = browser.get(f"{b}/annotate/fault-doc?annotator=roamer", allow_redirects=False)
        assert token_from(again) == token

        page = browser.get(f"{b}/s/{token}").text
        headers = {"X-CSRFToken": re.search(r'name="csrf-token" content="([^"]+)"', page)[1]}
        api = f"/api/sessions/{token}"
        ids = []
        for n, (server, other) in enumerate([(a, b), (b, a), (a, b), (b, a)]):
            start = (0, PARAGRAPH.index("keeper"), PARAGRAPH.index("dawn"), 4)[n]
            span = quote(0, PARAGRAPH, start, start + 3)
            data = body(span=span, comment=f"saved on server {n % 2}")
            saved = browser.post(f"{server}{api}/annotations", json=data, headers=headers)
            assert saved.status_code == 201, saved.text
            # The client's retry reaches the other server: same answer, no second row.
            replay = browser.post(f"{other}{api}/annotations", json=data, headers=headers)
            assert replay.status_code == 200 and replay.json() == saved.json()
            ids.append(data["id"])

        removed = browser.delete(f"{b}{api}/annotations/{ids[0]}", headers=headers)
        assert removed.status_code == 204
        moved = browser.put(f"{a}{api}/position", json={"paragraph_id": 1}, headers=headers)
        assert moved.status_code == 200

        for server in (a, b):
            state = browser.get(f"{server}{api}").json()
            assert sorted(x["id"] for x in state["annotations"]) == sorted(ids[1:])
            assert (state["position"], state["furthest"]) == (1, 1)

        submitted = browser.post(f"{b}{api}/submit", json={}, headers=headers)
        resubmitted = browser.post(f"{a}{api}/submit", json={}, headers=headers)
        assert submitted.status_code == resubmitted.status_code == 200
        assert submitted.json() == resubmitted.json()
