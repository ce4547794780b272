"""Hostile input: oversize and deeply nested bodies, wrong content types, SQL injection
strings, mass assignment, rate limits, and the security headers on every page."""

from __future__ import annotations

import itertools
import re
import uuid

import pytest
from sqlalchemy import inspect

from app import create_app
from app.core.extensions import db
from app.core.security import capability_csrf_token
from tests.support.apps import dispose_engines, log_in_directly, make_test_config
from tests.support.routes import assert_walked, route_family, rules, url_for_rule

INJECTIONS = ["' OR '1'='1", "1; DROP TABLE annotations; --", '" OR ""="', "%27%20OR%201=1--"]


def _headers(token: str) -> dict[str, str]:
    return {"X-CSRFToken": capability_csrf_token("annotate", token)}


# Each _annotation() another one: an exact duplicate of a live annotation under a new id
# is refused (422 duplicate_annotation), and the world has "Zoë" (ungrammatical) already.
_SPANS = itertools.cycle(
    [
        (category, end)
        for end in (1, 2)
        for category in ("new-person", "missing-info", "abrupt-transition", "unclear-coreference")
    ]
)


def _annotation(**extra):
    category, end = next(_SPANS)
    body = {
        "id": str(uuid.uuid4()),
        "category": category,
        "span": {"paragraph_id": 0, "start": 0, "end": end, "text": "Zoë"[:end]},
        "paired_span": None,
        "comment": None,
    }
    body.update(extra)
    return body


def test_oversize_body_gets_413_envelope(app, client, world):
    huge = _annotation(comment="x" * (app.config["MAX_CONTENT_LENGTH"] + 10))
    response = client.post(
        f"/api/sessions/{world.owner_token}/annotations",
        json=huge,
        headers=_headers(world.owner_token),
    )
    assert response.status_code == 413
    assert response.get_json()["error"]["code"] == "request_entity_too_large"


@pytest.mark.parametrize("path_suffix", ["annotations", "position", "submit", "heartbeat"])
def test_deeply_nested_json_is_a_4xx_not_a_crash(client, world, path_suffix):
    nested = "[" * 5000 + "]" * 5000
    response = client.open(
        f"/api/sessions/{world.owner_token}/{path_suffix}",
        method="PUT" if path_suffix == "position" else "POST",
        data=nested,
        content_type="application/json",
        headers=_headers(world.owner_token),
    )
    assert 400 <= response.status_code < 500
    assert "error" in response.get_json()


def test_deeply_nested_judgment_is_a_4xx(client, world):
    response = client.post(
        f"/api/validators/{world.validator_token}/judgments",
        data="{" + '"a":{' * 3000 + "}" * 3001,
        content_type="application/json",
        headers={"X-CSRFToken": capability_csrf_token("validate", world.validator_token)},
    )
    assert 400 <= response.status_code < 500


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded"])
def test_wrong_content_type_gets_415(client, world, content_type):
    response = client.post(
        f"/api/sessions/{world.owner_token}/annotations",
        data='{"id": "x"}',
        content_type=content_type,
        headers=_headers(world.owner_token),
    )
    assert response.status_code == 415
    assert response.get_json()["error"]["code"] == "unsupported_media_type"


@pytest.mark.parametrize(
    "extra",
    [{"session_id": 1}, {"deleted_at": "2020-01-01T00:00:00Z"}, {"annotator_id": "x"}],
)
def test_mass_assignment_is_rejected(client, world, extra):
    response = client.post(
        f"/api/sessions/{world.owner_token}/annotations",
        json=_annotation(**extra),
        headers=_headers(world.owner_token),
    )
    assert response.status_code == 422
    assert response.get_json()["error"]["details"]["field"] == next(iter(extra))


def test_sql_injection_strings_in_ids_and_parameters(app, world, researcher):
    client = app.test_client()
    log_in_directly(client, researcher)
    tables_before = set(inspect(db.engine).get_table_names())
    for injection in INJECTIONS:
        for url in (
            f"/annotate/{injection}",
            f"/id={injection}",
            f"/s/{injection}",
            f"/api/sessions/{injection}",
            f"/validate/{injection}",
            f"/research/rounds/{injection}",
            f"/annotate/{world.document_id}?annotator={injection}",
            f"/start?PROLIFIC_PID={injection}&STUDY_ID={injection}",
            f"/research/export/annotations.jsonl?document={injection}",
        ):
            response = client.get(url)
            assert response.status_code < 500, (url, response.status_code)
            response.close()
        response = client.delete(
            f"/api/sessions/{world.owner_token}/annotations/{injection}",
            headers=_headers(world.owner_token),
        )
        assert response.status_code in (404, 422), response.status_code
    assert set(inspect(db.engine).get_table_names()) == tables_before
    assert client.get(f"/api/sessions/{world.owner_token}").get_json()["annotations"]


