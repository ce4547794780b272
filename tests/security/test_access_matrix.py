"""Access matrix: every route x method x actor (anonymous, another worker, owner,
researcher), generated from the URL map so that new routes are covered automatically."""

from __future__ import annotations

import secrets

import pytest

from app.core.security import capability_csrf_token
from app.models import Annotation
from tests.support.apps import log_in_directly
from tests.support.routes import assert_walked, route_family, rules, url_for_rule

ACTORS = ("anonymous", "other-worker", "owner", "researcher")
# Worker pages of one study step (app.crowd.journey): a session at another step is redirected.
STEP_PAGES = ("/complete", "/consent", "/survey/before", "/survey/after", "/training", "/end")


def _call(client, method: str, url: str, headers=None):
    if method in ("POST", "PUT", "PATCH"):
        return client.open(url, method=method, json={}, headers=headers or {})
    return client.open(url, method=method, headers=headers or {})


@pytest.mark.parametrize("actor", ACTORS)
def test_every_route_answers_every_actor_as_its_family_requires(app, world, researcher, actor):
    walked = []
    for rule, methods in rules(app):
        walked.append(rule)
        family = route_family(rule)
        for method in methods:
            client = app.test_client()
            if actor == "researcher":
                log_in_directly(client, researcher)
            token = None
            if family in ("worker-token", "validator-token"):
                token = {
                    "anonymous": secrets.token_urlsafe(24),
                    "other-worker": world.other_token
                    if family == "worker-token"
                    else world.other_validator_token,
                    "researcher": secrets.token_urlsafe(24),
                }.get(actor)
            url = url_for_rule(rule, world, token=token)
            headers = {}
            if family in ("worker-token", "validator-token"):
                # The capability holder's own valid CSRF token: access, not CSRF, is tested.
                scope = "annotate" if family == "worker-token" else "validate"
                used = url.split("/")[3] if url.startswith("/api/") else url.split("/")[2]
                headers["X-CSRFToken"] = capability_csrf_token(scope, used)
            response = _call(client, method, url, headers)
            response.close()  # static files are streamed from open file handles
            where = f"{actor} {method} {url} -> {response.status_code}"
            assert response.status_code < 500, where

            if family == "researcher":
                if actor == "researcher":
                    assert response.status_code not in (401, 403), where
                    if method == "GET":
                        assert response.status_code == 200, where
                else:
                    anonymous_answer = response.status_code == 401 or (
                        response.status_code == 302
                        and "/research/login" in response.headers["Location"]
                    )
                    assert anonymous_answer or (
                        method != "GET" and response.status_code in (400, 405)
                    ), where
            elif family in ("worker-token", "validator-token"):
                if actor in ("anonymous", "researcher"):
                    assert response.status_code == 404, where
                if actor == "other-worker" and "<annotation_id>" in rule:
                    # The owner's annotation id under another worker's token: not found.
                    assert response.status_code == 404, where
                if actor == "owner" and method == "GET" and not rule.endswith(STEP_PAGES):
                    assert response.status_code == 200, where
                elif actor == "owner" and method == "GET":
                    # A step page the session is not at sends its owner to the one it is at.
                    assert response.status_code in (200, 302, 303), where
    assert_walked(app, walked)


def test_another_workers_token_cannot_remove_the_owners_annotation(app, client, world):
    response = client.delete(
        f"/api/sessions/{world.other_token}/annotations/{world.owner_annotation}",
        headers={"X-CSRFToken": capability_csrf_token("annotate", world.other_token)},
    )
    assert response.status_code == 404
    stored = (
        app.extensions["sqlalchemy"]
        .session.scalars(
            __import__("sqlalchemy").select(Annotation).filter_by(client_id=world.owner_annotation)
        )
        .one()
    )
    assert stored.deleted_at is None


def test_a_worker_sees_only_their_own_annotations(client, world):
    mine = client.get(f"/api/sessions/{world.owner_token}").get_json()["annotations"]
    assert [a["id"] for a in mine] == [world.owner_annotation]
