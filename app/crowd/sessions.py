"""Annotation sessions through the ORM (look up, start or resume) and what the worker's
actions share: the activity rule, the submitted session's 409, the comment limit, the
paragraph texts, Submit's outcome and completion.

The actions themselves are elsewhere: app.annotate.opening (a worker's open, which falls
back to start_or_resume_session here), app.annotate.reads (the page's reads) and
app.annotate.writes (save, remove, move, submit, heartbeat). Races are settled by the
database's unique constraints: `INSERT ... ON CONFLICT DO NOTHING`, and on a conflict
read back the row the other request stored.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any

from flask import url_for
from sqlalchemy import ColumnElement, Integer, ScalarSelect, bindparam, literal_column, or_, select
from sqlalchemy.orm import joinedload

from app.core.extensions import db
from app.core.persistence import get_or_create
from app.crowd.identity import OpenRefused, WorkerIdentity, get_or_create_annotator
from app.crowd.journey import after_task_url
from app.crowd.networks import PlaceRefused, take_network_room
from app.crowd.settings import EffectiveStudySettings, study_settings
from app.models import Annotation, AnnotationSession, Document, Paragraph, utcnow
from app.rules.metrics import attention_flagged, gold_recall
from app.rules.outcomes import FINAL_FAILURES, session_outcome, shown_code
from app.rules.statuses import SessionStatus
from app.studies import remember_session_version
from app.taxonomy import current_taxonomy

TOUCH_INTERVAL = timedelta(minutes=1)


@dataclass(frozen=True)
class Completion:
    """What Submit answers: the completion code, where the worker goes next, the outcome,
    and the code the worker is shown (`shown_code`: the outcome's platform code, the
    session's own where the study has none, None where the redirect alone completes or a
    study step comes first)."""

    completion_code: str
    redirect_url: str
    outcome: str = "completed"
    shown_code: str | None = None

    def to_dict(self) -> dict[str, str | None]:
        """The JSON body of POST /submit."""
        return {
            "completion_code": self.completion_code,
            "redirect_url": self.redirect_url,
            "outcome": self.outcome,
            "shown_code": self.shown_code,
        }


# --- lookup -----------------------------------------------------------------------------


def find_session(token: str) -> AnnotationSession | None:
    """The session this capability token opens (with its document), or None."""
    if not token or len(token) > 64:
        return None
    query = (
        db.select(AnnotationSession)
        .options(joinedload(AnnotationSession.document))
        .filter_by(token=token)
    )
    return db.session.scalars(query).first()


def seen_seconds_ago(last_seen_at: datetime | None) -> float:
    """Seconds since last_seen_at was written (infinite when never)."""
    if last_seen_at is None:
        return math.inf
    return (utcnow() - last_seen_at).total_seconds()


def touch_due(last_seen_at: datetime | None, status: str, outcome: str | None = None) -> bool:
    """Whether a request should record activity: last_seen_at is written at most once a
    minute (abandonment is measured in minutes, and skipping the UPDATE keeps requests to
    a few round trips), and at once when the session was marked abandoned (not when it
    ended before the task: abandoned with an outcome, it stays so: writes.REVIVED_STATUS)."""
    if status == SessionStatus.ABANDONED and outcome is None:
        return True
    return seen_seconds_ago(last_seen_at) >= TOUCH_INTERVAL.total_seconds()


def touch(session: AnnotationSession) -> None:
    """Record activity; a session marked abandoned comes back to life when used again
    (not one that ended before the task)."""
    if touch_due(session.last_seen_at, session.status, session.outcome):
        session.last_seen_at = utcnow()
    if session.status == SessionStatus.ABANDONED and session.outcome is None:
        session.status = SessionStatus.ACTIVE


def record_work(session: AnnotationSession) -> None:
    """Record the session's first real work (a finished step: consent, a survey, a
    training check), written with the caller's commit: from then on it holds its place
    by `claim_minutes` of inactivity alone (app.crowd.assignment.claims)."""
    if session.worked_at is None:
        session.worked_at = utcnow()


def is_submitted(session: AnnotationSession) -> bool:
    """True once the worker has submitted; the session is then read-only."""
    return session.status == SessionStatus.SUBMITTED


# --- failing is final ---------------------------------------------------------------------

_OTHER = AnnotationSession.__table__.alias("other_session")

# SQL: the study of the document a statement binds as `document_id`: a new session's study.
DOCUMENT_STUDY = (
    select(Document.__table__.c.study_id)
    .where(Document.__table__.c.id == bindparam("document_id", type_=Integer))
    .scalar_subquery()
)


def worker_failure(annotator_id: Any, study_id: Any, session_id: Any = None) -> ScalarSelect:
    """SQL: the failed_training or failed_checks outcome of one of this worker's sessions
    in the study (but `session_id`), or NULL. Failing is final for the worker in the
    study: their later sessions there end with the same outcome, on any document; another
    study starts afresh."""
    # Literal values, not an expanding IN: the statements using it are prepared once.
    failed = or_(*(_OTHER.c.outcome == literal_column(f"'{o}'") for o in FINAL_FAILURES))
    query = select(_OTHER.c.outcome).where(
        _OTHER.c.annotator_id == annotator_id, _OTHER.c.study_id == study_id, failed
    )
    if session_id is not None:
        query = query.where(_OTHER.c.id != session_id)
    return query.order_by(_OTHER.c.id).limit(1).scalar_subquery()


def inherits_failures(identity: WorkerIdentity) -> bool:
    """Whether the worker's other sessions' failures carry over to this arrival's session:
    always, but for a Prolific submission, which is the worker in the study by itself
    (app.crowd.submissions: what one SESSION_ID did never touches another)."""
    return not (identity.platform == "prolific" and identity.submission)


def inherits_failures_sql(sessions: Any) -> ColumnElement[bool]:
    """inherits_failures as a condition on a stored session's columns."""
    return or_(sessions.c.platform != "prolific", sessions.c.submission.is_(None))


