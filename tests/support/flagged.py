"""A small study with one worker of each kind the figures leave out (app.crowd.checks.flagged):
`lazy` highlights whole sentences and is flagged by the attention check, `failer` ended
the check with `failed_checks`, `quitter` failed training; `good-1` and `good-2` count.

Sentences (app.rules.metrics): p0 "Anna met Bob." (0-13), "They talked." (14-26); p1
"Then it rained." (0-15).
"""

from __future__ import annotations

import uuid

from app.core.extensions import db
from app.models import (
    AnnotationSession,
    Document,
    Paragraph,
    Suggestion,
    SuggestionRejection,
    utcnow,
)
from app.studies import current_study_id
from tests.support.rows import add_span, direct_annotator

PARAGRAPHS = ["Anna met Bob. They talked.", "Then it rained."]
GOLD = [{"paragraph_id": 0, "start": 0, "end": 4, "category": "new-person"}]
GOOD = ("direct:good-1", "direct:good-2")
LEFT_OUT = [
    {"annotator_id": "direct:failer", "reason": "failed_checks"},
    {"annotator_id": "direct:lazy", "reason": "flagged"},
    {"annotator_id": "direct:quitter", "reason": "failed_training"},
]
ANNA = (0, 0, 4, "new-person")
SENTENCES = [(0, 0, 13, "new-person"), (0, 14, 26, "new-person"), (1, 0, 15, "new-person")]


def document(external_id: str, gold=None) -> Document:
    """A document of PARAGRAPHS (an attention check with `gold`)."""
    row = Document(
        study_id=current_study_id(),
        external_id=external_id,
        content_hash=external_id.ljust(64, "0")[:64],
        paragraph_count=len(PARAGRAPHS),
        gold=gold,
    )
    row.paragraphs = [Paragraph(position=i, text=t) for i, t in enumerate(PARAGRAPHS)]
    db.session.add(row)
    db.session.flush()
    return row


def session(
    doc: Document, worker: str, spans=(), status: str = "submitted", **fields
) -> AnnotationSession:
    """A session of the direct worker `worker` on `doc` with live `spans`."""
    row = AnnotationSession(
        document_id=doc.id,
        annotator_id=direct_annotator(worker).id,
        status=status,
        furthest=len(PARAGRAPHS) - 1,
        position=0,
        taxonomy_version="test",
        platform="direct",
        is_attention_check=bool(doc.gold),
        submitted_at=utcnow() if status == "submitted" else None,
        **fields,
    )
    db.session.add(row)
    db.session.flush()
    for paragraph_id, start, end, category, *suggestion in spans:
        add_span(
            row.id,
            paragraph_id,
            start,
            PARAGRAPHS[paragraph_id][start:end],
            category,
            suggestion_id=suggestion[0] if suggestion else None,
            origin="suggestion-accepted" if suggestion else "worker",
        )
    db.session.flush()
    return row


def seed_flagged_study() -> dict[str, Document]:
    """check-1 (gold "Anna"), doc-1 and doc-2 read by the five workers; a gpt-4 suggestion
    on doc-2 accepted by good-1 and rejected by failer. Committed."""
    check = document("check-1", gold=GOLD)
    for worker in ("good-1", "good-2"):
        session(check, worker, [ANNA])
    session(check, "lazy", [(0, 0, 26, "new-person")])  # the whole paragraph: not located
    session(check, "failer", [], outcome="failed_checks")
    first = document("doc-1")
    for worker in ("good-1", "good-2"):
        session(first, worker, [ANNA])
    session(first, "lazy", SENTENCES)
    second = document("doc-2")
    suggestion = Suggestion(
        study_id=current_study_id(),
        external_id="gpt-4-1",
        source="gpt-4",
        document_id=second.id,
        paragraph_id=1,
        span_start=0,
        span_end=4,
        span_text="Then",
        category="abrupt-transition",
    )
    db.session.add(suggestion)
    db.session.flush()
    session(second, "good-1", [(1, 0, 4, "abrupt-transition", suggestion.id)], arm="show")
    session(second, "good-2", [(1, 0, 4, "abrupt-transition")])
    rejecting = session(second, "failer", [(0, 5, 8, "new-person")], arm="show")
    db.session.add(
        SuggestionRejection(
            session_id=rejecting.id, suggestion_id=suggestion.id, client_id=str(uuid.uuid4())
        )
    )
    session(second, "quitter", [], status="abandoned", outcome="failed_training")
    db.session.commit()
    return {"check-1": check, "doc-1": first, "doc-2": second}
