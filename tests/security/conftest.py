"""A small world for the security suite: two workers' sessions, a validation round with a
validator, and a researcher; the URL-map helpers that make new routes covered automatically are
in tests/support/routes.py."""

from __future__ import annotations

import json

import pytest

from app.core.extensions import db
from app.imports.document_formats import DocumentInput
from app.imports.document_store import import_documents
from app.models import Document, DocumentUpload
from app.studies import current_study_id, default_study, share
from tests.support.routes import UPLOAD_ID, World
from tests.support.worker_api import body, save, start, token_from

XSS = '<img src=x onerror=alert(1)><script>alert("x")</script>'
PARAGRAPHS = (
    f"Zoë met the keeper {XSS} at dawn.",
    "The ship left the harbour; the keeper waved at the ship.",
)


def _annotate(client, token: str) -> str:
    annotation = body(span={"paragraph_id": 0, "start": 0, "end": 3, "text": "Zoë"}, comment=XSS)
    response = save(client, token, annotation)
    assert response.status_code == 201, response.get_json()
    return annotation["id"]


@pytest.fixture
def world(app, client, runner, tmp_path, researcher) -> World:
    """Import a document, open two sessions with an annotation each, create a round; the
    researcher edits the default study (as the studies migration made every researcher)."""
    share(default_study(), researcher, "editor")
    import_documents([DocumentInput("sec-doc", f"Title {XSS}", PARAGRAPHS, ("Zoë",))])
    owner = start(client, "sec-doc", annotator="owner")
    other = start(client, "sec-doc", annotator="other")
    owner_annotation = _annotate(client, owner)
    other_annotation = _annotate(client, other)

    items = tmp_path / "items.jsonl"
    records = [
        {
            "id": "item-1",
            "source": "gpt-4",
            "document_id": "sec-doc",
            "span": {"text": "keeper waved"},
            "question": f"Why {XSS}?",
            "labels": ["salience"],
        },
        {
            "id": "item-2",
            "source": "human",
            "document_id": "sec-doc",
            "span": {"text": "Zoë"},
            "question": "Who is Zoë?",
            "labels": ["entity omission"],
        },
    ]
    items.write_text("".join(json.dumps(r) + "\n" for r in records))
    result = runner.invoke(args=["validation", "create-round", "sec-round", "--items", str(items)])
    assert result.exit_code == 0, result.output
    # A finished document upload of the default study: /research/studies/default/documents/
    # uploads/<upload_id>.json has one to show (tests/support/routes.py names its id).
    db.session.add(
        DocumentUpload(
            id=UPLOAD_ID,
            study_id=current_study_id(),
            status="done",
            names=["a.jsonl"],
            summary="1 document: 1 new, 0 updated, 0 unchanged",
            problems=[],
        )
    )
    db.session.commit()
    validator = client.get("/validate/sec-round?annotator=validator-1")
    other_validator = client.get("/validate/sec-round?annotator=validator-2")
    return World(
        document_id="sec-doc",
        document_pk=db.session.scalars(db.select(Document.id)).one(),
        owner_token=owner,
        other_token=other,
        owner_annotation=owner_annotation,
        other_annotation=other_annotation,
        round_name="sec-round",
        validator_token=token_from(validator),
        other_validator_token=token_from(other_validator),
    )
