"""Never a 500 from text that cannot be stored: NUL characters (PostgreSQL refuses them)
and lone surrogates (not Unicode), in any path segment, query value, form field or JSON
string of any route of the URL map (new routes are covered automatically), answer 4xx in
the error envelope for API clients and an HTML page for pages: 400 bad_request, or for a
JSON string 422 invalid_field (as the worker API's own field checks); a non-ASCII
X-CSRFToken header answers 403 csrf_failed. Run on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import re

import pytest

from app.core.security import capability_csrf_token
from tests.support.apps import log_in_directly
from tests.support.routes import assert_walked, route_family, rules, url_for_rule

WRITE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}
NUL_SEGMENT = "a%00b"


def _client(app, researcher):
    client = app.test_client()
    log_in_directly(client, researcher)
    return client


def _csrf_headers(rule: str, url: str) -> dict[str, str]:
    """The capability's own valid CSRF token, so that the guard is what answers."""
    family = route_family(rule)
    if family not in ("worker-token", "validator-token"):
        return {}
    scope = "annotate" if family == "worker-token" else "validate"
    used = url.split("/")[3] if url.startswith("/api/") else url.split("/")[2]
    return {"X-CSRFToken": capability_csrf_token(scope, used)}


def _assert_refused(response, where: str, status: int = 400) -> None:
    """Refused with `status`: the envelope (400 bad_request, 422 invalid_field) or a page."""
    assert response.status_code == status, (where, response.status_code)
    if response.is_json:
        error = response.get_json()["error"]
        assert error["code"] == {400: "bad_request", 422: "invalid_field"}[status], where
        assert "NUL" in error["message"] or "surrogate" in error["message"], where
    else:
        assert response.mimetype == "text/html", where
        assert "cannot be stored" in response.get_data(as_text=True) or (
            "not valid Unicode" in response.get_data(as_text=True)
        ), where
    if "/api/" in where.split("?")[0]:
        assert response.is_json, where


def _each_route(app, world) -> list[tuple[str, str, str]]:
    """(rule, method, URL) of every route of the URL map; checked to be all of them."""
    walk = [
        (rule, method, url_for_rule(rule, world))
        for rule, methods in rules(app)
        for method in methods
    ]
    assert_walked(app, [rule for rule, _, _ in walk])
    return walk


def test_a_nul_in_any_path_segment(app, world, researcher):
    checked, walked = 0, []
    for rule, methods in rules(app):
        walked.append(rule)
        variables = re.findall(r"<([^>]+)>", rule)
        if not variables:
            continue
        url = re.sub(r"<([^>]+)>", NUL_SEGMENT, rule)
        for method in methods:
            response = _client(app, researcher).open(url, method=method, json={})
            response.close()
            where = f"{method} {url}"
            if all(v.startswith("int:") for v in variables) and response.status_code == 404:
                continue  # the int converter refused it (unless another rule took the URL)
            else:
                _assert_refused(response, where)
                checked += 1
    assert_walked(app, walked)
    assert checked >= 10


@pytest.mark.parametrize("query", ["q=a%00b", "PROLIFIC_PID=x%00&STUDY_ID=s", "%00=1"])
def test_a_nul_in_any_query_value(app, world, researcher, query):
    for rule, method, url in _each_route(app, world):
        response = _client(app, researcher).open(
            f"{url}?{query}", method=method, json={}, headers=_csrf_headers(rule, url)
        )
        response.close()
        _assert_refused(response, f"{method} {url}?{query}")


def test_undecodable_query_values_are_never_a_500(app, world, researcher):
    for rule, method, url in _each_route(app, world):
        for query in ("q=%ED%A0%80", "annotator=%ED%A0%80", "document=%FF%00"):
            response = _client(app, researcher).open(
                f"{url}?{query}", method=method, headers=_csrf_headers(rule, url)
            )
            response.close()
            assert response.status_code < 500, (method, url, query, response.status_code)


def test_a_nul_in_any_form_field(app, world, researcher):
    for rule, method, url in _each_route(app, world):
        if method not in WRITE_METHODS:
            continue
        response = _client(app, researcher).open(
            url,
            method=method,
            data={"email": "a\x00@b.org", "password": "x", "csrf_token": "t"},
            headers=_csrf_headers(rule, url),
        )
        _assert_refused(response, f"{method} {url} form")


