"""The steps of a worker's study, in order, and the step a session is at.

consent -> before_survey -> training -> task -> after_survey
(docs/contracts.md#the-pages-of-a-session).
A step is *pending* when the taxonomy has it and the session has not got through it; the
session is at its first pending step. Steps the taxonomy does not have are skipped, so a
study without consent, surveys or training is the task alone, as before.

Two ends besides the steps: ENDED, the study ended before the task (the worker declined
consent: outcome `no_consent`; or failed training: `failed_training`), and DONE, every
step passed (the completion page). Every worker page (app.annotate.routes, app.crowd.surveys)
asks `current_step` and sends the worker to `step_url` of where they are, so reloading,
the back button or an old link always lands on the right page.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flask import url_for
from sqlalchemy import select

from app.core.extensions import db
from app.crowd.training.service import training_pending
from app.models import AnnotationSession, ConsentDecision, SurveyAnswer
from app.rules.statuses import SessionStatus
from app.taxonomy import Taxonomy, current_taxonomy

CONSENT = "consent"
BEFORE_SURVEY = "before_survey"
TRAINING = "training"
TASK = "task"
AFTER_SURVEY = "after_survey"
STEPS = (CONSENT, BEFORE_SURVEY, TRAINING, TASK, AFTER_SURVEY)
ENDED = "ended"  # the study ended before the task (no_consent, failed_training, ...)
DONE = "done"  # every step passed: the completion page
# Outcomes that end the study before the task: the worker never sees it.
ENDED_EARLY = ("no_consent", "failed_training")


@dataclass(frozen=True)
class StepFacts:
    """What decides a session's step: the taxonomy's steps and what the session did."""

    has_consent: bool = False
    consent: bool | None = None  # the worker's decision; None: not asked yet
    has_before: bool = False
    before_done: bool = False
    training_pending: bool = False
    submitted: bool = False
    outcome: str | None = None
    has_after: bool = False
    after_done: bool = False


def step_of(facts: StepFacts) -> str:
    """The step a session with these facts is at (one of STEPS, ENDED or DONE). A session
    with an outcome before Submit ended before its task: it declined, failed training, or
    its worker's part in the study had ended already (a failure is final: app.rules.outcomes)."""
    if (facts.outcome is not None and not facts.submitted) or facts.consent is False:
        return ENDED
    if facts.submitted:
        # Steps before the task are not asked after it (a session submitted before the
        # taxonomy gained them, or an imported one): only the after-survey remains.
        return AFTER_SURVEY if facts.has_after and not facts.after_done else DONE
    if facts.has_consent and facts.consent is None:
        return CONSENT
    if facts.has_before and not facts.before_done:
        return BEFORE_SURVEY
    if facts.training_pending:
        return TRAINING
    return TASK


def has_steps_around_task(taxonomy: Taxonomy) -> bool:
    """Whether the taxonomy has any step besides the task (else no query is needed)."""
    return taxonomy.has_steps_around_task


def current_step(session: Any) -> str:
    """The step this session (anything with id, status, outcome, annotator_id,
    platform_params, platform and submission) is at."""
    taxonomy = current_taxonomy()
    submitted = session.status == SessionStatus.SUBMITTED
    facts = StepFacts(
        submitted=submitted,
        outcome=session.outcome,
        training_pending=not submitted and training_pending(session),
    )
    if not has_steps_around_task(taxonomy):
        return step_of(facts)
    consent = db.session.scalar(
        select(ConsentDecision.agreed).where(ConsentDecision.session_id == session.id)
    )
    surveys = set(
        db.session.scalars(
            select(SurveyAnswer.survey).where(SurveyAnswer.session_id == session.id).distinct()
        )
    )
    return step_of(
        StepFacts(
            has_consent=bool(taxonomy.consent),
            consent=consent,
            has_before=bool(taxonomy.survey.before),
            before_done="before" in surveys,
            training_pending=facts.training_pending,
            submitted=submitted,
            outcome=session.outcome,
            has_after=bool(taxonomy.survey.after),
            after_done="after" in surveys,
        )
    )


def step_of_token(token: str) -> tuple[int, str] | None:
    """(session id, step) of the session with this capability token; None when there is
    none. One small query, and none when the taxonomy has no step besides the task."""
    if not has_steps_around_task(current_taxonomy()):
        return None
    row = db.session.execute(
        select(
            AnnotationSession.id,
            AnnotationSession.status,
            AnnotationSession.outcome,
            # training belongs to the worker and the study (a Prolific worker: the submission)
            AnnotationSession.annotator_id,
            AnnotationSession.platform_params,
            AnnotationSession.platform,
            AnnotationSession.submission,
        ).where(AnnotationSession.token == token)
    ).first()
    if row is None:
        return None
    return row.id, current_step(row)


_STEP_PAGES = {
    CONSENT: "surveys.consent",
    BEFORE_SURVEY: "surveys.before_survey",
    TRAINING: "training.practice_page",
    AFTER_SURVEY: "surveys.after_survey",
    ENDED: "surveys.ended",
    DONE: "annotate.complete",
}


def step_url(token: str, step: str) -> str:
    """The page of a step for the session with this token (the task's page for TASK)."""
    return url_for(_STEP_PAGES.get(step, "annotate.session_page"), token=token)


def after_task_url(token: str, outcome: str | None) -> str | None:
    """Where Submit sends the worker before the end: the after-survey when the taxonomy
    has one and the outcome is one reached by doing the task; else None."""
    if outcome in ENDED_EARLY or not current_taxonomy().survey.after:
        return None
    return url_for("surveys.after_survey", token=token)
