"""Which item a validator judges next, and recording their judgments.

Rules: each item gets `round.judgments_per_item` (K) judgments from distinct validators;
the least-judged items go first (then the round's shuffled order); a validator never
gets the same item twice, nor an item made by themselves (same annotator identity as the
item's origin annotator, or the linked annotation is theirs). An item served to a
validator is reserved for them for RESERVATION_MINUTES from when it was first served
(asking for it again does not renew it: a reservation without a judgment lapses), so that
validators working at the same time are spread over different items; once served it
stays judgeable by them even if others have meanwhile completed its K judgments (their
work is never refused). One client network holds at most MAX_RESERVATIONS_PER_NETWORK
live reservations in a round (app.crowd.networks): beyond, a new item is refused with 429
`reservation_limit` until one is judged or lapses.

A verdict, once given, is final: posting the same judgment again is answered 200 with
the stored one (retries are safe), a different one for the same item 409.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import exists, func, or_, select
from sqlalchemy.exc import IntegrityError

from app.core.errors import ApiError
from app.core.extensions import db
from app.core.persistence import get_or_create
from app.crowd.identity import OpenRefused, WorkerIdentity, get_or_create_annotator
from app.crowd.networks import MAX_RESERVATIONS_PER_NETWORK, PlaceRefused, network_key
from app.models import (
    Annotation,
    AnnotationSession,
    ValidationItem,
    ValidationJudgment,
    ValidationRound,
    ValidationSession,
)
from app.rules.statuses import SessionStatus
from app.validation.schemas import JudgmentInput
from app.validation.serializers import judgment_json

RESERVATION_MINUTES = 5


def start_session(round_: ValidationRound, identity: WorkerIdentity) -> ValidationSession:
    """The validator's session in this round, created on first arrival (race-safe).
    Resuming it needs the request's proof of being that validator (app.crowd.identity), else
    OpenRefused; its stored parameters (the MTurk assignment it submits) never change."""
    session, created = get_or_create(
        ValidationSession,
        defaults={"platform": identity.platform, "platform_params": dict(identity.params)},
        round_id=round_.id,
        annotator_id=get_or_create_annotator(identity).id,
    )
    if not created:
        stored = session.platform_params or {}
        if not identity.may_resume("v", session.id, stored):
            raise OpenRefused.resume()
        params = identity.resumed_params(stored)
        if params != stored:
            session.platform_params = params
    db.session.commit()
    return session


def _now() -> datetime:
    return datetime.now(UTC)


def _candidates(session: ValidationSession, now: datetime):
    """Items this validator may be given now, with their load, least loaded first."""
    label = session.annotator.label
    round_ = session.round
    judged = (
        select(ValidationJudgment.item_id, func.count().label("n"))
        .join(ValidationItem, ValidationItem.id == ValidationJudgment.item_id)
        .where(ValidationItem.round_id == round_.id)
        .group_by(ValidationJudgment.item_id)
        .subquery()
    )
    reserved = (
        select(ValidationSession.current_item_id.label("item_id"), func.count().label("n"))
        .where(
            ValidationSession.round_id == round_.id,
            ValidationSession.id != session.id,
            ValidationSession.current_item_id.is_not(None),
            ValidationSession.assigned_at > now - timedelta(minutes=RESERVATION_MINUTES),
        )
        .group_by(ValidationSession.current_item_id)
        .subquery()
    )
    own_annotations = (
        select(Annotation.id)
        .join(AnnotationSession, Annotation.session_id == AnnotationSession.id)
        .where(AnnotationSession.annotator_id == session.annotator_id)
    )
    already = exists().where(
        ValidationJudgment.item_id == ValidationItem.id, ValidationJudgment.validator == label
    )
    load = func.coalesce(judged.c.n, 0) + func.coalesce(reserved.c.n, 0)
    return (
        select(ValidationItem, load.label("load"))
        .outerjoin(judged, judged.c.item_id == ValidationItem.id)
        .outerjoin(reserved, reserved.c.item_id == ValidationItem.id)
        .where(
            ValidationItem.round_id == round_.id,
            ~already,
            or_(
                ValidationItem.origin_annotator.is_(None), ValidationItem.origin_annotator != label
            ),
            or_(
                ValidationItem.annotation_id.is_(None),
                ValidationItem.annotation_id.not_in(own_annotations),
            ),
            load < round_.judgments_per_item,
        )
    )


def _judged_by(session: ValidationSession, item_id: int) -> bool:
    query = select(ValidationJudgment.id).where(
        ValidationJudgment.item_id == item_id,
        ValidationJudgment.validator == session.annotator.label,
    )
    return db.session.scalar(query) is not None


def has_judged(session: ValidationSession) -> bool:
    query = select(ValidationJudgment.id).where(
        ValidationJudgment.validation_session_id == session.id
    )
    return db.session.scalar(query.limit(1)) is not None


def progress(session: ValidationSession) -> dict[str, int]:
    """{"done": judgments given, "total": done + items still open to this validator}."""
    done = db.session.scalar(
        select(func.count(ValidationJudgment.id))
        .join(ValidationItem, ValidationItem.id == ValidationJudgment.item_id)
        .where(
            ValidationItem.round_id == session.round_id,
            ValidationJudgment.validator == session.annotator.label,
        )
    )
    open_items = _candidates(session, _now()).subquery()
    remaining = db.session.scalar(select(func.count()).select_from(open_items)) or 0
    current = session.current_item_id
    if current is not None and not _judged_by(session, current):
        in_open = db.session.scalar(select(func.count()).where(open_items.c.id == current))
        remaining += 0 if in_open else 1
    return {"done": done or 0, "total": (done or 0) + remaining}


def next_item(session: ValidationSession) -> ValidationItem | None:
    """The item to show now: the reserved one if still unjudged (its reservation is not
    renewed), else a new reservation; PlaceRefused when the client's network holds
    MAX_RESERVATIONS_PER_NETWORK of the round's live reservations."""
    now = _now()
    session.last_seen_at = now
    current = session.current_item_id
    if current is not None and not _judged_by(session, current):
        db.session.commit()
        return db.session.get(ValidationItem, current)
    query = _candidates(session, now).order_by("load", ValidationItem.order_key).limit(1)
    row = db.session.execute(query).first()
    item = row[0] if row else None
    if item is not None:
        network = network_key()
        _lock_reservations(session.round_id, network)
        if _live_reservations(session, network, now) >= MAX_RESERVATIONS_PER_NETWORK:
            raise PlaceRefused.reservation_limit()
        session.network = network
    session.current_item_id = item.id if item else None
    session.assigned_at = now if item else None
    if item is None and session.status == SessionStatus.ACTIVE and has_judged(session):
        session.status = SessionStatus.SUBMITTED
    db.session.commit()
    return item