@pytest.mark.parametrize(
    "body",
    [
        {"comment": "\ud800"},
        {"explanation": "a\x00b"},
        {"span": {"text": "ok", "paired": ["fine", "\udfff"]}},
        {"\x00key": 1},
        {"\udc00key": 1},
    ],
)
def test_unstorable_json_strings(app, world, researcher, body):
    for rule, method, url in _each_route(app, world):
        response = _client(app, researcher).open(
            url, method=method, json=body, headers=_csrf_headers(rule, url)
        )
        response.close()
        _assert_refused(response, f"{method} {url} json", status=422)


def test_a_non_ascii_csrf_header_is_refused(app, world, researcher):
    for _rule, method, url in _each_route(app, world):
        if method not in WRITE_METHODS:
            continue
        response = _client(app, researcher).open(
            url, method=method, json={}, headers={"X-CSRFToken": "é" + "a" * 63}
        )
        where = f"{method} {url}"
        assert response.status_code == 403, (where, response.status_code)
        if response.is_json:
            assert response.get_json()["error"]["code"] == "csrf_failed", where


def test_the_reported_examples(client, world):
    response = client.get("/api/sessions/a%00b")
    assert response.status_code == 400
    assert response.get_json()["error"]["details"] == {"field": "path"}

    page = client.get("/research/login").get_data(as_text=True)
    csrf = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', page).group(1)
    form = {"email": "a\x00@example.org", "password": "whatever-it-is", "csrf_token": csrf}
    response = client.post("/research/login", data=form)
    assert response.status_code == 400
    assert response.mimetype == "text/html"
    assert "form field &#39;email&#39; contains a NUL" in response.get_data(as_text=True)

    token = world.validator_token
    headers = {"X-CSRFToken": capability_csrf_token("validate", token)}
    item = client.get(f"/api/validators/{token}/next").get_json()["item"]
    response = client.post(
        f"/api/validators/{token}/judgments",
        data=json.dumps({"item_id": item["id"], "verdict": "agree", "explanation": "\ud800"}),
        content_type="application/json",
        headers=headers,
    )
    assert response.status_code == 422
    error = response.get_json()["error"]
    assert error["details"] == {"field": "explanation"}
    assert "lone surrogate" in error["message"]

    response = client.post(
        f"/api/validators/{token}/judgments", json={}, headers={"X-CSRFToken": "jeton-é"}
    )
    assert response.status_code == 403
    assert response.get_json()["error"]["code"] == "csrf_failed"
    # Nothing above was stored: the validator still has the same item to judge.
    assert client.get(f"/api/validators/{token}/next").get_json()["item"]["id"] == item["id"]


NOT_UTF8 = ("utf-16", "utf-16-le", "utf-32", "utf-32-be")


@pytest.mark.parametrize("encoding", NOT_UTF8)
def test_json_that_is_not_utf8_is_refused(app, world, researcher, encoding):
    # Python's json reads UTF-16 and UTF-32 bytes too, so the guard's search of the raw
    # bytes for a NUL escape missed them: the NUL reached PostgreSQL, a 500.
    body = json.dumps({"item_id": "x", "verdict": "agree", "explanation": "a\x00b"})
    for rule, method, url in _each_route(app, world):
        response = _client(app, researcher).open(
            url,
            method=method,
            data=body.encode(encoding),
            content_type="application/json",
            headers=_csrf_headers(rule, url),
        )
        response.close()
        where = f"{method} {url} {encoding}"
        assert response.status_code == 400, (where, response.status_code)
        if response.is_json:
            error = response.get_json()["error"]
            assert error["code"] == "bad_request", where
            assert "UTF-8" in error["message"], where


@pytest.mark.parametrize("encoding", NOT_UTF8)
def test_the_reported_utf16_and_utf32_bodies(client, world, researcher, encoding):
    token = world.validator_token
    headers = {"X-CSRFToken": capability_csrf_token("validate", token)}
    item = client.get(f"/api/validators/{token}/next").get_json()["item"]
    for explanation in ("a\x00b", "plain"):
        body = {"item_id": item["id"], "verdict": "agree", "explanation": explanation}
        response = client.post(
            f"/api/validators/{token}/judgments",
            data=json.dumps(body).encode(encoding),
            content_type="application/json",
            headers=headers,
        )
        assert response.status_code == 400, response.get_data(as_text=True)
        assert "UTF-8" in response.get_json()["error"]["message"]
    # Nothing was stored: the validator still has the same item to judge.
    assert client.get(f"/api/validators/{token}/next").get_json()["item"]["id"] == item["id"]
