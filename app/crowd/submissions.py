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
  unique per annotator), whatever its step or document, is the one the arrival goes to
  (/start looks it up; /annotate/<document> finds it through that unique constraint,
  app.crowd.sessions); a submission never gets a second document (signed
  `annotator=` links, which name no submission, still get several).
- A new Prolific submission: with PROLIFIC_API_TOKEN, Prolific's API is asked first
  (app.crowd.prolific_api): a submission that is not the participant's open one in the study is
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
from functools import lru_cache

from flask import current_app
from sqlalchemy import and_, bindparam, select, update

from app.core.extensions import db
from app.core.persistence import autocommit_connection, end_orm_transaction, upsert_insert
from app.crowd.identity import OpenRefused, WorkerIdentity
from app.crowd.prolific_api import api_enabled, check_submission
from app.models import (
    AnnotationSession,
    Annotator,
    IdentityConflict,
    Researcher,
    SubmissionBinding,
    utcnow,
)
from app.rules.platforms import REFUSED
from app.studies import current_study_id
from app.taxonomy import current_taxonomy

ALLOWED, KEPT_REFUSED = "allowed", "refused"
SESSIONS = AnnotationSession.__table__
ANNOTATORS = Annotator.__table__
BINDINGS = SubmissionBinding.__table__
CONFLICTS = IdentityConflict.__table__


@dataclass(frozen=True)
class SessionRef:
    """The session a submission has: its id and token."""

    id: int
    token: str


def admit(identity: WorkerIdentity) -> WorkerIdentity:
    """Check an arrival at a task's start link (/start, /annotate/<document>) before
    anything is opened; OpenRefused when it may open nothing. A new Prolific submission is
    checked with Prolific's API when there is a token, then bound (first binding wins):
    the identity comes back with the API's verification. Without a token, the first
    arrival of a participant costs one statement (the binding's INSERT)."""
    if identity.platform != "prolific":
        return identity
    _check_prolific_study(identity)
    submission = identity.submission
    if submission is None:
        return identity
    verification = None
    if api_enabled() and submission_session(identity) is None:
        checked = check_submission(
            identity.external_id, identity.params.get("study_id"), submission
        )
        if checked.result == REFUSED:
            raise OpenRefused.not_verified()
        verification = checked.result
    _bind(identity, submission)
    return replace(identity, verification=verification)


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
    select(SESSIONS.c.id, SESSIONS.c.token)
    .join_from(SESSIONS, ANNOTATORS, SESSIONS.c.annotator_id == ANNOTATORS.c.id)
    .where(
        ANNOTATORS.c.platform == bindparam("platform"),
        ANNOTATORS.c.external_id == bindparam("external_id"),
        SESSIONS.c.submission == bindparam("submission"),
    )
)


def submission_session(identity: WorkerIdentity) -> SessionRef | None:
    """The session of the arrival's submission, if it has one."""
    if identity.submission is None:
        return None
    params = {
        "platform": identity.platform,
        "external_id": identity.external_id,
        "submission": identity.submission,
    }
    row = autocommit_connection().execute(_SUBMISSION_SESSION, params).first()
    end_orm_transaction()
    return None if row is None else SessionRef(row.id, row.token)


# --- first binding wins -------------------------------------------------------------------

# The where clauses name their parameters apart from the columns (an UPDATE's SET takes
# the columns' own names).
_KEY = and_(
    BINDINGS.c.study_id == bindparam("w_study_id"),
    BINDINGS.c.platform == bindparam("w_platform"),
    BINDINGS.c.participant == bindparam("w_participant"),
    BINDINGS.c.platform_study_id == bindparam("w_platform_study_id"),
)
_CONFLICT = and_(
    CONFLICTS.c.study_id == bindparam("w_study_id"),
    CONFLICTS.c.platform == bindparam("w_platform"),
    CONFLICTS.c.participant == bindparam("w_participant"),
    CONFLICTS.c.platform_study_id == bindparam("w_platform_study_id"),
    CONFLICTS.c.submission == bindparam("w_submission"),
)
_BOUND = select(
    select(BINDINGS.c.submission).where(_KEY).scalar_subquery().label("bound"),
    select(CONFLICTS.c.decision).where(_CONFLICT).scalar_subquery().label("decision"),
)
_SEEN_AGAIN = (
    update(CONFLICTS)
    .where(_CONFLICT)
    .values(arrivals=CONFLICTS.c.arrivals + 1, last_seen_at=bindparam("now"))
)


@lru_cache(maxsize=4)
def _insert_or_nothing(dialect: str, table, key: tuple[str, ...], returning: str):
    """INSERT ... ON CONFLICT (key) DO NOTHING RETURNING one column, built once per dialect."""
    return (
        upsert_insert(dialect)(table)
        .on_conflict_do_nothing(index_elements=list(key))
        .returning(table.c[returning])
        .execution_options(prepare=True)  # app.core.prepared: every Prolific first arrival
    )


def _bind(identity: WorkerIdentity, submission: str) -> None:
    """Bind the participant to this submission in the study unless they are bound already
    (one INSERT on their first arrival); bound to another one that no researcher allowed,
    record the conflict and refuse."""
    connection = autocommit_connection()
    dialect = connection.dialect.name
    key = {
        "study_id": current_study_id(),
        "platform": identity.platform,
        "participant": identity.external_id,
        "platform_study_id": identity.params.get("study_id") or "",
    }
    now = utcnow()
    bind = _insert_or_nothing(dialect, BINDINGS, tuple(key), "submission")
    inserted = connection.execute(bind, {**key, "submission": submission, "created_at": now})
    if inserted.first() is None:
        where = {f"w_{name}": value for name, value in {**key, "submission": submission}.items()}
        state = connection.execute(_BOUND, where).one()
        if state.bound != submission and state.decision != ALLOWED:
            record = _insert_or_nothing(dialect, CONFLICTS, (*key, "submission"), "id")
            values = {
                **key,
                "submission": submission,
                "bound_submission": state.bound,
                "arrivals": 1,
                "first_seen_at": now,
                "last_seen_at": now,
            }
            if connection.execute(record, values).first() is None:
                connection.execute(_SEEN_AGAIN, {**where, "now": now})
            end_orm_transaction()
            raise OpenRefused.conflict()
    end_orm_transaction()


# --- the dashboard's side -----------------------------------------------------------------


def conflicts() -> list[IdentityConflict]:
    """Every conflict recorded in the current study, undecided first, then the most recent."""
    query = (
        select(IdentityConflict)
        .where(IdentityConflict.study_id == current_study_id())
        .order_by(IdentityConflict.decision.is_not(None), IdentityConflict.last_seen_at.desc())
    )
    return list(db.session.scalars(query))


def decide(conflict_id: int, decision: str, researcher: Researcher) -> IdentityConflict | None:
    """A researcher's **Allow** (the submission opens a session of its own on its next
    arrival) or **Keep refused**; None when there is no such conflict. Commits."""
    if decision not in (ALLOWED, KEPT_REFUSED):
        raise ValueError(f"decision must be {ALLOWED} or {KEPT_REFUSED}, got {decision!r}")
    conflict = db.session.get(IdentityConflict, conflict_id)
    if conflict is None or conflict.study_id != current_study_id():
        return None
    conflict.decision = decision
    conflict.decided_at = utcnow()
    conflict.decided_by_id = researcher.id
    db.session.commit()
    return conflict
