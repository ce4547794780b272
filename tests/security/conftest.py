"""A small world for the security suite: two workers' sessions, a validation round with a
validator, and a researcher; plus the URL-map helpers that make new routes covered
automatically (a route the suite cannot classify fails the suite)."""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass

import pytest

from app.document_formats import DocumentInput
from app.documents import import_documents
from app.extensions import db
from app.models import AnnotationSession, Document
from app.security import capability_csrf_token

XSS = '<img src=x onerror=alert(1)><script>alert("x")</script>'
PARAGRAPHS = (
    f"Zoë met the keeper {XSS} at dawn.",
    "The ship left the harbour; the keeper waved at the ship.",
)


@dataclass
class World:
    """Everything a route might need, per actor."""

    document_id: str
    document_pk: int
    owner_token: str
    other_token: str
    owner_annotation: str
    other_annotation: str
    round_name: str
    validator_token: str
    other_validator_token: str


def _start(client, document_id: str, who: str) -> str:
    response = client.get(f"/annotate/{document_id}?annotator={who}")
    assert response.status_code == 302, response.status_code
    return response.headers["Location"].rsplit("/", 1)[-1]


def _annotate(client, token: str) -> str:
    annotation_id = str(uuid.uuid4())
    response = client.post(
        f"/api/sessions/{token}/annotations",
        json={
            "id": annotation_id,
            "category": "ungrammatical",
            "span": {"paragraph_id": 0, "start": 0, "end": 3, "text": "Zoë"},
            "paired_span": None,
            "comment": XSS,
        },
        headers={"X-CSRFToken": capability_csrf_token("annotate", token)},
    )
    assert response.status_code == 201, response.get_json()
    return annotation_id


@pytest.fixture
def world(app, client, runner, tmp_path) -> World:
    """Import a document, open two sessions with an annotation each, create a round."""
    import_documents([DocumentInput("sec-doc", f"Title {XSS}", PARAGRAPHS, ("Zoë",))])
    owner = _start(client, "sec-doc", "owner")
    other = _start(client, "sec-doc", "other")
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
        validator_token=validator.headers["Location"].rsplit("/", 1)[-1],
        other_validator_token=other_validator.headers["Location"].rsplit("/", 1)[-1],
    )


def route_family(rule: str) -> str:
    """Which access rules apply to a URL rule. New prefixes must be classified here."""
    if rule.startswith("/research/login"):
        return "public"
    if rule.startswith("/research/"):
        return "researcher"
    if rule.startswith(("/api/sessions/<token>", "/s/<token>")):
        return "worker-token"
    if rule.startswith(("/api/validators/<token>", "/v/<token>")):
        return "validator-token"
    if rule in {"/", "/healthz", "/start", "/api/openapi.json"} or rule.startswith(
        ("/annotate/<", "/id=<", "/validate/<", "/static/")
    ):
        return "public"
    raise AssertionError(f"route {rule} is not classified in tests/security/conftest.py")


def url_for_rule(rule: str, world: World, *, token: str | None = None) -> str:
    """Fill a rule's variables with the world's values (or `token` for <token>)."""
    family = route_family(rule)
    default_token = world.validator_token if family == "validator-token" else world.owner_token
    values = {
        "token": token or default_token,
        "document_id": world.document_id,
        "annotation_id": world.owner_annotation,
        "suggestion_id": "no-such-suggestion",  # the checks answer before the lookup
        "round_name": world.round_name,
        "name": world.round_name,
        "filename": "css/base.css",
    }

    def fill(match: re.Match) -> str:
        converter, _, name = match.group(1).rpartition(":")
        if converter == "int" and name == "document_id":
            return str(world.document_pk)
        if converter == "int" and name == "session_id":  # the owner's session, by its pk
            owner = db.select(AnnotationSession.id).filter_by(token=world.owner_token)
            return str(db.session.scalar(owner))
        if name not in values:
            raise AssertionError(f"no sample value for <{name}> in {rule}")
        return str(values[name])

    return re.sub(r"<([^>]+)>", fill, rule)


def rules(app):
    """Every URL rule with its methods (without HEAD/OPTIONS)."""
    for rule in app.url_map.iter_rules():
        yield rule.rule, sorted(rule.methods - {"HEAD", "OPTIONS"})
