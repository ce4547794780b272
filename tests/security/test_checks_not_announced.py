"""Attention checks are not announced (issue 26, point 5).

Before the fix a planted check showed the worker its title "<source> (attention check)"
and its id `<source>-check-1` on the task page, in GET /api/sessions/<token> and on the
completion page. A worker goes through a whole study here (consent, survey, the task,
Submit, the after-survey, the completion page) on a planted check, and every page and
JSON answer they get is scanned for the check's id, its source's id and the words
"attention check".
"""

from __future__ import annotations

import html
import json
import re
import uuid
from pathlib import Path

import pytest

from app.core.extensions import db
from app.core.security import capability_csrf_token
from app.models import AnnotationSession, Document
from tests.support.apps import ROOT
from tests.support.studies import use_taxonomy

SOURCE = ROOT / "tests" / "fixtures" / "planted" / "source.json"
SOURCE_ID = "the-golden-doves"
CHECK_ID = f"{SOURCE_ID}-check-1"
SOURCE_TITLE = "The Golden Doves (GPT-4 summary, BooookScore sample)"
WORKER = {"PROLIFIC_PID": "p-1", "STUDY_ID": "s-1", "SESSION_ID": "x-1"}
STUDY = """\
study:
  completion:
    completed: C1A2B3C4
  attention_check_share: 0.5
checks: {repetition: repetition, inconsistency: inconsistency, new-entity: new-person}
consent: |
  **Taking part.** You will read a summary.
survey:
  before:
    - {key: native, type: choice, text: "Is English your first language?",
       options: ["Yes", "No"], required: true}
  after:
    - {key: feedback, type: text, text: "Anything else?", max_length: 200}
"""


def use_study(app, tmp_path: Path) -> None:
    """The default taxonomy with consent, surveys and Prolific codes: entered at /start."""
    text = (ROOT / "config" / "taxonomy.yaml").read_text(encoding="utf-8")
    path = tmp_path / "taxonomy.yaml"
    path.write_text(f"{text[: text.index(chr(10) + 'study:' + chr(10))]}\n{STUDY}", "utf-8")
    use_taxonomy(app, path)


@pytest.fixture
def study(app, tmp_path):
    """The app running the study of STUDY."""
    use_study(app, tmp_path)
    return app


@pytest.fixture
def check(app, runner):
    """The source summary and a check planted into it (seed 1)."""
    imported = runner.invoke(args=["import-documents", str(SOURCE)])
    assert imported.exit_code == 0, imported.output
    planted = runner.invoke(args=["plant-checks", SOURCE_ID, "--seed", "1"])
    assert planted.exit_code == 0, planted.output
    db.session.commit()
    return db.session.scalar(db.select(Document).filter_by(external_id=CHECK_ID))


class Seen:
    """Every body a worker's browser received, by what it was."""

    def __init__(self, client):
        self.client = client
        self.bodies: dict[str, str] = {}

    def get(self, name: str, path: str, **kwargs):
        response = self.client.get(path, **kwargs)
        self.bodies[name] = response.get_data(as_text=True) + str(response.headers)
        return response

    def send(self, name: str, method: str, path: str, **kwargs):
        response = self.client.open(path, method=method, **kwargs)
        self.bodies[name] = response.get_data(as_text=True) + str(response.headers)
        return response


def headers(token: str) -> dict[str, str]:
    return {"X-CSRFToken": capability_csrf_token("annotate", token)}


def form(token: str, **fields) -> dict[str, str]:
    return {"csrf_token": capability_csrf_token("annotate", token), **fields}


