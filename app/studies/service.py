"""Studies as rows: finding one by slug, the default study, creating one, changing its status.

The console's pages and the commands are thin on top of these functions: they parse what
they were given, call one of them, and show the answer or the StudyError's message. The
rules (slugs, kinds, statuses and which may follow which) are pure, in app.rules.studies.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from flask import current_app
from sqlalchemy import bindparam, case, func, literal, select
from sqlalchemy.orm import make_transient_to_detached

from app.core.extensions import db
from app.core.persistence import autocommit_connection, upsert_insert
from app.models import Document, Researcher, Study, StudyResearcher, utcnow
from app.rules.studies import (
    DEFAULT_SLUG,
    STUDY_KINDS,
    STUDY_ROLES,
    StudyKind,
    StudyStatus,
    slug_problem,
    transition_problem,
)

TITLE_MAX_LENGTH = 200


class StudyError(ValueError):
    """A study cannot be found, made or changed as asked; the message says why."""


@dataclass(frozen=True)
class StudyListing:
    """One line of `flask list-studies` and of the console's list of studies."""

    slug: str
    title: str
    kind: str
    status: str
    documents: int
    taxonomy_version: str | None
    role: str | None = None  # the researcher's role, when listed for one


def worker_prefix(study: Study) -> str:
    """The path workers' links of this study start with: "" for the default study (its
    links keep the form they had before studies were rows), else /study/<slug>."""
    return "" if study.slug == DEFAULT_SLUG else f"/study/{study.slug}"


def study_by_slug(slug: str) -> Study | None:
    """The study with this slug, or None."""
    return db.session.scalar(select(Study).where(Study.slug == slug))


# A start link's study, prepared once per connection (app.core.prepared): every worker's
# first open asks for it.
_STUDY_OF_LINK = (
    select(Study.__table__)
    .where(Study.__table__.c.slug == bindparam("slug"))
    .execution_options(prepare=True)
)


def study_of_link(slug: str | None) -> Study | None:
    """The study a worker's start link names (the default study without a slug), or None.

    One statement on the request's autocommit connection, not an ORM query: a worker's
    first open is then its few statements with no transaction around them
    (app.annotate.opening). The row becomes a Study of the request's ORM session as if
    loaded (no further SQL). The default study is made when missing (default_study)."""
    row = autocommit_connection().execute(_STUDY_OF_LINK, {"slug": slug or DEFAULT_SLUG}).first()
    if row is None:
        return default_study() if slug is None else None
    return study_from_row(row._mapping)


def study_from_row(columns: Mapping[str, Any]) -> Study:
    """The Study of the request's ORM session for a studies row read by a Core statement
    (every column, by name), as if the session had loaded it: no further SQL."""
    study = Study(**{column.name: columns[column.name] for column in Study.__table__.c})
    make_transient_to_detached(study)
    return db.session.merge(study, load=False)


def study_and_role(slug: str, researcher: Researcher) -> tuple[Study | None, str | None]:
    """The study with this slug and the researcher's role in it, in one query: (None,
    None) without such a study, (study, None) without a role."""
    row = db.session.execute(
        select(Study, StudyResearcher.role)
        .outerjoin(
            StudyResearcher,
            (StudyResearcher.study_id == Study.id)
            & (StudyResearcher.researcher_id == researcher.id),
        )
        .where(Study.slug == slug)
    ).first()
    return (None, None) if row is None else (row[0], row[1])


def require_study(slug: str) -> Study:
    """The study with this slug; StudyError naming the known slugs when there is none."""
    study = study_by_slug(slug)
    if study is None:
        known = ", ".join(db.session.scalars(select(Study.slug).order_by(Study.slug))) or "none"
        raise StudyError(f"no study {slug!r} (known studies: {known})")
    return study


def default_study() -> Study:
    """The default study: the one `/start`, `/research/` and commands without `--study`
    serve. Made on first use (open, titled after the running taxonomy) when the database
    has none: a fresh database, or one emptied by a test; the migration made it for a
    database that held a study before."""
    study = study_by_slug(DEFAULT_SLUG)
    if study is not None:
        return study
    taxonomy = current_app.extensions.get("taxonomy")
    now = utcnow()
    values: dict[str, Any] = {
        "slug": DEFAULT_SLUG,
        "title": (getattr(taxonomy, "title", "") or "Default study")[:TITLE_MAX_LENGTH],
        "kind": StudyKind.ANNOTATION.value,
        "status": StudyStatus.OPEN.value,
        "settings": {},
        "created_at": now,
        "updated_at": now,
    }
    # Its own transaction, so that whatever the caller has begun stays the caller's; two
    # first requests at once: one inserts, the other finds it (ON CONFLICT DO NOTHING).
    with db.engine.begin() as connection:
        insert = upsert_insert(connection.dialect.name)(Study.__table__)
        connection.execute(insert.on_conflict_do_nothing(index_elements=["slug"]), values)
    return require_study(DEFAULT_SLUG)


