"""A validation study's start link (issue 30, docs/validation-rounds.md, "Validation
studies"): `/study/<slug>/start` of a study of kind validation leads the validator to
the items of one of its rounds.

The arrival is checked as every start link checks it (app.crowd.study_entry: an unknown,
closed or archived study opens nothing; a draft only signed links; app.crowd.identity:
placeholders, signatures, resuming needs proof), then a round is chosen and the
validator's session in it is created or resumed exactly as `/study/<slug>/validate/<round>`
does (app.validation.routes.open_round).

Which round:

1. the round of the validator's latest session in this study, when it is still theirs to
   work on or to finish: submitted (its end page and code), something judged, or items
   left for them; so reopening the link never moves a validator to another round;
2. else the study's open round with the fewest judgments per item: a round is open while
   one of its items has fewer judgments than its `judgments_per_item`; ties go to the
   older round (then the lower id).

With no open round the page says so, with the way back to the platform (the study's
fixed no_consent address for a Prolific worker, as a closed study's page).
"""

from __future__ import annotations

from flask import Flask, make_response, render_template, request
from flask.typing import ResponseReturnValue
from sqlalchemy import Float, case, cast, func, select

from app.core.extensions import db
from app.crowd.identity import remember_anonymous, request_identity
from app.crowd.study_entry import admit_platform, register_kind_entry, return_address
from app.models import (
    Annotator,
    Study,
    ValidationItem,
    ValidationJudgment,
    ValidationRound,
    ValidationSession,
)
from app.rules.platforms import is_mturk_preview
from app.rules.statuses import SessionStatus
from app.rules.studies import StudyKind
from app.validation.assignment import has_judged, progress
from app.validation.routes import open_round, preview_page

START_TARGET = "start"  # what a signed link to /study/<slug>/start signs, as for annotators


def init_app(app: Flask) -> None:
    """Answer the start link of every validation study."""
    register_kind_entry(app, StudyKind.VALIDATION, study_start)


def study_start(study: Study) -> ResponseReturnValue:
    """The validator's round of this validation study (entered and checked by the caller,
    app.crowd.assignment.routes.start), or the page saying there is none."""
    if is_mturk_preview(request.args):
        round_ = least_judged_open_round(study)
        return preview_page(round_) if round_ is not None else _no_round_page(study)
    identity, anonymous = request_identity(target=START_TARGET)
    admit_platform(study, identity.platform)
    round_ = _resumed_round(study, identity.platform, identity.external_id)
    if round_ is None:
        round_ = least_judged_open_round(study)
    if round_ is None:
        response = make_response(_no_round_page(study))
        if anonymous:
            remember_anonymous(response, identity)
        return response
    return open_round(round_, identity, anonymous)


def _no_round_page(study: Study):
    db.session.rollback()
    page = render_template("validation/no_open_round.html", study=study, exit_url=return_address())
    return page, 200, {"Cache-Control": "no-store"}


def _resumed_round(study: Study, platform: str, external_id: str) -> ValidationRound | None:
    """The round of the validator's latest session in the study, if they still have
    something there (rule 1 of the module docstring); None otherwise."""
    session = db.session.scalars(
        select(ValidationSession)
        .join(ValidationRound, ValidationRound.id == ValidationSession.round_id)
        .join(Annotator, Annotator.id == ValidationSession.annotator_id)
        .where(
            ValidationRound.study_id == study.id,
            Annotator.platform == platform,
            Annotator.external_id == external_id,
        )
        .order_by(ValidationSession.last_seen_at.desc(), ValidationSession.id.desc())
        .limit(1)
    ).first()
    if session is None:
        return None
    if session.status == SessionStatus.SUBMITTED or has_judged(session):
        return session.round
    counts = progress(session)
    return session.round if counts["total"] > counts["done"] else None


def least_judged_open_round(study: Study) -> ValidationRound | None:
    """The study's open round with the fewest judgments per item (rule 2), or None."""
    judged = (
        select(ValidationJudgment.item_id, func.count().label("n"))
        .group_by(ValidationJudgment.item_id)
        .subquery()
    )
    count = func.coalesce(judged.c.n, 0)
    needing = func.sum(case((count < ValidationRound.judgments_per_item, 1), else_=0))
    per_item = cast(func.sum(count), Float) / func.count(ValidationItem.id)
    query = (
        select(ValidationRound)
        .join(ValidationItem, ValidationItem.round_id == ValidationRound.id)
        .outerjoin(judged, judged.c.item_id == ValidationItem.id)
        .where(ValidationRound.study_id == study.id)
        .group_by(ValidationRound.id)
        .having(needing > 0)
        .order_by(per_item, ValidationRound.created_at, ValidationRound.id)
        .limit(1)
    )
    return db.session.scalars(query).first()
