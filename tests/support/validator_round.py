"""A round for the validator-page tests: one document, three items from two sources (one
paired), created through the real importer."""

from __future__ import annotations

import json
from pathlib import Path

from app.imports.document_formats import DocumentInput
from app.imports.document_store import import_documents
from app.taxonomy import current_taxonomy
from app.validation.rounds import create_round

PARAGRAPHS = (
    "Zoë met 🚢 Łukasz at the harbour. Zoë smiled.",
    "The ship left at dawn. Łukasz waved at the ship.",
    "Later, he said nothing about <b>the ship</b>.",
)
SOURCES = ("hiddensource-one", "hiddensource-two")


def seed_round(live, tmp_path: Path) -> None:
    """A document and a round of three items from two sources (one paired)."""
    items = [
        {
            "id": "q1",
            "source": SOURCES[0],
            "document_id": "voyage",
            "span": {"text": "Łukasz", "paragraph_id": 1},
            "labels": ["new-person"],
            "question": "Who is Łukasz?",
        },
        {
            "id": "q2",
            "source": SOURCES[1],
            "document_id": "voyage",
            "span": {"text": "<b>the ship</b>"},
            "question": "Which ship?",
        },
        {
            "id": "q3",
            "source": SOURCES[0],
            "document_id": "voyage",
            "span": {"text": "Zoë smiled."},
            "paired_span": {"text": "Later, he said nothing"},
            "labels": ["repetition"],
            "comment": "Said twice?",
        },
    ]
    seed_round_of(live, tmp_path, "blind-1", items, seed=3)


def seed_round_of(
    live, tmp_path: Path, name: str, items: list[dict], seed: int, paragraphs=PARAGRAPHS
) -> None:
    """The voyage document (of `paragraphs`) and a round `name` of these items (seeded
    order)."""
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items), "utf-8")
    with live.app.app_context():
        import_documents([DocumentInput("voyage", "A voyage", paragraphs)])
        create_round(name, [path], current_taxonomy(), seed=seed)
