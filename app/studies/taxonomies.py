"""A study's taxonomy, versioned in the database (issue 30).

Every taxonomy a study had is a row of `taxonomy_versions` (its YAML text, its hash, when
it came): stored by `store_taxonomy` (an upload, `flask create-study --taxonomy`, or the
default study's TAXONOMY_PATH at start), checked exactly as `flask check-taxonomy` checks
a file. The study's row names the version new sessions get (`studies.taxonomy_version`)
and holds its `study:`, `training:`, `consent:`, `survey:`, ... sections as data
(`studies.settings`); a session keeps the version it started with
(`annotation_sessions.taxonomy_version`), and the exports say it.

Which taxonomy a request works with is decided by the database alone: the session's
version for a request about a session (its capability token in the address), else the
current study's. Each process keeps parsed taxonomies by version hash (the hash names the
text, so any process parses the same) and, for the worker's writes, which version a
session token has (a session's version never changes): neither cache decides anything
the database did not say. So a version stored by one process is served by every other at
its next request, without a restart.

Mid-study, a new version may add categories and change texts, but not remove (or rename)
a category key the study's annotations use: `store_taxonomy` refuses it, naming the keys.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import yaml
from flask import Flask, g, has_request_context, request
from sqlalchemy import case, select
from sqlalchemy.exc import OperationalError, ProgrammingError

from app.core.extensions import db
from app.core.persistence import upsert_insert
from app.models import Annotation, AnnotationSession, Study, TaxonomyVersion, utcnow
from app.studies.current import current_study
from app.studies.service import StudyError, default_study
from app.taxonomy import (
    Taxonomy,
    TaxonomyError,
    file_taxonomy,
    load_taxonomy_text,
    set_resolver,
)

log = logging.getLogger(__name__)

# The taxonomy's sections a study row holds as data (studies.settings).
SECTIONS = ("study", "training", "consent", "survey", "suggestions", "checks", "validation")
PARSED_SIZE = 64  # parsed taxonomies kept per process, by version hash
TOKENS_SIZE = 20_000  # session token -> version, per process

_parsed: OrderedDict[str, Taxonomy] = OrderedDict()
_versions: OrderedDict[str, str] = OrderedDict()
_lock = threading.Lock()


class TaxonomyRefused(StudyError):
    """A taxonomy a study cannot take: its problems, one sentence each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class StoredTaxonomy:
    """What store_taxonomy did: the version now current, and whether it is new."""

    version: str
    created: bool
    taxonomy: Taxonomy


# --- storing a version ----------------------------------------------------------------------


def store_taxonomy(
    study: Study, raw: bytes, source: str, *, from_file: bool = False
) -> StoredTaxonomy:
    """Check `raw` as `flask check-taxonomy` does (TaxonomyError listing every problem at
    its line), store it as a version of the study unless it is one already, and make it
    the version new sessions get, with its sections as the study's settings; commits.
    TaxonomyRefused when the study is managed by a file (but for that file at start) or
    the version would drop a category key the study's annotations use."""
    if study.taxonomy_file and not from_file:
        raise TaxonomyRefused(
            [
                f"study {study.slug!r} takes its taxonomy from the file {study.taxonomy_file} "
                "(TAXONOMY_PATH): edit that file and restart instead"
            ]
        )
    taxonomy = load_taxonomy_text(raw, source)
    if study.taxonomy_version != taxonomy.version:
        problems = compatibility_problems(study, taxonomy)
        if problems:
            raise TaxonomyRefused(problems)
    text = raw.decode("utf-8")
    dialect = db.session.get_bind().dialect.name
    inserted = db.session.execute(
        upsert_insert(dialect)(TaxonomyVersion)
        .values(
            study_id=study.id,
            version=taxonomy.version,
            yaml_text=text,
            source=source[:1000],
            created_at=utcnow(),
        )
        .on_conflict_do_nothing(index_elements=["study_id", "version"])
        .returning(TaxonomyVersion.id)
    ).first()
    study.taxonomy_version = taxonomy.version
    study.settings = sections_of(text)
    if taxonomy.study.prolific_study_id:
        study.prolific_study_id = taxonomy.study.prolific_study_id
    db.session.commit()
    _remember(taxonomy)
    return StoredTaxonomy(taxonomy.version, inserted is not None, taxonomy)


def sections_of(text: str) -> dict[str, Any]:
    """The study's settings as data: the taxonomy's sections SECTIONS that it has."""
    data = yaml.safe_load(text) or {}
    return {key: data[key] for key in SECTIONS if key in data}


def used_keys(study: Study) -> set[str]:
    """The category keys the study's annotations (live or removed) use."""
    query = (
        select(Annotation.category)
        .join(AnnotationSession, Annotation.session_id == AnnotationSession.id)
        .where(AnnotationSession.study_id == study.id, Annotation.category.is_not(None))
        .distinct()
    )
    return set(db.session.scalars(query))