def create_study(
    slug: str,
    title: str | None = None,
    kind: str = StudyKind.ANNOTATION.value,
    *,
    status: str = StudyStatus.DRAFT.value,
    owner: Researcher | None = None,
    judges: Study | None = None,
    commit: bool = True,
) -> Study:
    """A new study (committed; only flushed with commit=False, for a caller that writes
    more in the same transaction); StudyError when the slug, title or kind is not valid
    or the slug is taken. `owner` becomes its owner; `judges` is the annotation study a
    validation study judges."""
    problem = slug_problem(slug)
    if problem:
        raise StudyError(problem)
    if kind not in STUDY_KINDS:
        raise StudyError(f"unknown kind {kind!r}: one of {', '.join(STUDY_KINDS)}")
    if status not in (StudyStatus.DRAFT, StudyStatus.OPEN):
        raise StudyError("a new study is a draft or open")
    title = (title or slug).strip()
    if not title or len(title) > TITLE_MAX_LENGTH:
        raise StudyError(f"a title has 1 to {TITLE_MAX_LENGTH} characters")
    if judges is not None and (kind != StudyKind.VALIDATION or judges.kind != StudyKind.ANNOTATION):
        raise StudyError("only a validation study judges another study, an annotation study")
    if study_by_slug(slug) is not None:
        raise StudyError(f"a study {slug!r} exists already")
    study = Study(
        slug=slug,
        title=title,
        kind=kind,
        status=status,
        settings={},
        judges_study_id=judges.id if judges is not None else None,
    )
    db.session.add(study)
    db.session.flush()
    if owner is not None:
        db.session.add(StudyResearcher(study_id=study.id, researcher_id=owner.id, role="owner"))
    if commit:
        db.session.commit()
    else:
        db.session.flush()
    return study


def set_status(study: Study, status: str) -> Study:
    """Open, close or archive a study (committed); StudyError when the rules refuse."""
    problem = transition_problem(study.status, status)
    if problem:
        raise StudyError(problem)
    study.status = status
    db.session.commit()
    return study


def share(study: Study, researcher: Researcher, role: str) -> None:
    """Give a researcher a role in a study (owner, editor or viewer), replacing theirs."""
    if role not in STUDY_ROLES:
        raise StudyError(f"unknown role {role!r}: one of {', '.join(STUDY_ROLES)}")
    member = db.session.get(StudyResearcher, (study.id, researcher.id))
    if member is None:
        db.session.add(StudyResearcher(study_id=study.id, researcher_id=researcher.id, role=role))
    else:
        member.role = role
    db.session.commit()


def unshare(study: Study, researcher: Researcher) -> None:
    """Take a researcher's role in a study away (committed); StudyError for its owner."""
    member = db.session.get(StudyResearcher, (study.id, researcher.id))
    if member is None:
        return
    if member.role == "owner":
        raise StudyError("the owner of a study keeps it: their role cannot be taken away")
    db.session.delete(member)
    db.session.commit()


def members(study: Study) -> list[tuple[Researcher, str]]:
    """The study's researchers with their roles: the owner(s) first, then by e-mail."""
    order = case({"owner": 0, "editor": 1}, value=StudyResearcher.role, else_=2)
    rows = db.session.execute(
        select(Researcher, StudyResearcher.role)
        .join(StudyResearcher, StudyResearcher.researcher_id == Researcher.id)
        .where(StudyResearcher.study_id == study.id)
        .order_by(order, Researcher.email)
    ).all()
    return [(researcher, role) for researcher, role in rows]


def researcher_by_email(email: str) -> Researcher | None:
    """The researcher account with this e-mail (as accounts store it: trimmed, lower-case)."""
    return db.session.scalar(select(Researcher).where(Researcher.email == email.strip().lower()))


def role_of(study: Study, researcher: Researcher) -> str | None:
    """The researcher's role in the study (owner, editor, viewer), or None."""
    member = db.session.get(StudyResearcher, (study.id, researcher.id))
    return None if member is None else member.role


def list_studies(researcher: Researcher | None = None) -> list[StudyListing]:
    """Every study, by slug, with its number of documents; with `researcher`, only the
    studies they have a role in, and their role."""
    documents = (
        select(Document.study_id, func.count(Document.id).label("documents"))
        .group_by(Document.study_id)
        .subquery()
    )
    role = literal(None) if researcher is None else StudyResearcher.role
    query = (
        select(Study, func.coalesce(documents.c.documents, 0), role)
        .outerjoin(documents, documents.c.study_id == Study.id)
        .order_by(Study.slug)
    )
    if researcher is not None:
        query = query.join(
            StudyResearcher,
            (StudyResearcher.study_id == Study.id)
            & (StudyResearcher.researcher_id == researcher.id),
        )
    return [
        StudyListing(
            study.slug, study.title, study.kind, study.status, count, study.taxonomy_version, role
        )
        for study, count, role in db.session.execute(query).all()
    ]
