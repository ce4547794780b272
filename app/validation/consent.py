"""A validation study's consent step (issue 30, docs/validation-rounds.md "Validation
studies"): when the study's taxonomy has a `consent:` section, a validator agrees to it
before their first item, as an annotator does before the task (app.crowd.surveys).

Only studies of kind validation ask: a round of an annotation study (its researchers'
own checks, `/validate/<round>`) keeps going straight to the items. The decision is kept
once per validation session, never changed (the first one stands, whatever a second tab
sends); the consent text's version is a hash of it (app.crowd.surveys.store). Declining
ends the validator's part: the session is abandoned and the page shows the way back with
the study's `no_consent` code.
"""

from __future__ import annotations

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError

from app.core.extensions import db
from app.crowd.surveys.store import consent_version
from app.models import Study, ValidationConsentDecision, ValidationSession
from app.rules.statuses import SessionStatus
from app.rules.studies import StudyKind
from app.taxonomy import current_taxonomy

PENDING = "pending"  # the consent page comes first
AGREED = "agreed"
DECLINED = "declined"


def consent_text(session: ValidationSession) -> str | None:
    """The consent the validator must agree to (None: the study asks none)."""
    study = db.session.get(Study, session.round.study_id)
    if study is None or study.kind != StudyKind.VALIDATION:
        return None
    return current_taxonomy().consent or None


def consent_state(session: ValidationSession) -> str:
    """PENDING, AGREED or DECLINED (AGREED too when the study asks no consent)."""
    if consent_text(session) is None:
        return AGREED
    agreed = db.session.scalar(
        select(ValidationConsentDecision.agreed).where(
            ValidationConsentDecision.session_id == session.id
        )
    )
    if agreed is None:
        return PENDING
    return AGREED if agreed else DECLINED


def record_consent(session: ValidationSession, agreed: bool, text: str) -> bool:
    """Store the validator's decision (the first one stands) and return the stored one.
    Declining abandons the session (it holds no reservation)."""
    decision = ValidationConsentDecision(
        session_id=session.id, agreed=agreed, consent_version=consent_version(text)
    )
    try:
        with db.session.begin_nested():
            db.session.add(decision)
    except IntegrityError:
        stored = db.session.scalar(
            select(ValidationConsentDecision.agreed).where(
                ValidationConsentDecision.session_id == session.id
            )
        )
        db.session.commit()
        return bool(stored)
    if not agreed:
        db.session.execute(
            update(ValidationSession)
            .where(ValidationSession.id == session.id)
            .values(status=SessionStatus.ABANDONED, current_item_id=None, assigned_at=None)
        )
    db.session.commit()
    return agreed