# --- start / resume ---------------------------------------------------------------------


def new_session_values(identity: WorkerIdentity, is_attention_check: bool) -> dict[str, Any]:
    """The columns of the worker's new session but its document, its annotator, its
    network and what failing decides."""
    return {
        "platform": identity.platform,
        "platform_params": dict(identity.params),
        "taxonomy_version": current_taxonomy().version,
        "is_attention_check": is_attention_check,
        "submission": identity.submission,
        "verification": identity.verification,
    }


def start_or_resume_session(
    document: Document,
    identity: WorkerIdentity,
    *,
    network: str | None = None,
    may_create: bool = True,
) -> AnnotationSession:
    """The one session of this worker on this document, created if new; commits. An
    arrival whose submission has a session already (app.crowd.submissions) gets that one,
    whatever its document: one submission, one session.

    Resuming an existing session needs the request's proof of being its worker
    (WorkerIdentity.may_resume), else OpenRefused and nothing changes. A new one needs
    a document not retired, `may_create` and room in the worker's client network
    (`network`, app.crowd.networks), else PlaceRefused. Safe when the same worker opens
    the link twice at once: the unique constraint on (document, annotator) lets one
    insert win and the other reads that row back. A new session of a worker who failed in
    the study ends at once with that outcome (worker_failure).
    """
    annotator = get_or_create_annotator(identity)
    if identity.submission is not None:
        own = db.session.scalars(
            db.select(AnnotationSession).filter_by(
                annotator_id=annotator.id, submission=identity.submission
            )
        ).first()
        if own is not None:
            return resume_session(own, identity)
    session = db.session.scalars(
        db.select(AnnotationSession).filter_by(document_id=document.id, annotator_id=annotator.id)
    ).first()
    created = False
    if session is None:
        if document.retired_at is not None:  # retired: resumed, never opened anew
            raise PlaceRefused.document_retired()
        if not may_create:
            raise PlaceRefused.start_link()
        take_network_room(network)
        session, created = get_or_create(
            AnnotationSession,
            defaults={
                **new_session_values(identity, document.is_attention_check),
                "network": network,
                "study_id": document.study_id,
            },
            document_id=document.id,
            annotator_id=annotator.id,
        )
    if created:
        remember_session_version(session.token, session.taxonomy_version)
    if not created:
        _resume(session, identity)
    elif inherits_failures(identity):
        failure = db.session.scalar(
            select(worker_failure(annotator.id, session.study_id, session.id))
        )
        if failure is not None:
            session.outcome, session.status = failure, SessionStatus.ABANDONED
    db.session.commit()
    return session


