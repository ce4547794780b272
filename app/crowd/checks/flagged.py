"""Which workers a study leaves out, and why: defined once, here.

A worker is **flagged by checks** when a session of theirs ended with the outcome
`failed_checks` (a missed check under `attention_checks: fail`), or when their submitted
attention checks, taken together, fall below a threshold: app.rules.metrics.attention_flagged
on the sum of app.rules.metrics.gold_recall over them (ATTENTION_CHECK_MIN_RECALL and
ATTENTION_CHECK_MIN_PRECISION, app.crowd.settings), the dashboard's rule, matching spans by
app.rules.spans.locates. A worker is **left out** when flagged by checks or when a session of
theirs ended with `failed_training`; the reason is the first that holds of
`failed_checks`, `failed_training` and `flagged` (the thresholds alone).

Who follows it:
- GET /start hands a worker flagged by checks no more documents (app.crowd.assignment.service);
- every study figure (the dashboard, `flask study-report`, `flask agreement`) leaves the
  sessions of workers left out unless asked to count them (`--include-flagged`, the
  dashboard's switch), and study-report lists them under `excluded.annotators`;
- `validation create-round` leaves out the annotations of these workers' sessions;
- the annotation and session exports keep them, with `flagged: true`.

Attention checks are the documents with gold spans, but the practice documents of
training (app.crowd.training), which are no part of the study. Everything here is about
the current study (app.studies): a worker left out of one study counts in another.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import String, and_, case, cast, func, or_, select

from app.core.extensions import db
from app.crowd.settings import EffectiveStudySettings
from app.models import Annotation, AnnotationSession, Annotator, Document
from app.rules import metrics
from app.rules.metrics import GoldRecall
from app.rules.statuses import SessionStatus
from app.studies import current_study_id
from app.taxonomy import current_taxonomy

FAILED_CHECKS, FAILED_TRAINING, FLAGGED = "failed_checks", "failed_training", "flagged"
REASONS = (FAILED_CHECKS, FAILED_TRAINING, FLAGGED)
BY_CHECKS = frozenset((FAILED_CHECKS, FLAGGED))


@dataclass(frozen=True)
class LeftOut:
    """A worker the study's figures leave out: database id, "platform:id", reason."""

    annotator_id: int
    label: str
    reason: str

    @property
    def by_checks(self) -> bool:
        """Flagged by attention checks (failed_checks or flagged), not failed training."""
        return self.reason in BY_CHECKS

    def as_report(self) -> dict[str, str]:
        """study-report's `excluded.annotators` entry."""
        return {"annotator_id": self.label, "reason": self.reason}


def left_out_reason(
    outcomes: Iterable[str | None], gold: GoldRecall, min_recall: float, min_precision: float
) -> str | None:
    """Why a worker is left out (REASONS), from their sessions' outcomes and their gold
    score on submitted attention checks; None when they count."""
    ended = set(outcomes)
    if FAILED_CHECKS in ended:
        return FAILED_CHECKS
    if FAILED_TRAINING in ended:
        return FAILED_TRAINING
    if metrics.attention_flagged(gold, min_recall, min_precision):
        return FLAGGED
    return None


def _is_check():
    # A document with gold spans; practice documents carry gold too but are not the study's.
    practice = list(current_taxonomy().training.documents)
    return and_(Document.gold.is_not(None), Document.external_id.not_in(practice))


def left_out_workers(
    settings: EffectiveStudySettings, annotator_id: int | None = None
) -> dict[int, LeftOut]:
    """The workers left out (or only `annotator_id`), by annotator database id, sorted by
    label.

    One query whatever the study's size: the sessions that decide (ended with a failed
    outcome, or submitted on an attention check), each with its live spans packed
    "paragraph:start:end:category;..." by the database (app.research.dashboard's form)."""
    spans = _packed_spans()
    failed = AnnotationSession.outcome.in_((FAILED_CHECKS, FAILED_TRAINING))
    submitted_check = and_(AnnotationSession.status == SessionStatus.SUBMITTED, _is_check())
    query = (
        select(
            AnnotationSession.annotator_id,
            Annotator.platform,
            Annotator.external_id,
            AnnotationSession.outcome,
            AnnotationSession.status,
            Document.gold,
            case((submitted_check, spans)),
        )
        .join(Annotator, Annotator.id == AnnotationSession.annotator_id)
        .join(Document, Document.id == AnnotationSession.document_id)
        .where(AnnotationSession.study_id == current_study_id(), or_(failed, submitted_check))
    )
    if annotator_id is not None:
        query = query.where(AnnotationSession.annotator_id == annotator_id)
    labels: dict[int, str] = {}
    outcomes: dict[int, list[str | None]] = defaultdict(list)
    scores: dict[int, GoldRecall] = defaultdict(lambda: metrics.NO_GOLD)
    for worker, platform, external_id, outcome, status, gold, marked in db.session.execute(query):
        labels[worker] = f"{platform}:{external_id}"
        outcomes[worker].append(outcome)
        if status == SessionStatus.SUBMITTED and gold:
            scores[worker] += metrics.gold_recall(gold, _unpack(marked))
    found = {}
    for worker, label in labels.items():
        reason = left_out_reason(
            outcomes[worker],
            scores[worker],
            settings.min_gold_recall,
            settings.min_gold_precision,
        )
        if reason is not None:
            found[worker] = LeftOut(worker, label, reason)
    return dict(sorted(found.items(), key=lambda item: item[1].label))


def _packed_spans():
    """A session's live spans packed "paragraph:start:end:category;..." by the database."""
    packed = (
        cast(Annotation.paragraph_id, String)
        + ":"
        + cast(Annotation.span_start, String)
        + ":"
        + cast(Annotation.span_end, String)
        + ":"
        + Annotation.category
    )
    return (
        select(func.aggregate_strings(packed, ";"))
        .where(Annotation.session_id == AnnotationSession.id, Annotation.deleted_at.is_(None))
        .scalar_subquery()
    )


def gold_found_per_session() -> dict[int, int]:
    """Session id -> the gold (planted) errors its worker found on a submitted attention
    check (`GoldRecall.found_same_category`, the rule of the flags above); one query."""
    query = (
        select(AnnotationSession.id, Document.gold, _packed_spans())
        .join(Document, Document.id == AnnotationSession.document_id)
        .where(
            AnnotationSession.study_id == current_study_id(),
            AnnotationSession.status == SessionStatus.SUBMITTED,
            _is_check(),
        )
    )
    return {
        session: metrics.gold_recall(gold, _unpack(marked)).found_same_category
        for session, gold, marked in db.session.execute(query)
        if gold
    }


def _unpack(packed: str | None) -> list[tuple[int, int, int, str]]:
    """ "p:start:end:category;..." -> [(p, start, end, category), ...]."""
    if not packed:
        return []
    spans = []
    for item in packed.split(";"):
        paragraph_id, start, end, category = item.split(":", 3)
        spans.append((int(paragraph_id), int(start), int(end), category))
    return spans


def flagged_by_checks(settings: EffectiveStudySettings, annotator_id: int) -> bool:
    """Whether this worker is flagged by attention checks (GET /start stops here)."""
    found = left_out_workers(settings, annotator_id).get(annotator_id)
    return found is not None and found.by_checks
