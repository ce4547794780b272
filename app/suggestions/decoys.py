"""Decoy suggestions (`import-suggestions --decoy`): how often workers take them, and each
session's decisions on the real ones (the suggestion arms' accepted share).

A decoy is *shown* once to every submitted session in the show arm on its document (the
task lists every suggestion of the document and asks for a decision on each before the
worker moves on); it is *taken* when the session's standing annotation was made from it
by Accept or Edit. Attention checks and the workers left out of the figures
(app.crowd.checks.flagged) are not counted, as in every figure. The rate and its Wilson
interval are app.analysis.arm_effects' (docs/analyses.md).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable

from sqlalchemy import func, select

from app.core.extensions import db
from app.models import Annotation, AnnotationSession, Annotator, Suggestion, SuggestionRejection
from app.rules.statuses import SessionStatus
from app.studies import current_study_id

SHOW = "show"


def _counted_sessions(left_out: Iterable[int]):
    """Submitted show-arm sessions on regular documents of the workers the figures count."""
    query = select(
        AnnotationSession.id,
        AnnotationSession.document_id,
        (Annotator.platform + ":" + Annotator.external_id).label("worker"),
    ).join(Annotator, Annotator.id == AnnotationSession.annotator_id)
    query = query.where(
        AnnotationSession.study_id == current_study_id(),
        AnnotationSession.status == SessionStatus.SUBMITTED,
        AnnotationSession.arm == SHOW,
        AnnotationSession.is_attention_check.is_(False),
    )
    left_out = sorted(left_out)
    if left_out:
        query = query.where(AnnotationSession.annotator_id.not_in(left_out))
    return query.subquery()


def decoy_counts(left_out: Iterable[int] = ()) -> dict[str, tuple[int, int]]:
    """Per worker (`platform:id`): (decoys shown, decoys taken), over the counted sessions
    (module docstring); workers who were shown no decoy are not listed."""
    sessions = _counted_sessions(left_out)
    per_document = dict(
        db.session.execute(
            select(Suggestion.document_id, func.count())
            .where(Suggestion.study_id == current_study_id(), Suggestion.decoy.is_(True))
            .group_by(Suggestion.document_id)
        ).all()
    )
    shown: Counter[str] = Counter()
    for document_id, worker in db.session.execute(
        select(sessions.c.document_id, sessions.c.worker)
    ):
        shown[worker] += per_document.get(document_id, 0)
    taken_query = (
        select(sessions.c.worker, func.count(func.distinct(Annotation.suggestion_id)))
        .select_from(Annotation)
        .join(sessions, sessions.c.id == Annotation.session_id)
        .join(Suggestion, Suggestion.id == Annotation.suggestion_id)
        .where(Annotation.deleted_at.is_(None), Suggestion.decoy.is_(True))
        .group_by(sessions.c.worker)
    )
    taken = dict(db.session.execute(taken_query).all())
    return {
        worker: (count, taken.get(worker, 0)) for worker, count in sorted(shown.items()) if count
    }


def session_decisions(session_ids: Iterable[int]) -> dict[int, tuple[int, int]]:
    """Per session: (real suggestions taken, real suggestions decided), standing decisions
    only (accepted or edited annotations not removed, rejections not withdrawn); decoys
    are left out (they are measured on their own)."""
    ids = sorted(set(session_ids))
    if not ids:
        return {}
    taken_query = (
        select(Annotation.session_id, func.count(func.distinct(Annotation.suggestion_id)))
        .join(Suggestion, Suggestion.id == Annotation.suggestion_id)
        .where(
            Annotation.session_id.in_(ids),
            Annotation.deleted_at.is_(None),
            Suggestion.decoy.is_(False),
        )
        .group_by(Annotation.session_id)
    )
    rejected_query = (
        select(SuggestionRejection.session_id, func.count())
        .join(Suggestion, Suggestion.id == SuggestionRejection.suggestion_id)
        .where(
            SuggestionRejection.session_id.in_(ids),
            SuggestionRejection.withdrawn_at.is_(None),
            Suggestion.decoy.is_(False),
        )
        .group_by(SuggestionRejection.session_id)
    )
    counts: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for session_id, count in db.session.execute(taken_query):
        counts[session_id][0] += count
        counts[session_id][1] += count
    for session_id, count in db.session.execute(rejected_query):
        counts[session_id][1] += count
    return {session_id: (taken, decided) for session_id, (taken, decided) in counts.items()}
