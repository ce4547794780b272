"""One platform submission, one session; a Prolific participant bound to the first
submission they arrive with in a study (issue 26 points 1-2, issue 27 point 2;
docs/identity.md).

A Prolific arrival names a submission (PROLIFIC_PID, STUDY_ID, SESSION_ID: Prolific's
SESSION_ID is the submission's id), an MTurk arrival an assignment (workerId,
assignmentId). `admit` decides what an arrival may open before any session is made:

- The study: with the taxonomy's `study.prolific_study_id`, a Prolific arrival with
  another STUDY_ID, or none, is refused; production (REQUIRE_PROLIFIC_STUDY_ID) refuses
  Prolific arrivals without that setting, and without a SESSION_ID.
- One submission, one session: the submission's session (`annotation_sessions.submission`,
  unique per annotator), whatever its step or document, is the one the arrival goes to;
  a submission never gets a second document (signed `annotator=` links, which name no
  submission, still get several).
- A new Prolific submission: with PROLIFIC_API_TOKEN, Prolific's API is asked first
  (app.prolific_api): a submission that is not the participant's open one in the study is
  refused; no answer in time lets the worker in, the session marked `unverified`. Then
  first binding wins (`submission_bindings`, whose primary key lets one arrival bind the
  participant in the study): another SESSION_ID of a bound PROLIFIC_PID opens nothing and
  is recorded in `identity_conflicts` for the dashboard, where a researcher may **Allow**
  it (it then opens a session of its own) or **Keep refused** it.

So nothing done under one SESSION_ID (consent, training, the outcome, a heartbeat)
touches another's session or decides which session /start resumes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from flask import current_app
from sqlalchemy import bindparam, select, update
from sqlalchemy.orm import joinedload

from app.extensions import db
from app.identity import OpenRefused, WorkerIdentity, get_or_create_annotator
from app.models import (
    AnnotationSession,
    Annotator,
    IdentityConflict,
    Researcher,
    SubmissionBinding,
    utcnow,
)
from app.persistence import get_or_create
from app.platforms import REFUSED
from app.prolific_api import api_enabled, check_submission
from app.taxonomy import current_taxonomy

ALLOWED, KEPT_REFUSED = "allowed", "refused"


@dataclass(frozen=True)
class Admission:
    """What an arrival may open: its identity (with Prolific's verification when the API
    was asked) and its submission's session, when it already has one."""

    identity: WorkerIdentity
    session: AnnotationSession | None = None


def admit(identity: WorkerIdentity) -> Admission:
    """Check an arrival at a task's start link (/start, /annotate/<document>) before
    anything is opened; OpenRefused when it may open nothing. Commits what it records
    (the participant's binding, a conflict)."""
    if identity.platform == "prolific":
        _check_prolific_study(identity)
    submission = identity.submission
    if submission is None:
        return Admission(identity)
    session = submission_session(identity)
    if session is not None or identity.platform != "prolific":
        return Admission(identity, session)
    verification = None
    if api_enabled():
        checked = check_submission(
            identity.external_id, identity.params.get("study_id"), submission
        )
        if checked.result == REFUSED:
            raise OpenRefused.not_verified()
        verification = checked.result
    _bind(identity, submission)
    return Admission(replace(identity, verification=verification))


def _check_prolific_study(identity: WorkerIdentity) -> None:
    """The study's Prolific id, when it names one, is the arrival's STUDY_ID; production
    needs it, and a SESSION_ID (the submission)."""
    expected = current_taxonomy().study.prolific_study_id
    production = bool(current_app.config.get("REQUIRE_PROLIFIC_STUDY_ID"))
    if expected is not None:
        if identity.params.get("study_id") != expected:
            raise OpenRefused.wrong_study()
    elif production:
        raise OpenRefused.not_ready()
    if production and not identity.submission:
        raise OpenRefused.study_link()


_SUBMISSION_SESSION = (
    select(AnnotationSession)
    .join(Annotator, AnnotationSession.annotator_id == Annotator.id)
    .where(
        Annotator.platform == bindparam("platform"),
        Annotator.external_id == bindparam("external_id"),
        AnnotationSession.submission == bindparam("submission"),
    )
)


def submission_session(identity: WorkerIdentity) -> AnnotationSession | None:
    """The session of the arrival's submission, if it has one."""
    if identity.submission is None:
        return None
    params = {
        "platform": identity.platform,
        "external_id": identity.external_id,
        "submission": identity.submission,
    }
    return db.session.scalars(_SUBMISSION_SESSION, params).first()


def _bind(identity: WorkerIdentity, submission: str) -> None:
    """First binding wins: bind the participant to this submission in the study, or find
    them bound to it (or to another one a researcher allowed); else record the conflict
    and refuse. Commits."""
    annotator = get_or_create_annotator(identity)
    study_id = identity.params.get("study_id") or ""
    binding, _ = get_or_create(
        SubmissionBinding,
        defaults={"submission": submission},
        annotator_id=annotator.id,
        study_id=study_id,
    )
    if binding.submission == submission:
        db.session.commit()
        return
    key = {"annotator_id": annotator.id, "study_id": study_id, "submission": submission}
    conflict, created = get_or_create(
        IdentityConflict, defaults={"bound_submission": binding.submission, "arrivals": 1}, **key
    )
    if conflict.decision == ALLOWED:
        db.session.commit()
        return
    if not created:
        db.session.execute(
            update(IdentityConflict)
            .where(IdentityConflict.id == conflict.id)
            .values(arrivals=IdentityConflict.arrivals + 1, last_seen_at=utcnow())
        )
    db.session.commit()
    raise OpenRefused.conflict()


# --- the dashboard's side -----------------------------------------------------------------


def conflicts() -> list[IdentityConflict]:
    """Every recorded conflict, undecided first, then the most recent."""
    query = (
        select(IdentityConflict)
        .options(joinedload(IdentityConflict.annotator))
        .order_by(IdentityConflict.decision.is_not(None), IdentityConflict.last_seen_at.desc())
    )
    return list(db.session.scalars(query))


def decide(conflict_id: int, decision: str, researcher: Researcher) -> IdentityConflict | None:
    """A researcher's **Allow** (the submission opens a session of its own on its next
    arrival) or **Keep refused**; None when there is no such conflict. Commits."""
    if decision not in (ALLOWED, KEPT_REFUSED):
        raise ValueError(f"decision must be {ALLOWED} or {KEPT_REFUSED}, got {decision!r}")
    conflict = db.session.get(IdentityConflict, conflict_id)
    if conflict is None:
        return None
    conflict.decision = decision
    conflict.decided_at = utcnow()
    conflict.decided_by_id = researcher.id
    db.session.commit()
    return conflict
