"""Consent decisions and survey answers in the database: write once, read back, export.

Both are written once per session and never changed: a second click, a reload of the
POST or a second tab finds the row the first one stored (the primary keys settle races)
and changes nothing, so re-submitting is idempotent and nothing stored is lost.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError

from app.core.extensions import db
from app.crowd.surveys.answers import answer_text
from app.models import AnnotationSession, Annotator, ConsentDecision, Document, SurveyAnswer
from app.rules.statuses import SessionStatus
from app.studies import current_study_id
from app.taxonomy.surveys import Question, Survey

SURVEY_COLUMNS = (
    "session_id",
    "document_id",
    "annotator_id",
    "platform",
    "survey",
    "question_key",
    "question_type",
    "question_text",
    "answer",
    "answered_at",
)
BATCH = 1000


def consent_version(consent: str) -> str:
    """A short hash naming the exact consent text a worker was shown."""
    return hashlib.sha256(consent.encode("utf-8")).hexdigest()[:16]


def record_consent(session_id: int, agreed: bool, consent: str) -> bool:
    """Store the worker's decision (the first one stands) and return the stored one.

    Declining ends the study: the session gets outcome `no_consent` and is marked
    abandoned, so it holds no place of its document's quota (app.crowd.assignment.claims)."""
    decision = ConsentDecision(
        session_id=session_id, agreed=agreed, consent_version=consent_version(consent)
    )
    try:
        db.session.add(decision)
        db.session.flush()
    except IntegrityError:
        db.session.rollback()  # decided already, by another click or tab: that stands
        return bool(
            db.session.scalar(
                select(ConsentDecision.agreed).where(ConsentDecision.session_id == session_id)
            )
        )
    if not agreed:
        db.session.execute(
            update(AnnotationSession)
            .where(
                AnnotationSession.id == session_id,
                AnnotationSession.status != SessionStatus.SUBMITTED,
            )
            .values(outcome="no_consent", status=SessionStatus.ABANDONED)
        )
    db.session.commit()
    return agreed


def save_survey(
    session_id: int, which: str, questions: tuple[Question, ...], answers: dict[str, Any]
) -> bool:
    """Store a survey's answers, one row per question, all or none; False when the
    session had already answered this survey (the stored answers stand)."""
    db.session.add_all(
        SurveyAnswer(
            session_id=session_id,
            survey=which,
            question_key=question.key,
            question_type=question.type,
            answer=answers.get(question.key),
        )
        for question in questions
    )
    try:
        db.session.commit()
    except IntegrityError:
        db.session.rollback()
        return False
    return True


def answered(session_id: int, which: str) -> bool:
    """Whether the session has answered this survey."""
    query = select(SurveyAnswer.session_id).where(
        SurveyAnswer.session_id == session_id, SurveyAnswer.survey == which
    )
    return db.session.scalar(query.limit(1)) is not None


def _answers_query(document: str | None = None):
    query = (
        select(
            SurveyAnswer,
            Document.external_id,
            Annotator.platform,
            Annotator.external_id,
            AnnotationSession.platform,
        )
        .join(AnnotationSession, SurveyAnswer.session_id == AnnotationSession.id)
        .join(Document, AnnotationSession.document_id == Document.id)
        .join(Annotator, AnnotationSession.annotator_id == Annotator.id)
        .where(AnnotationSession.study_id == current_study_id())
    )
    if document is not None:
        query = query.where(Document.external_id == document)
    return query


def iter_survey_records(survey: Survey, document: str | None = None) -> Iterator[dict[str, Any]]:
    """One record per session and question answered (SURVEY_COLUMNS), by document, session,
    survey (before, then after) and the taxonomy's question order. `question_text` is the
    current taxonomy's wording (empty for a question it no longer has); a blank optional
    answer is an empty `answer`; a multi answer is a JSON array of the options chosen."""
    order = {
        (which, question.key): (index, question)
        for which in ("before", "after")
        for index, question in enumerate(survey.questions(which))
    }
    query = _answers_query(document).order_by(
        Document.external_id, SurveyAnswer.session_id, SurveyAnswer.survey.desc()
    )
    result = db.session.execute(query.execution_options(yield_per=BATCH, stream_results=True))
    group: list[dict[str, Any]] = []
    for answer, document_id, annotator_platform, annotator_id, platform in result:
        index, question = order.get((answer.survey, answer.question_key), (len(order), None))
        record = {
            "session_id": str(answer.session_id),
            "document_id": document_id,
            "annotator_id": f"{annotator_platform}:{annotator_id}",  # as Annotator.label
            "platform": platform,
            "survey": answer.survey,
            "question_key": answer.question_key,
            "question_type": answer.question_type,
            "question_text": question.text if question else "",
            "answer": answer_text(answer.answer),
            "answered_at": answer.answered_at.isoformat() if answer.answered_at else None,
            "_order": (index, answer.question_key),
        }
        db.session.expunge(answer)
        if group and (group[0]["session_id"], group[0]["survey"]) != (
            record["session_id"],
            record["survey"],
        ):
            yield from _sorted(group)
            group = []
        group.append(record)
    yield from _sorted(group)


def _sorted(group: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    group.sort(key=lambda record: record["_order"])
    for record in group:
        del record["_order"]
        yield record


def count_survey_rows(document: str | None = None) -> int:
    """How many rows the surveys export holds."""
    query = (
        select(func.count())
        .select_from(SurveyAnswer)
        .join(AnnotationSession, SurveyAnswer.session_id == AnnotationSession.id)
        .join(Document, AnnotationSession.document_id == Document.id)
        .where(AnnotationSession.study_id == current_study_id())
    )
    if document is not None:
        query = query.where(Document.external_id == document)
    return db.session.scalar(query) or 0


def all_answers() -> list[tuple[str, str, str, Any]]:
    """(survey, question key, question type, answer) of every stored answer, for the
    dashboard's summary (attention-check sessions included: a survey is about the worker)."""
    query = (
        select(
            SurveyAnswer.survey,
            SurveyAnswer.question_key,
            SurveyAnswer.question_type,
            SurveyAnswer.answer,
        )
        .join(AnnotationSession, SurveyAnswer.session_id == AnnotationSession.id)
        .where(AnnotationSession.study_id == current_study_id())
    )
    return [tuple(row) for row in db.session.execute(query)]
