"""The console's studies in tests (docs/studies.md): researchers with each role in a
study, a study with a document, sessions and a round to read, logged-in clients, and
the CSRF token a console form needs."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from flask import Flask, g

from app.core.extensions import db
from app.models import AnnotationSession, Researcher, Study
from app.studies import share, use_study
from app.studies.making import new_study
from app.taxonomy import current_taxonomy
from app.validation.rounds import create_round
from tests.support.accounts import add_account
from tests.support.adjudication import DOC_ID, seed_adjudication_document
from tests.support.apps import log_in_directly

ROLES = ("owner", "editor", "viewer", "none")
ROUND = "round-1"


@dataclass
class StudyWorld:
    """Study `alpha` (a document `adj-doc` with three submitted sessions, a round) with a
    researcher of each role, and study `beta` of another owner with its own document."""

    alpha: Study
    beta: Study
    people: dict[str, Researcher]  # owner, editor, viewer of alpha; none: beta's owner
    session_id: int  # a session of alpha
    beta_session_id: int


def csrf_of(client, path: str = "/research/studies/") -> str:
    """The CSRF token of a console page (its form's hidden field, else its meta tag)."""
    page = client.get(path).get_data(as_text=True)
    found = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', page)
    return (found or re.search(r'name="csrf-token" content="([^"]+)"', page))[1]


class Browser:
    """A test client logged in as one researcher (or anonymous). The tests' app context
    is shared by every request, so what Flask-Login and Flask-WTF keep in `g` for the
    request before is dropped before each request."""

    def __init__(self, app: Flask, researcher: Researcher | None) -> None:
        self.client = app.test_client()
        if researcher is not None:
            log_in_directly(self.client, researcher)

    def get(self, url: str, **kwargs):
        return self.open(url, method="GET", **kwargs)

    def post(self, url: str, **kwargs):
        return self.open(url, method="POST", **kwargs)

    def open(self, url: str, **kwargs):
        for cached in ("_login_user", "csrf_token"):
            g.pop(cached, None)
        response = self.client.open(url, **kwargs)
        response.get_data()  # a streamed download ends inside its request (and its context)
        response.close()
        return response


def client_of(app: Flask, researcher: Researcher | None) -> Browser:
    """A browser logged in as `researcher` (anonymous with None)."""
    return Browser(app, researcher)


def build_world(tmp_path: Path) -> StudyWorld:
    """Two studies, each with the adjudication sample document, and alpha's researchers."""
    people = {role: add_account(f"{role}@example.org", role=None) for role in ROLES}
    db.session.commit()
    alpha = new_study("alpha", "Alpha study", "annotation", people["owner"])
    share(alpha, people["editor"], "editor")
    share(alpha, people["viewer"], "viewer")
    beta = new_study("beta", "Beta study", "annotation", people["none"])
    sessions = {}
    for study in (alpha, beta):
        use_study(study)
        document = seed_adjudication_document()
        sessions[study.slug] = db.session.scalar(
            db.select(AnnotationSession.id).filter_by(document_id=document.id).limit(1)
        )
    use_study(alpha)
    items = tmp_path / "items.jsonl"
    item = {"id": "q1", "source": "s", "document_id": DOC_ID, "span": {"text": "Anna"}}
    items.write_text(json.dumps(item) + "\n", encoding="utf-8")
    create_round(ROUND, [items], current_taxonomy(), seed=1)
    db.session.commit()
    return StudyWorld(alpha, beta, people, sessions["alpha"], sessions["beta"])