def test_security_headers_on_every_page(app, world, researcher):
    client = app.test_client()
    log_in_directly(client, researcher)
    walked = []
    for rule, methods in rules(app):
        if "GET" not in methods:
            continue
        walked.append(rule)
        response = client.get(url_for_rule(rule, world))
        response.close()
        csp = response.headers.get("Content-Security-Policy", "")
        assert "default-src 'self'" in csp and "script-src 'self'" in csp, rule
        assert "unsafe-inline" not in csp, rule
        assert response.headers.get("X-Content-Type-Options") == "nosniff", rule
        assert response.headers.get("Referrer-Policy") == "same-origin", rule
        if route_family(rule) in ("worker-token", "validator-token"):
            assert "no-store" in response.headers.get("Cache-Control", ""), rule
    assert_walked(app, walked, "GET")


def _failed_logins(client, addresses):
    """POST a wrong password once per address (sent as X-Forwarded-For); the responses."""
    page = client.get("/research/login").get_data(as_text=True)
    csrf = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', page).group(1)
    form = {"email": "a@b.c", "password": "wrong-password", "csrf_token": csrf}
    return [
        client.post("/research/login", data=form, headers={"X-Forwarded-For": a}) for a in addresses
    ]


def test_login_is_rate_limited(app, client):
    responses = _failed_logins(client, ["203.0.113.1"] * 12)
    statuses = [r.status_code for r in responses]
    # LOGIN_RATE_LIMIT is 10 per minute per client address.
    assert statuses == [401] * 10 + [429] * 2  # wrong password, then refused
    seconds = responses[-1].headers["Retry-After"]
    assert 1 <= int(seconds) <= 60
    assert f"Too many attempts; try again in {seconds} seconds." in responses[-1].get_data(
        as_text=True
    )
    assert client.get("/research/login").status_code == 200  # the form itself still shows


@pytest.mark.parametrize(
    ("proxies", "expected"),
    [
        (1, [401, 401, 429, 401]),  # behind one proxy: its X-Forwarded-For names the client
        (0, [401, 401, 429, 429]),  # no proxy: the header is the client's word, ignored
    ],
)
def test_login_limit_counts_per_client_address(database_uri, proxies, expected):
    app = create_app(
        make_test_config(database_uri, TRUSTED_PROXIES=proxies, LOGIN_RATE_LIMIT="2 per minute")
    )
    with app.app_context():
        addresses = ["203.0.113.1"] * 3 + ["203.0.113.2"]
        responses = _failed_logins(app.test_client(), addresses)
        assert [r.status_code for r in responses] == expected
        db.session.remove()
        dispose_engines()


def test_rate_limits_can_be_turned_off(app, client, world):
    app.config["ANNOTATE_WRITE_LIMIT"] = "1 per minute"
    app.config["RATELIMIT_ENABLED"] = False
    statuses = [
        client.post(
            f"/api/sessions/{world.owner_token}/annotations",
            json=_annotation(),
            headers=_headers(world.owner_token),
        ).status_code
        for _ in range(3)
    ]
    assert statuses == [201, 201, 201]


def test_saves_are_rate_limited_per_session(app, client, world):
    app.config["ANNOTATE_WRITE_LIMIT"] = "5 per minute"
    responses = [
        client.post(
            f"/api/sessions/{world.owner_token}/annotations",
            json=_annotation(),
            headers=_headers(world.owner_token),
        )
        for _ in range(8)
    ]
    statuses = [r.status_code for r in responses]
    assert statuses[:5] == [201] * 5
    assert statuses[5:] == [429] * 3
    # The client is told when the minute's window resets.
    assert 1 <= int(responses[-1].headers["Retry-After"]) <= 61
    other = client.put(
        f"/api/sessions/{world.other_token}/position",
        json={"paragraph_id": 1},
        headers=_headers(world.other_token),
    )
    assert other.status_code == 200, "one worker's limit must not throttle another"