def a_whole_study(seen: Seen) -> str:
    """The worker's way through the study from its link; their session token."""
    opened = seen.get("start", "/start", query_string=WORKER)
    assert opened.status_code == 302, opened.data
    token = opened.headers["Location"].removeprefix("/s/")
    assert seen.get("task before consent", f"/s/{token}").status_code == 303
    assert seen.get("consent", f"/s/{token}/consent").status_code == 200
    agreed = seen.send(
        "consent sent", "POST", f"/s/{token}/consent", data=form(token, decision="agree")
    )
    assert agreed.status_code == 303
    assert seen.get("survey before", f"/s/{token}/survey/before").status_code == 200
    answered = seen.send(
        "survey sent", "POST", f"/s/{token}/survey/before", data=form(token, **{"q-native": "0"})
    )
    assert answered.status_code == 303
    assert seen.get("task", f"/s/{token}").status_code == 200
    state = seen.get("session", f"/api/sessions/{token}").get_json()
    first = state["document"]["paragraphs"][0]["text"]
    word = re.search(r"\w{4,}", first)
    annotation = {
        "id": str(uuid.uuid4()),
        "category": "new-person",
        "span": {"paragraph_id": 0, "start": word.start(), "end": word.end(), "text": word[0]},
        "paired_span": None,
        "comment": None,
    }
    saved = seen.send(
        "save",
        "POST",
        f"/api/sessions/{token}/annotations",
        json=annotation,
        headers=headers(token),
    )
    assert saved.status_code == 201, saved.data
    beat = seen.send(
        "heartbeat", "POST", f"/api/sessions/{token}/heartbeat", headers=headers(token)
    )
    assert beat.status_code == 204
    for paragraph_id in range(1, state["document"]["total_paragraphs"]):
        moved = seen.send(
            f"move {paragraph_id}",
            "PUT",
            f"/api/sessions/{token}/position",
            json={"paragraph_id": paragraph_id},
            headers=headers(token),
        )
        assert moved.status_code == 200, moved.data
    done = seen.send("submit", "POST", f"/api/sessions/{token}/submit", headers=headers(token))
    assert done.status_code == 200, done.data
    assert seen.get("survey after", f"/s/{token}/survey/after").status_code == 200
    finished = seen.send(
        "survey after sent",
        "POST",
        f"/s/{token}/survey/after",
        data=form(token, **{"q-feedback": "Fine."}),
    )
    assert finished.status_code == 303
    assert seen.get("complete", f"/s/{token}/complete?follow=1").status_code == 200
    assert seen.get("task read-only", f"/s/{token}").status_code == 200
    seen.get("session read-only", f"/api/sessions/{token}")
    return token


def test_nothing_a_worker_sees_names_the_check(study, check):
    app = study
    assert check is not None and check.is_attention_check
    seen = Seen(app.test_client())
    token = a_whole_study(seen)
    session = db.session.scalars(db.select(AnnotationSession).filter_by(token=token)).one()
    assert session.document.external_id == CHECK_ID  # the worker did get the check
    # The MTurk preview of the check's own link (the link names it; the page does not).
    preview = seen.get("preview", f"/annotate/{CHECK_ID}?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE")
    assert preview.status_code == 200
    pages = {"consent", "survey before", "task", "session", "save", "submit", "complete"}
    assert pages | {"survey after", "preview", "move 1"} <= set(seen.bodies)
    for name, body in seen.bodies.items():
        for secret in (CHECK_ID, SOURCE_ID, "attention check", "attention_check"):
            assert secret.lower() not in body.lower(), (name, secret)
    # A check has its source document's title, on the task page and the completion page.
    assert check.title == SOURCE_TITLE
    for name in ("task", "complete", "task read-only"):
        assert SOURCE_TITLE in seen.bodies[name], name


def test_the_worker_api_gives_an_opaque_id_per_session(app, check):
    ids = []
    for number in (1, 2):
        client = app.test_client()
        opened = client.get(f"/annotate/{SOURCE_ID}", query_string={"annotator": f"w{number}"})
        token = opened.headers["Location"].removeprefix("/s/")
        page = client.get(f"/s/{token}").get_data(as_text=True)
        first = client.get(f"/api/sessions/{token}").get_json()["document"]["id"]
        again = client.get(f"/api/sessions/{token}").get_json()["document"]["id"]
        assert re.fullmatch(r"doc-[0-9a-f]{20}", first)
        assert first == again  # stable for the session
        bootstrap = json.loads(html.unescape(re.search(r"data-bootstrap='([^']*)'", page)[1]))
        assert bootstrap["document"]["id"] == first  # the page's data has the same id
        assert SOURCE_ID not in page
        ids.append(first)
    assert ids[0] != ids[1]  # two sessions of one document: nothing links them