def _lock_reservations(round_id: int, network: str) -> None:
    """PostgreSQL: one new reservation per network and round at a time (a transaction-level
    advisory lock, released by the commit), so that its count below is exact. (SQLite,
    for development, takes no lock: simultaneous requests may pass the cap together.)"""
    if db.session.get_bind().dialect.name == "postgresql":
        key = f"reservations:{round_id}:{network}"
        db.session.execute(select(func.pg_advisory_xact_lock(func.hashtextextended(key, 0))))


def _live_reservations(session: ValidationSession, network: str, now: datetime) -> int:
    """The round's other sessions holding a live reservation made from this network."""
    query = select(func.count(ValidationSession.id)).where(
        ValidationSession.round_id == session.round_id,
        ValidationSession.id != session.id,
        ValidationSession.network == network,
        ValidationSession.current_item_id.is_not(None),
        ValidationSession.assigned_at > now - timedelta(minutes=RESERVATION_MINUTES),
    )
    return db.session.scalar(query) or 0


def _same(judgment: ValidationJudgment, data: JudgmentInput) -> bool:
    return (
        judgment.verdict == data.verdict
        and tuple(judgment.reasons or ()) == data.reasons
        and (judgment.explanation or None) == data.explanation
    )


def record_judgment(
    session: ValidationSession, data: JudgmentInput
) -> tuple[ValidationJudgment, bool]:
    """Store the judgment; (judgment, True) when new, (stored, False) on an identical retry."""
    label = session.annotator.label
    item = db.session.scalars(
        select(ValidationItem).where(
            ValidationItem.round_id == session.round_id,
            ValidationItem.public_id == data.item_id,  # what the validator was shown
        )
    ).first()
    if item is None:
        raise ApiError.not_found("No such item in this round.", item_id=data.item_id)
    stored = _stored(item.id, label)
    if stored is not None:
        return _retry(stored, data)
    if item.id != session.current_item_id and not _available(session, item):
        raise ApiError.unprocessable(
            "This item is not available to you.", code="not_available", item_id=data.item_id
        )
    judgment = ValidationJudgment(
        item_id=item.id,
        validator=label,
        validation_session_id=session.id,
        verdict=data.verdict,
        reasons=list(data.reasons),
        explanation=data.explanation,
    )
    try:
        with db.session.begin_nested():
            db.session.add(judgment)
    except IntegrityError:  # the same judgment posted twice at once
        db.session.rollback()
        stored = _stored(item.id, label)
        if stored is None:
            raise
        return _retry(stored, data)
    if session.current_item_id == item.id:
        session.current_item_id = None
        session.assigned_at = None
    session.last_seen_at = _now()
    db.session.commit()
    return judgment, True


def _stored(item_id: int, label: str) -> ValidationJudgment | None:
    return db.session.scalars(
        select(ValidationJudgment).where(
            ValidationJudgment.item_id == item_id, ValidationJudgment.validator == label
        )
    ).first()


def _retry(stored: ValidationJudgment, data: JudgmentInput) -> tuple[ValidationJudgment, bool]:
    if _same(stored, data):
        return stored, False
    raise ApiError.conflict(
        "You already judged this item differently; a verdict cannot be changed.",
        item_id=data.item_id,
        stored=judgment_json(stored),
    )


def _available(session: ValidationSession, item: ValidationItem) -> bool:
    query = _candidates(session, _now()).where(ValidationItem.id == item.id)
    return db.session.execute(query).first() is not None
