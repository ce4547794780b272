"""Researcher accounts as `flask create-researcher` makes them: an editor of the default
study (docs/studies.md, "Sharing"), unless another role is asked."""

from __future__ import annotations

from werkzeug.security import generate_password_hash

from app.core.extensions import db
from app.models import Researcher, Study, StudyResearcher
from app.studies import default_study


def add_account(
    email: str,
    password: str | None = None,
    *,
    role: str | None = "editor",
    study: Study | None = None,
    password_hash: str | None = None,
) -> Researcher:
    """A researcher account (added and flushed, not committed) with `role` in `study`
    (the default study unless given; no role with role=None)."""
    study = study or (default_study() if role else None)  # before the flush: SQLite's lock
    account = Researcher(
        email=email, password_hash=password_hash or generate_password_hash(password or "x")
    )
    db.session.add(account)
    db.session.flush()
    if role:
        db.session.add(StudyResearcher(study_id=study.id, researcher_id=account.id, role=role))
    return account