def compatibility_problems(study: Study, taxonomy: Taxonomy) -> list[str]:
    """Why `taxonomy` may not follow the study's version mid-study: the category keys its
    annotations use that it lacks (removed or renamed)."""
    missing = sorted(used_keys(study) - set(taxonomy.keys))
    if not missing:
        return []
    keys = ", ".join(repr(key) for key in missing)
    return [
        f"categories {keys} are used by annotations of study {study.slug!r}: a new version "
        "may add categories and change texts, not remove or rename a key in use"
    ]


def versions(study: Study) -> list[TaxonomyVersion]:
    """The study's taxonomy versions, oldest first."""
    query = (
        select(TaxonomyVersion)
        .where(TaxonomyVersion.study_id == study.id)
        .order_by(TaxonomyVersion.id)
    )
    return list(db.session.scalars(query))


# --- the file of the default study ----------------------------------------------------------


def sync_file_taxonomy(app: Flask) -> None:
    """At start: the default study takes its taxonomy from TAXONOMY_PATH; a file that
    changed becomes a new version. Skipped while the database has no studies table yet
    (`flask db upgrade` starts the app first); a file the study cannot take (a key in use
    removed) is logged and the study keeps its version."""
    path = str(app.config["TAXONOMY_PATH"])
    with app.app_context():
        try:
            study = default_study()
        except (OperationalError, ProgrammingError):
            db.session.rollback()
            return
        try:
            if study.taxonomy_file != path:
                study.taxonomy_file = path
            with open(path, "rb") as file:
                raw = file.read()
            store_taxonomy(study, raw, path, from_file=True)
        except (TaxonomyRefused, TaxonomyError) as error:
            db.session.rollback()
            log.error("taxonomy %s not taken by study %r: %s", path, study.slug, error)
        finally:
            db.session.remove()


# --- which taxonomy a request works with ----------------------------------------------------


def request_taxonomy() -> Taxonomy:
    """The taxonomy of this request or command (app.taxonomy.current_taxonomy asks here):
    the version of the session the address names, else the current study's; the file's
    when the database holds none. Remembered for the rest of the request."""
    cached = g.get("falte_taxonomy")
    if cached is not None:
        return cached
    version = _session_version()
    if version is None:
        version = current_study().taxonomy_version
    taxonomy = (taxonomy_of(version) if version else None) or file_taxonomy()
    g.falte_taxonomy = taxonomy
    return taxonomy


def forget_request_taxonomy() -> None:
    """The study changed (use_study) or a request begins: decide the taxonomy again."""
    g.pop("falte_taxonomy", None)


def taxonomy_of(version: str) -> Taxonomy | None:
    """The taxonomy stored under this version hash (parsed once per process), or None."""
    with _lock:
        found = _parsed.get(version)
        if found is not None:
            _parsed.move_to_end(version)
            return found
    text = db.session.scalar(
        select(TaxonomyVersion.yaml_text).where(TaxonomyVersion.version == version).limit(1)
    )
    if text is None:
        return None
    taxonomy = load_taxonomy_text(text.encode("utf-8"), f"taxonomy version {version}")
    _remember(taxonomy)
    return taxonomy


def _remember(taxonomy: Taxonomy) -> None:
    with _lock:
        _parsed[taxonomy.version] = taxonomy
        _parsed.move_to_end(taxonomy.version)
        while len(_parsed) > PARSED_SIZE:
            _parsed.popitem(last=False)


def remember_session_version(token: str, version: str) -> None:
    """A new session's version, known where it was made: its first write in this process
    needs no lookup (a session's version never changes). Only a version the database
    holds: the same answer _session_version would give."""
    with _lock:
        if version in _parsed:
            _versions[token] = version
            while len(_versions) > TOKENS_SIZE:
                _versions.popitem(last=False)


def _session_version() -> str | None:
    """The taxonomy version of the annotation session whose token the request's address
    holds; None outside such a request (or when its study has no versions)."""
    if not has_request_context():
        return None
    token = (request.view_args or {}).get("token")
    if not isinstance(token, str) or not token:
        return None
    with _lock:
        version = _versions.get(token)
    if version is not None:
        return version
    own = TaxonomyVersion.version == AnnotationSession.taxonomy_version
    row = db.session.execute(
        select(TaxonomyVersion.version, own)
        .join(AnnotationSession, AnnotationSession.study_id == TaxonomyVersion.study_id)
        .where(AnnotationSession.token == token)
        .order_by(case((own, 0), else_=1), TaxonomyVersion.id)
        .limit(1)
    ).first()
    if row is None:
        return None
    if row[1]:  # the session's own version: it never changes, remember it
        with _lock:
            _versions[token] = row[0]
            while len(_versions) > TOKENS_SIZE:
                _versions.popitem(last=False)
    return row[0]


def init_app(app: Flask) -> None:
    """Answer current_taxonomy() from the database, and take the default study's file."""
    set_resolver(app, request_taxonomy)
    sync_file_taxonomy(app)
