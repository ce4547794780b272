"""The dashboard's training figures, per practice document (pure arithmetic, then one query).

Definitions (docs/training.md): a *worker* is one annotator in one study (annotator id and
study key); per practice document, `workers` tried it at least once, `passed` have a passed
attempt, `first_try` passed at their first attempt, `failed` used every allowed attempt
without passing, and `mean_attempts` is the mean number of checks of those who passed.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import select

from app.core.extensions import db
from app.models import Document, TrainingAttempt
from app.studies import current_study_id


@dataclass(frozen=True)
class PracticeFigures:
    """One practice document's row on the dashboard."""

    document_id: str
    workers: int
    passed: int
    first_try: int
    failed: int
    mean_attempts: float | None


def summarise(
    attempts: Iterable[tuple[str, tuple[int, str], int, bool]], allowed: int
) -> list[PracticeFigures]:
    """Figures per practice document from (document id, worker, attempt, passed) rows."""
    tries: dict[str, dict[tuple[int, str], list[tuple[int, bool]]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for document_id, worker, attempt, passed in attempts:
        tries[document_id][worker].append((attempt, passed))
    rows = []
    for document_id, workers in tries.items():
        passing = [
            min(a for a, ok in runs if ok) for runs in workers.values() if any(ok for _, ok in runs)
        ]
        failed = sum(
            1 for runs in workers.values() if not any(ok for _, ok in runs) and len(runs) >= allowed
        )
        rows.append(
            PracticeFigures(
                document_id=document_id,
                workers=len(workers),
                passed=len(passing),
                first_try=sum(1 for attempt in passing if attempt == 1),
                failed=failed,
                mean_attempts=sum(passing) / len(passing) if passing else None,
            )
        )
    return sorted(rows, key=lambda row: row.document_id)


def load_practice_figures(allowed: int) -> list[PracticeFigures]:
    """Every practice document's figures, from all stored attempts."""
    query = select(
        Document.external_id,
        TrainingAttempt.annotator_id,
        TrainingAttempt.study_key,
        TrainingAttempt.attempt,
        TrainingAttempt.passed,
    ).join(Document, Document.id == TrainingAttempt.document_id)
    rows = db.session.execute(query.where(Document.study_id == current_study_id()))
    return summarise(((doc, (ann, key), n, ok) for doc, ann, key, n, ok in rows), allowed)
