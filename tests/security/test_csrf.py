"""CSRF: every state-changing route refuses a request without a valid token."""

from __future__ import annotations

from sqlalchemy import func, select

from app.core.extensions import db
from app.models import Annotation, AnnotationSession, ValidationJudgment
from tests.support.apps import log_in_directly
from tests.support.routes import assert_walked, route_family, rules, url_for_rule

WRITE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}


def _state():
    return (
        db.session.scalar(select(func.count()).select_from(Annotation)),
        db.session.scalar(
            select(func.count()).select_from(Annotation).where(Annotation.deleted_at.is_not(None))
        ),
        tuple(
            db.session.scalars(select(AnnotationSession.furthest).order_by(AnnotationSession.id))
        ),
        db.session.scalar(select(func.count()).select_from(ValidationJudgment)),
    )


def test_every_write_route_needs_a_csrf_token(app, world, researcher):
    before = _state()
    checked = []
    for rule, methods in rules(app):
        for method in sorted(set(methods) & WRITE_METHODS):
            client = app.test_client()
            if route_family(rule) == "researcher":
                log_in_directly(client, researcher)
            url = url_for_rule(rule, world)
            for headers in ({}, {"X-CSRFToken": "forged"}):
                response = client.open(url, method=method, json={}, headers=headers)
                assert response.status_code in (400, 403), (
                    method,
                    url,
                    headers,
                    response.status_code,
                )
            checked.append(f"{method} {rule}")
    assert_walked(app, [entry.split(" ", 1)[1] for entry in checked], "write")
    db.session.expire_all()
    assert _state() == before
    # The known write routes are among those checked (new ones are added automatically).
    assert {
        "POST /api/sessions/<token>/annotations",
        "DELETE /api/sessions/<token>/annotations/<annotation_id>",
        "PUT /api/sessions/<token>/position",
        "POST /api/sessions/<token>/submit",
        "POST /api/validators/<token>/judgments",
        "POST /research/login",
        "POST /research/logout",
    } <= set(checked)


def test_a_csrf_token_of_another_session_is_refused(client, world):
    from app.core.security import capability_csrf_token

    response = client.put(
        f"/api/sessions/{world.owner_token}/position",
        json={"paragraph_id": 1},
        headers={"X-CSRFToken": capability_csrf_token("annotate", world.other_token)},
    )
    assert response.status_code == 403
    assert response.get_json()["error"]["code"] == "csrf_failed"
