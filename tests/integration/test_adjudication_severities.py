"""Gold carries severity (issue 27, point 5), on SQLite and PostgreSQL: with a taxonomy
that has severities, adjudication shows each mark's severity, Accept keeps the one most
annotators gave, Merge and an own span decide one (checked as a worker's is), and
export-gold writes it (before: `"severity": null` on every gold record)."""

from __future__ import annotations

import json
import re
import uuid

import pytest

from tests.support.adjudication import DOC_ID, seed_graded_document
from tests.support.severities import severity_taxonomy
from tests.support.studies import use_taxonomy

STATE_URL = f"/research/api/documents/{DOC_ID}/adjudication"
JSON = {"Accept": "application/json"}


@pytest.fixture
def graded(app, tmp_path):
    """The adjudication sample under a taxonomy with severities, each mark graded."""
    use_taxonomy(app, severity_taxonomy(tmp_path))
    seed_graded_document()


def decide(client, **body):
    page = client.get(f"/research/documents/{DOC_ID}/adjudicate")
    token = re.search(r'name="csrf-token" content="([^"]+)"', page.text).group(1)
    body.setdefault("id", str(uuid.uuid4()))
    return client.post(f"{STATE_URL}/decisions", json=body, headers={"X-CSRFToken": token, **JSON})


def candidate(client, category: str) -> dict:
    state = client.get(STATE_URL, headers=JSON).get_json()
    return next(c for c in state["candidates"] if c["category"] == category)


def gold(runner) -> dict[str, str | None]:
    result = runner.invoke(args=["export-gold", "--format", "jsonl"])
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in result.output.splitlines()]
    return {record["category"]: record["severity"] for record in records}


def test_adjudication_keeps_and_decides_severities(graded, researcher_client, runner):
    state = researcher_client.get(STATE_URL, headers=JSON).get_json()
    assert [s["key"] for s in state["severities"]] == ["minor", "major"]
    offered = {c["key"]: c["severities"] for c in state["categories"]}
    assert offered["ungrammatical"] == ["minor"] and offered["new-person"] == ["minor", "major"]
    person = candidate(researcher_client, "new-person")
    given = {m["annotator"]: m["severity"] for m in person["marks"]}
    assert given == {"direct:ann-1": "major", "direct:ann-2": "minor", "direct:ann-3": "major"}
    assert person["proposal"]["severity"] == "major"  # two of three said major

    assert decide(researcher_client, candidate=person["key"], decision="accept").status_code == 201
    repetition = candidate(researcher_client, "repetition")["key"]
    merge = {"candidate": repetition, "decision": "merge", "boundary": "direct:ann-1"}
    assert decide(researcher_client, **merge, severity="major").status_code == 201
    mill = candidate(researcher_client, "missing-info")["key"]
    # A severity the category does not offer, or none for an own span: refused as a
    # worker's annotation would be.
    refused = decide(researcher_client, candidate=mill, decision="merge", severity="huge")
    assert refused.status_code == 422 and refused.get_json()["error"]["code"] == "unknown_severity"
    then = {"paragraph_id": 1, "start": 0, "end": 4, "text": "Then"}
    own = {"decision": "own", "category": "abrupt-transition", "span": then}
    missing = decide(researcher_client, **own)
    assert missing.status_code == 422 and missing.get_json()["error"]["code"] == "severity_required"
    assert decide(researcher_client, **own, severity="minor").status_code == 201

    expected = {"new-person": "major", "repetition": "major", "abrupt-transition": "minor"}
    assert gold(runner) == expected
    csv_out = runner.invoke(args=["export-gold", "--format", "csv"]).output.lstrip("\ufeff")
    header, *rows = csv_out.splitlines()
    column = header.split(",").index("severity")
    assert sorted(row.split(",")[column] for row in rows) == ["major", "major", "minor"]
