"""Training through the database: the practice documents, where a worker is, attempts.

A worker's training belongs to the study, not to one session: "the same study" is the
same taxonomy `title` and the same platform study id (Prolific's STUDY_ID; none for other
platforms), hashed into `training_attempts.study_key`. A worker who passed every practice
document in the study is not trained again, whichever document they get next; one who
used up the attempts on a document has failed the study, and every session of theirs in
it ends with `failed_training` (status abandoned, as a declined consent's `no_consent`:
it holds no place of its document's quota and no study figure counts it; the outcome
keeps every worker page on the end of the study, app.crowd.journey).
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError
from sqlalchemy import case, func, select
from sqlalchemy.exc import IntegrityError

from app.core.errors import ApiError
from app.core.extensions import db
from app.core.request_json import validation_error
from app.crowd.training.feedback import Answer, CheckResult, PassRule, check_answers, summarise
from app.models import AnnotationSession, Document, Paragraph, TrainingAttempt
from app.rules.annotation import AnnotationIn, check_rules
from app.rules.spans import SpanError
from app.rules.statuses import SessionStatus
from app.studies import current_study_id
from app.taxonomy import Taxonomy, current_taxonomy, max_comment_length

FAILED_TRAINING = "failed_training"
MAX_ANSWERS = 500  # practice documents are short: more is a broken or hostile client
log = logging.getLogger(__name__)


def study_key(title: str, study_id: str | None) -> str:
    """The study a training result belongs to: the taxonomy title and the platform study id."""
    return hashlib.sha256(f"{title}\n{study_id or ''}".encode()).hexdigest()[:32]


def platform_study_id(params: dict[str, Any] | None) -> str | None:
    """The platform's study id among a session's parameters (Prolific STUDY_ID), if any."""
    value = (params or {}).get("study_id")
    return value if isinstance(value, str) and value else None


def training_submission(session: Any) -> str:
    """The submission a worker's training belongs to besides the study: a Prolific
    session's SESSION_ID (app.crowd.submissions: nothing done under one SESSION_ID counts for
    another), "" for every other worker (their training is the worker's in the study)."""
    if session.platform == "prolific":
        return session.submission or ""
    return ""


@dataclass(frozen=True)
class PracticeDocument:
    """One practice document as training uses it (no metadata)."""

    id: int
    external_id: str
    title: str | None
    texts: tuple[str, ...]
    gold: tuple[dict[str, Any], ...]


def training_document_ids(taxonomy: Taxonomy | None = None) -> tuple[str, ...]:
    """External ids of the taxonomy's practice documents (never assigned, never counted)."""
    return (taxonomy or current_taxonomy()).training.documents


def practice_documents(taxonomy: Taxonomy | None = None) -> list[PracticeDocument]:
    """The practice documents that are imported and carry gold spans, in the taxonomy's
    order; one that is missing or has no gold spans is left out (and logged: the research
    console's taxonomy page names it)."""
    ids = training_document_ids(taxonomy)
    if not ids:
        return []
    rows = db.session.execute(
        select(Document.id, Document.external_id, Document.title, Document.gold).where(
            Document.study_id == current_study_id(), Document.external_id.in_(ids)
        )
    ).all()
    by_id = {row.external_id: row for row in rows}
    texts: dict[int, list[str]] = {row.id: [] for row in rows}
    query = (
        select(Paragraph.document_id, Paragraph.text)
        .where(Paragraph.document_id.in_(list(texts)))
        .order_by(Paragraph.document_id, Paragraph.position)
    )
    for document_id, text in db.session.execute(query):
        texts[document_id].append(text)
    documents = []
    for external_id in ids:
        row = by_id.get(external_id)
        if row is None or not row.gold:
            log.warning("training document %r is not imported or has no gold spans", external_id)
            continue
        documents.append(
            PracticeDocument(
                row.id, row.external_id, row.title, tuple(texts[row.id]), tuple(row.gold)
            )
        )
    return documents


def document_problems(taxonomy: Taxonomy) -> list[str]:
    """What is wrong with the configured practice documents (for the research console)."""
    problems = []
    ids = training_document_ids(taxonomy)
    found = {
        row.external_id: row.gold
        for row in db.session.execute(
            select(Document.external_id, Document.gold).where(
                Document.study_id == current_study_id(), Document.external_id.in_(ids)
            )
        )
    }
    for external_id in ids:
        gold = found.get(external_id, False)
        if gold is False:
            problems.append(f"{external_id}: not imported (flask import-documents)")
        elif not gold:
            problems.append(f"{external_id}: has no gold spans, so it cannot be checked")
        else:
            unknown = sorted({g.get("category") for g in gold} - set(taxonomy.keys))
            if unknown:
                problems.append(f"{external_id}: gold categories not in the taxonomy: {unknown}")
            missing = sum(1 for g in gold if not g.get("explanation"))
            if missing:
                problems.append(f"{external_id}: {missing} gold span(s) without an explanation")
    return problems


@dataclass(frozen=True)
class TrainingState:
    """Where a worker stands in the study's training."""

    documents: tuple[PracticeDocument, ...]
    passed: frozenset[int]  # practice document ids passed in this study
    used: dict[int, int]  # attempts used per practice document in this study
    attempts: int  # allowed per document

    @property
    def current(self) -> PracticeDocument | None:
        """The practice document to do next (None once every one is passed)."""
        return next((d for d in self.documents if d.id not in self.passed), None)

    @property
    def failed(self) -> bool:
        """A document's attempts are used up without passing it."""
        return any(
            self.used.get(d.id, 0) >= self.attempts and d.id not in self.passed
            for d in self.documents
        )

    @property
    def done(self) -> bool:
        """Every practice document passed (or there is none)."""
        return self.current is None

    def attempts_left(self, document: PracticeDocument) -> int:
        """Checks still allowed on this document."""
        return max(self.attempts - self.used.get(document.id, 0), 0)


def training_state(session: AnnotationSession) -> TrainingState:
    """The worker's training in the session's study (all their sessions in it count)."""
    taxonomy = current_taxonomy()
    documents = tuple(practice_documents(taxonomy))
    key = study_key(taxonomy.title, platform_study_id(session.platform_params))
    rows = db.session.execute(
        select(
            TrainingAttempt.document_id,
            func.count(TrainingAttempt.id),
            func.max(case((TrainingAttempt.passed, 1), else_=0)),
        )
        .where(
            TrainingAttempt.annotator_id == session.annotator_id,
            TrainingAttempt.study_key == key,
            TrainingAttempt.submission == training_submission(session),
        )
        .group_by(TrainingAttempt.document_id)
    ).all()
    return TrainingState(
        documents=documents,
        passed=frozenset(document_id for document_id, _, passed in rows if passed),
        used={document_id: count for document_id, count, _ in rows},
        attempts=taxonomy.training.attempts,
    )


def training_pending(session: AnnotationSession) -> bool:
    """Whether the worker must still practise before this session's task: the taxonomy
    asks for training, the session is open, and the worker has not passed it in this study
    (a worker who failed it is pending too: the training page ends their session)."""
    if not current_taxonomy().training.enabled or session.outcome is not None:
        return False
    return not training_state(session).done


def end_with_failed_training(session: AnnotationSession) -> None:
    """End the session with the failed_training outcome: the worker never sees the task."""
    if session.outcome is None and session.status != SessionStatus.SUBMITTED:
        session.outcome = FAILED_TRAINING
        session.status = SessionStatus.ABANDONED


@dataclass(frozen=True)
class Checked:
    """One attempt's answer to the page."""

    document: PracticeDocument
    attempt: int
    result: CheckResult
    attempts_left: int
    finished: bool  # every practice document passed: the task comes next
    failed: bool  # the study ends here with failed_training

    @property
    def revealed(self) -> bool:
        """Whether the answer shows where the errors are and why: after a pass or the last
        check; before, counts only (app.crowd.training.feedback.summarise)."""
        return self.result.passed or self.attempts_left == 0

    def to_dict(self) -> dict[str, Any]:
        """The JSON body of POST /api/sessions/<token>/training."""
        return {
            "document_id": self.document.external_id,
            "attempt": self.attempt,
            "passed": self.result.passed,
            "recall": self.result.recall,
            "precision": self.result.precision,
            "revealed": self.revealed,
            "summary": summarise(self.result.feedback),
            "feedback": self.result.feedback if self.revealed else [],
            "attempts_left": self.attempts_left,
            "finished": self.finished,
            "failed": self.failed,
        }


def parse_answers(body: Any, document: PracticeDocument) -> list[AnnotationIn]:
    """The practice annotations of a request body, each checked by the span rules against
    the practice text (every paragraph is shown at once: all count as reached)."""
    if not isinstance(body, dict) or set(body) != {"document_id", "annotations"}:
        raise ApiError.unprocessable(
            'Send {"document_id": ..., "annotations": [...]}.', code="invalid_body"
        )
    if body["document_id"] != document.external_id:
        raise ApiError(
            409,
            "not_current_practice",
            "This practice text was already checked; reload the page for the next step.",
        )
    items = body["annotations"]
    if not isinstance(items, list) or len(items) > MAX_ANSWERS:
        raise ApiError.unprocessable(
            f"annotations must be a list of at most {MAX_ANSWERS}.", field="annotations"
        )
    texts = dict(enumerate(document.texts))
    answers = []
    for index, item in enumerate(items):
        try:
            answer = AnnotationIn.model_validate(item)
        except ValidationError as exc:
            raise validation_error(exc) from None
        try:
            # Practice is about the spans: no comment or severity is asked for.
            check_rules(
                answer,
                texts,
                len(document.texts) - 1,
                taxonomy=current_taxonomy(),
                max_comment_length=max_comment_length(),
                comment_required=False,
                severity=False,
            )
        except SpanError as error:
            field = f"annotations[{index}].{error.field}"
            raise ApiError.unprocessable(error.message, code=error.code, field=field) from None
        answers.append(answer)
    return answers


def check_attempt(session: AnnotationSession, body: Any) -> Checked:
    """Check the worker's practice annotations on the current practice document, store
    the attempt, end the session with failed_training when the last attempt fails; commits."""
    taxonomy = current_taxonomy()
    state = training_state(session)
    document = state.current
    if session.outcome is not None or document is None or state.failed:
        raise ApiError(409, "training_over", "Training is over for this task; reload the page.")
    answers = parse_answers(body, document)
    rule = PassRule(taxonomy.training.min_recall, taxonomy.training.min_precision)
    result = check_answers(
        document.gold,
        [Answer(a.id, a.span.paragraph_id, a.span.start, a.span.end, a.category) for a in answers],
        document.texts,
        rule,
    )
    attempt = state.used.get(document.id, 0) + 1
    study_id = platform_study_id(session.platform_params)
    db.session.add(
        TrainingAttempt(
            session_id=session.id,
            annotator_id=session.annotator_id,
            study_key=study_key(taxonomy.title, study_id),
            study_id=study_id,
            submission=training_submission(session),
            document_id=document.id,
            attempt=attempt,
            spans=[answer.model_dump() for answer in answers],
            feedback=result.feedback,
            recall=result.recall,
            precision=result.precision,
            passed=result.passed,
        )
    )
    left = max(state.attempts - attempt, 0)
    failed = not result.passed and left == 0
    if failed:
        end_with_failed_training(session)
    try:
        db.session.commit()
    except IntegrityError:
        # Another check of this worker's in the study took this attempt's number at the
        # same moment (twice the same check, or checks from several of their sessions):
        # that one was stored and counts; this one stores nothing.
        db.session.rollback()
        raise ApiError(
            409, "already_checked", "These answers were already checked; reload the page."
        ) from None
    passed = state.passed | ({document.id} if result.passed else set())
    finished = all(d.id in passed for d in state.documents)
    return Checked(document, attempt, result, left, finished, failed)
