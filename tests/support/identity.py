"""Helpers of the identity tests (issue 26 points 1-2, issue 27 points 2 and 6): a Prolific
study with consent, training and codes per outcome, and the arrivals at its links."""

from __future__ import annotations

from pathlib import Path

from app.core.extensions import db
from app.core.security import capability_csrf_token
from app.models import AnnotationSession
from tests.support.taxonomies import taxonomy_variant
from tests.support.training import PRACTICE_ID, import_practice, training_section

STUDY_ID = "study-1"
CONTACT = "lab@example.org"
TASKS = [
    {"id": f"doc-{n}", "paragraphs": [f"Anna met Bob {n}.", f"Then it rained {n} times."]}
    for n in (1, 2, 3, 4)
]
CODES = (
    "  completion: {completed: CDONE, failed_training: CTRAIN, failed_checks: CCHECK,"
    " no_consent: CNOPE}\n"
)


def study_taxonomy(
    tmp_path: Path,
    *,
    consent: bool = True,
    training: bool = True,
    prolific_study_id: str | None = STUDY_ID,
    study_lines: str = "",
) -> str:
    """The default taxonomy with Prolific codes per outcome, the study's contact, and as
    asked consent, training (one practice text, one check) and `prolific_study_id`."""
    lines = CODES + f"  contact: {CONTACT}\n" + study_lines
    if prolific_study_id:
        lines += f"  prolific_study_id: {prolific_study_id}\n"
    sections = training_section(attempts=1) if training else ""
    if consent:
        sections += "consent: |\n  You will mark errors in a short text.\n"
    return str(taxonomy_variant(tmp_path, study_lines=lines, append=sections))


def import_study(app, tmp_path: Path) -> None:
    """The practice text and TASKS, imported."""
    import_practice(app, tmp_path, *TASKS)


def prolific(submission: str, pid: str = "victim-pid", study: str | None = STUDY_ID) -> dict:
    """A Prolific arrival's URL parameters."""
    params = {"PROLIFIC_PID": pid, "SESSION_ID": submission}
    if study is not None:
        params["STUDY_ID"] = study
    return params


def session_of(token: str) -> AnnotationSession:
    """The stored session with this token, read afresh."""
    db.session.expire_all()
    return db.session.scalars(db.select(AnnotationSession).filter_by(token=token)).one()


def sessions_count() -> int:
    """How many annotation sessions are stored."""
    db.session.expire_all()
    return db.session.scalar(db.select(db.func.count(AnnotationSession.id)))


def csrf(token: str) -> dict[str, str]:
    """The header the page sends on writes."""
    return {"X-CSRFToken": capability_csrf_token("annotate", token)}


def form(token: str, **fields) -> dict:
    """A study-step form with its CSRF token."""
    return {"csrf_token": capability_csrf_token("annotate", token), **fields}


def consent(client, token: str, decision: str = "agree"):
    """I agree / I do not agree on the consent page."""
    return client.post(f"/s/{token}/consent", data=form(token, decision=decision))


def practice_check(client, token: str, annotations: list[dict]):
    """Check my answers on the practice text."""
    return client.post(
        f"/api/sessions/{token}/training",
        json={"document_id": PRACTICE_ID, "annotations": annotations},
        headers=csrf(token),
    )
