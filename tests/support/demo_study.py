"""A small study on the demo documents (data/demo), made through the worker API, so that
screenshots and console tests show what a real study looks like."""

from __future__ import annotations

import random
import re
import uuid
from pathlib import Path

from app.core.security import capability_csrf_token
from app.imports.document_formats import parse_documents
from app.imports.document_store import import_documents
from app.taxonomy import current_taxonomy
from tests.support.worker_api import token_from

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo"
WORD = re.compile(r"\w+(?: \w+){0,3}")


def import_demo(app) -> list[str]:
    """Import data/demo as `make run` does; the document ids."""
    with app.app_context():
        inputs = parse_documents(DEMO)
        import_documents(inputs)
        return [doc.external_id for doc in inputs]


def seed_demo_study(app, workers: int = 3, seed: int = 1) -> None:
    """Each of `workers` annotators works through every demo document with the worker API,
    marking up to two spans per paragraph (singleton categories); all submit but the last
    worker on the first document."""
    rng = random.Random(seed)
    documents = import_demo(app)
    client = app.test_client()
    with app.app_context():
        keys = [c.key for c in current_taxonomy().categories if not c.is_paired]
    for w in range(workers):
        for d, document in enumerate(documents):
            opened = client.get(f"/annotate/{document}?annotator=demo-{w + 1:02d}")
            token = token_from(opened)
            with app.app_context():
                headers = {"X-CSRFToken": capability_csrf_token("annotate", token)}
            state = client.get(f"/api/sessions/{token}").get_json()
            total = state["document"]["total_paragraphs"]
            for position in range(total):
                if position:
                    moved = client.put(
                        f"/api/sessions/{token}/position",
                        json={"paragraph_id": position},
                        headers=headers,
                    ).get_json()
                    text = next(
                        p["text"] for p in moved["paragraphs"] if p["paragraph_id"] == position
                    )
                else:
                    text = state["document"]["paragraphs"][0]["text"]
                for match in rng.sample(list(WORD.finditer(text)), k=rng.randint(0, 2)):
                    key = rng.choice(keys)
                    body = {
                        "id": str(uuid.UUID(int=rng.getrandbits(128))),
                        "category": key,
                        "span": {
                            "paragraph_id": position,
                            "start": match.start(),
                            "end": match.end(),
                            "text": match.group(0),
                        },
                        "paired_span": None,
                        "comment": None,
                    }
                    client.post(f"/api/sessions/{token}/annotations", json=body, headers=headers)
            if not (w == workers - 1 and d == 0):
                client.post(f"/api/sessions/{token}/submit", json={}, headers=headers)