def resume_session(session: AnnotationSession, identity: WorkerIdentity) -> AnnotationSession:
    """Resume this existing session of the worker (OpenRefused without proof); commits."""
    _resume(session, identity)
    db.session.commit()
    return session


def _resume(session: AnnotationSession, identity: WorkerIdentity) -> None:
    if not identity.may_resume("a", session.id, session.platform_params or {}):
        raise OpenRefused.resume()
    # Stored parameters never change (a new MTurk assignment is not this session's).
    params = identity.resumed_params(session.platform_params)
    if params != (session.platform_params or {}):
        session.platform_params = params
    touch(session)


# --- paragraphs and progress ----------------------------------------------------------


@lru_cache(maxsize=128)
def document_texts(document_id: int, content_hash: str) -> tuple[str, ...]:
    """A document's paragraph texts, memoised by content hash. The text under a hash never
    changes (an import that changes it changes the hash), so each process may keep a copy
    and a save needs no query for it."""
    query = (
        db.select(Paragraph.text)
        .where(Paragraph.document_id == document_id)
        .order_by(Paragraph.position)
    )
    return tuple(db.session.scalars(query))


def completion_for(session: AnnotationSession | Any) -> Completion:
    """The completion code, the address to go to after Submit and the outcome (of anything
    with the session's token, platform, completion_code and outcome: a session, a row, a
    view). Next is the after-survey when the taxonomy has one (app.crowd.journey), else the end of
    the study (exit_url)."""
    # Sessions submitted by something other than Submit (imports) may carry no outcome.
    outcome = session.outcome or "completed"
    # The after-survey comes between Submit and the end of the study (app.crowd.journey): the
    # code waits for the end, so that nobody leaves with it before the last questions.
    after = after_task_url(session.token, outcome)
    if after is not None:
        return Completion(session.completion_code, after, outcome, None)
    return Completion(session.completion_code, exit_url(session), outcome, end_code(session))


def end_code(session: AnnotationSession | Any, *, earned: bool = True) -> str | None:
    """The code a worker sees where the study ends (app.rules.outcomes.shown_code): a Prolific
    worker the outcome's platform code (none where the redirect alone completes), everyone
    else the session's own code (MTurk's form posts it, named annotators send it). Not
    `earned` (the study ended before the task): a platform code only."""
    own = session.completion_code if earned else None
    if session.platform != "prolific":
        return own
    template = study_settings().completion_template(session.outcome or "completed")
    return shown_code(template, own)


def exit_url(session: AnnotationSession | Any) -> str:
    """Where the study ends for this session: a Prolific worker goes to the outcome's
    completion URL; everyone else, and a Prolific worker when the study names none, to
    the app's completion page."""
    redirect_url = None
    if session.platform == "prolific":
        outcome = session.outcome or "completed"
        redirect_url = study_settings().completion_address(outcome, session.completion_code)
    return redirect_url or url_for("annotate.complete", token=session.token)


def submit_outcome(
    session_id: int, gold: list[dict] | None, settings: EffectiveStudySettings
) -> str:
    """The outcome of a session submitted now: attention checks decide it only under
    `attention_checks: fail`, by the dashboard's rule (metrics.attention_flagged) on the
    session's live annotations against its document's gold spans."""
    failed = False
    if settings.attention_checks == "fail" and gold:
        query = db.select(
            Annotation.paragraph_id, Annotation.span_start, Annotation.span_end, Annotation.category
        ).where(Annotation.session_id == session_id, Annotation.deleted_at.is_(None))
        spans = [tuple(row) for row in db.session.execute(query)]
        failed = attention_flagged(
            gold_recall(gold, spans), settings.min_gold_recall, settings.min_gold_precision
        )
    return session_outcome(failed_checks=failed, attention_checks=settings.attention_checks)
