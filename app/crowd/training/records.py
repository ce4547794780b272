"""Training results, read back: one record per attempt ("Check my answers").

`flask export-annotations --what training` (JSONL or CSV) and
/research/export/training.csv. In CSV the `spans` and `feedback` lists are JSON text.
`document_id` is the practice document's id; `found`, `wrong_category`, `missed` and
`extra` count the feedback items (docs/training.md).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from typing import Any

from sqlalchemy import bindparam, func, select

from app.core.extensions import db
from app.models import Annotator, Document, TrainingAttempt
from app.studies import current_study_id

TRAINING_COLUMNS = (
    "session_id",
    "annotator_id",
    "study_id",
    "document_id",
    "attempt",
    "passed",
    "recall",
    "precision",
    "found",
    "wrong_category",
    "missed",
    "extra",
    "annotations",
    "created_at",
    "spans",
    "feedback",
)
BATCH = 1000


_ATTEMPTS = (
    select(TrainingAttempt, Annotator.platform, Annotator.external_id, Document.external_id)
    .join(Annotator, Annotator.id == TrainingAttempt.annotator_id)
    .join(Document, Document.id == TrainingAttempt.document_id)
    .where(Document.study_id == bindparam("study_id"))
    .order_by(TrainingAttempt.session_id, TrainingAttempt.document_id, TrainingAttempt.attempt)
)


def iter_training_records(as_text: bool = False) -> Iterator[dict[str, Any]]:
    """One record per training attempt (TRAINING_COLUMNS), by session, document, attempt;
    `as_text` writes the spans and feedback lists as JSON text (for CSV)."""
    result = db.session.execute(
        _ATTEMPTS.execution_options(yield_per=BATCH, stream_results=True),
        {"study_id": current_study_id()},
    )
    for attempt, platform, external_id, document_id in result:
        kinds = Counter(item.get("kind") for item in attempt.feedback or [])
        spans, feedback = attempt.spans or [], attempt.feedback or []
        yield {
            "session_id": str(attempt.session_id),
            "annotator_id": f"{platform}:{external_id}",
            "study_id": attempt.study_id,
            "document_id": document_id,
            "attempt": attempt.attempt,
            "passed": attempt.passed,
            "recall": attempt.recall,
            "precision": attempt.precision,
            "found": kinds["found"],
            "wrong_category": kinds["wrong_category"],
            "missed": kinds["missed"],
            "extra": kinds["extra"],
            "annotations": len(spans),
            "created_at": attempt.created_at.isoformat() if attempt.created_at else None,
            "spans": json.dumps(spans, ensure_ascii=False) if as_text else spans,
            "feedback": json.dumps(feedback, ensure_ascii=False) if as_text else feedback,
        }
        db.session.expunge(attempt)


def count_training_rows() -> int:
    """How many attempts the training export holds."""
    query = (
        select(func.count(TrainingAttempt.id))
        .join(Document, Document.id == TrainingAttempt.document_id)
        .where(Document.study_id == current_study_id())
    )
    return db.session.scalar(query) or 0
