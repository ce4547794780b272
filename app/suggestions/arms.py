"""Which suggestions arm a worker is in: `show` (sees the model's suggestions) or `none`.

The taxonomy's study says `suggestions: none | show` (every worker in one arm), or, for
experiments on anchoring, `suggestion_arms: {show: 0.5, none: 0.5}`. An arm belongs to
the worker: their first session gets one when its page is first loaded, and every later
session of theirs takes the same. New workers are spread over the arms as documents are
spread over workers (app.crowd.assignment.service, rule 4): deterministically, to the arm
furthest below its share of the workers so far counting this one (largest
`weight / total weight * (workers + 1) - workers in the arm`, ties in file order show,
none), so that any run of arrivals is within one worker of the shares. Decisions are
serialised (PostgreSQL: a transaction-level advisory lock; SQLite: its write lock), so
simultaneous arrivals never both take the last place of an arm.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sqlalchemy import bindparam, func, select, text, update

from app.core.extensions import db
from app.models import AnnotationSession
from app.rules.statuses import SessionStatus
from app.taxonomy import current_taxonomy

SESSIONS = AnnotationSession.__table__
ARM_LOCK_KEY = 18_000_003  # pg_advisory_xact_lock key of arm decisions

Arms = Sequence[tuple[str, float]]


def study_arms() -> tuple[tuple[str, float], ...]:
    """The study's arms with their weights; () when it shows no suggestions at all."""
    study = current_taxonomy().study
    if study.suggestion_arms:
        return study.suggestion_arms
    return (("show", 1.0),) if study.suggestions == "show" else ()


def uses_suggestions() -> bool:
    """Whether any worker of this study may see suggestions."""
    return any(arm == "show" for arm, _weight in study_arms())


def choose_arm(arms: Arms, workers: Mapping[str, int]) -> str:
    """The arm for a new worker, given how many workers each arm has (rule above)."""
    total_weight = sum(weight for _arm, weight in arms)
    total = sum(workers.get(arm, 0) for arm, _weight in arms)

    def deficit(item: tuple[int, tuple[str, float]]) -> tuple[float, int]:
        order, (arm, weight) = item
        return (weight / total_weight * (total + 1) - workers.get(arm, 0), -order)

    return max(enumerate(arms), key=deficit)[1][0]


_ARM_OF = select(SESSIONS.c.arm, SESSIONS.c.annotator_id, SESSIONS.c.status).where(
    SESSIONS.c.id == bindparam("sid")
)
_WORKER_ARM = (
    select(SESSIONS.c.arm)
    .where(SESSIONS.c.annotator_id == bindparam("annotator"), SESSIONS.c.arm.is_not(None))
    .limit(1)
)
_WORKERS_PER_ARM = (
    select(SESSIONS.c.arm, func.count(func.distinct(SESSIONS.c.annotator_id)))
    .where(SESSIONS.c.arm.is_not(None))
    .group_by(SESSIONS.c.arm)
)
_SET_ARM = (
    update(SESSIONS)
    .where(SESSIONS.c.id == bindparam("sid"), SESSIONS.c.arm.is_(None))
    .values(arm=bindparam("arm"))
)


def session_arm(session_id: int) -> str | None:
    """The session's arm, chosen now if it has none yet (and the study has arms); None
    for a study without suggestions and for sessions submitted without one (imports)."""
    arms = study_arms()
    if not arms:
        return None
    row = db.session.execute(_ARM_OF, {"sid": session_id}).first()
    if row is None or row.arm is not None or row.status == SessionStatus.SUBMITTED:
        db.session.commit()
        return None if row is None else row.arm
    _lock()
    arm = db.session.scalar(_WORKER_ARM, {"annotator": row.annotator_id})
    if arm is None:
        workers = dict(db.session.execute(_WORKERS_PER_ARM).all())
        arm = choose_arm(arms, workers)
    db.session.execute(_SET_ARM, {"sid": session_id, "arm": arm})
    arm = db.session.scalar(select(SESSIONS.c.arm).where(SESSIONS.c.id == session_id))
    db.session.commit()
    return arm


def _lock() -> None:
    """Serialise arm decisions until the commit."""
    if db.session.get_bind().dialect.name == "postgresql":
        db.session.execute(select(func.pg_advisory_xact_lock(ARM_LOCK_KEY)))
    else:
        db.session.commit()  # SQLite cannot BEGIN IMMEDIATE inside an open transaction
        db.session.execute(text("BEGIN IMMEDIATE"))
