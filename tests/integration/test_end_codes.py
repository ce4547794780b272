"""The code a worker sees where the study ends, on both databases (issue 27, point 1):
the outcome's platform code (Prolific's C1A2B3C4), no code where the platform takes the
redirect alone, and the app's own per-session code only where the study has no platform
code. A worker who pastes the app's code into Prolific lands in manual review."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from app.core.extensions import db
from app.core.security import capability_csrf_token
from app.imports.document_formats import DocumentInput
from app.imports.document_store import import_documents
from app.models import AnnotationSession
from tests.support.apps import ROOT
from tests.support.studies import use_taxonomy
from tests.support.worker_api import read_to_the_end, save, start, start_study, submit

PROLIFIC = "https://app.prolific.com/submissions/complete?cc="
WORKER = {"PROLIFIC_PID": "p-1", "STUDY_ID": "s-1", "SESSION_ID": "x-1"}
PARAGRAPHS = ("Anna met Bob at the harbour.", "Carol waved at the ship.")
CODES = "  completion: {completed: C1A2B3C4, no_consent: CN1M2L3K}\n"


def use_study(app, tmp_path: Path, study: str, extra: str = "") -> None:
    """The default taxonomy with this `study:` section (and top-level `extra`)."""
    text = (ROOT / "config" / "taxonomy.yaml").read_text(encoding="utf-8")
    path = tmp_path / "taxonomy.yaml"
    path.write_text(f"{text[: text.index(chr(10) + 'study:' + chr(10))]}\nstudy:\n{study}{extra}")
    use_taxonomy(app, path)


@pytest.fixture
def document(app):
    import_documents([DocumentInput("doc-1", None, PARAGRAPHS)])
    db.session.commit()


def session_of(token: str) -> AnnotationSession:
    db.session.expire_all()
    return db.session.scalars(db.select(AnnotationSession).filter_by(token=token)).one()


def opened(client, **worker: str) -> str:
    """The worker's session on doc-1: a Prolific worker arrives by the study link /start
    (a study with completion codes is entered only there), a named annotator by the
    document's link."""
    return (
        start_study(client, **worker)
        if "PROLIFIC_PID" in worker
        else start(client, "doc-1", **worker)
    )


def finished(client, **worker: str) -> tuple[str, dict]:
    """A worker who opened doc-1, marked one span, read on and Submitted."""
    token = opened(client, **worker)
    assert client.get(f"/s/{token}").status_code == 200  # the task page, as a browser loads it
    read_to_the_end(client, token, len(PARAGRAPHS))
    span = {"paragraph_id": 1, "start": 0, "end": 5, "text": "Carol"}
    body = {"id": str(uuid.uuid4()), "category": "new-person", "span": span}
    assert save(client, token, body | {"paired_span": None, "comment": None}).status_code == 201
    answer = submit(client, token)
    assert answer.status_code == 200, answer.data
    return token, answer.get_json()


def test_the_completion_page_shows_the_outcomes_prolific_code(app, client, document, tmp_path):
    use_study(app, tmp_path, CODES)
    token, answer = finished(client, **WORKER)
    own = session_of(token).completion_code
    assert answer["shown_code"] == "C1A2B3C4"
    for path in (f"/s/{token}/complete", f"/s/{token}/complete?follow=1"):
        page = client.get(path).get_data(as_text=True)
        assert ">C1A2B3C4</code>" in page and "Copy code" in page, path
        assert own not in page, path  # pasted into Prolific, it means manual review
        assert f'href="{PROLIFIC}C1A2B3C4"' in page
    # The task page reloaded after Submit fills its panel from the same answer.
    state = client.get(f"/s/{token}").get_data(as_text=True)
    assert '"shown_code": "C1A2B3C4"' in state


def test_a_fixed_url_without_a_code_shows_only_the_return_link(app, client, document, tmp_path):
    use_study(app, tmp_path, "  completion: {completed: 'https://example.org/thanks'}\n")
    token, answer = finished(client, **WORKER)
    assert answer["shown_code"] is None
    page = client.get(f"/s/{token}/complete").get_data(as_text=True)
    assert session_of(token).completion_code not in page
    assert "Your completion code" not in page and "Copy code" not in page
    assert 'href="https://example.org/thanks"' in page and "Return to the study" in page


@pytest.mark.parametrize(
    ("study", "worker"),
    [
        (CODES, {"annotator": "a"}),  # a named annotator: no platform, no platform code
        ("  annotators_per_document: 3\n", WORKER),  # a Prolific study without codes
        ('  completion_url: "https://example.org/done?code={code}"\n', WORKER),  # sent in the URL
    ],
    ids=["named-annotator", "no-codes", "code-in-the-url"],
)
def test_without_a_platform_code_the_sessions_own_code_is_shown(
    app, client, document, tmp_path, study, worker
):
    use_study(app, tmp_path, study)
    token, answer = finished(client, **worker)
    own = session_of(token).completion_code
    assert answer["shown_code"] == own
    page = client.get(f"/s/{token}/complete").get_data(as_text=True)
    assert f">{own}</code>" in page and "C1A2B3C4" not in page


def test_the_code_waits_for_the_after_survey(app, client, document, tmp_path):
    after = "survey:\n  after:\n    - {key: fine, type: text, text: 'Anything else?'}\n"
    use_study(app, tmp_path, CODES, after)
    token, answer = finished(client, **WORKER)
    assert answer["redirect_url"] == f"/s/{token}/survey/after"
    assert answer["shown_code"] is None  # nobody leaves with the code before the last step
    form = {"csrf_token": capability_csrf_token("annotate", token), "q-fine": ""}
    assert client.post(f"/s/{token}/survey/after", data=form).status_code == 303
    page = client.get(f"/s/{token}/complete?follow=1").get_data(as_text=True)
    assert ">C1A2B3C4</code>" in page


def test_the_early_end_shows_the_outcomes_code_never_the_sessions(app, client, document, tmp_path):
    use_study(app, tmp_path, CODES, "consent: |\n  Take part?\n")
    token = opened(client, **WORKER)
    form = {"csrf_token": capability_csrf_token("annotate", token), "decision": "decline"}
    assert client.post(f"/s/{token}/consent", data=form).status_code in (302, 303)
    page = client.get(f"/s/{token}/end").get_data(as_text=True)
    assert ">CN1M2L3K</code>" in page and f'href="{PROLIFIC}CN1M2L3K"' in page
    assert session_of(token).completion_code not in page  # earned by doing the task
    # A named annotator has no platform code for the outcome: no code at all.
    other = start(client, "doc-1", annotator="b")
    form = {"csrf_token": capability_csrf_token("annotate", other), "decision": "decline"}
    client.post(f"/s/{other}/consent", data=form)
    page = client.get(f"/s/{other}/end").get_data(as_text=True)
    assert "Your completion code" not in page
    assert session_of(other).completion_code not in page
