"""Making a study from the console (docs/studies.md, "The console's studies"): a new one
with its taxonomy, or a copy of another (a pilot into the main study).

Each is one transaction: the study row, its owner, its taxonomy version and (for a copy)
its documents are written together or not at all, so a refused slug or taxonomy leaves
nothing behind.
"""

from __future__ import annotations

import copy

from sqlalchemy import insert, literal, select

from app.core.extensions import db
from app.models import Document, Paragraph, Researcher, Study, TaxonomyVersion, utcnow
from app.rules.studies import StudyStatus
from app.studies.service import TITLE_MAX_LENGTH, StudyError, create_study, default_study
from app.studies.taxonomies import store_taxonomy
from app.taxonomy import load_taxonomy_text

# The columns a copied document keeps (its id and study are the copy's own).
DOCUMENT_COLUMNS = (
    "external_id",
    "title",
    "language",
    "meta",
    "entities",
    "gold",
    "content_hash",
    "paragraph_count",
    "retired_at",  # a document retired in the pilot stays retired in its copy
)


def current_yaml(study: Study) -> str | None:
    """The YAML text of the study's current taxonomy version (None: it has none)."""
    if not study.taxonomy_version:
        return None
    return db.session.scalar(
        select(TaxonomyVersion.yaml_text).where(
            TaxonomyVersion.study_id == study.id,
            TaxonomyVersion.version == study.taxonomy_version,
        )
    )


def new_study(
    slug: str,
    title: str | None,
    kind: str,
    owner: Researcher,
    *,
    judges: Study | None = None,
    taxonomy: tuple[bytes, str] | None = None,
) -> Study:
    """A new draft study owned by `owner`, with `taxonomy` ((the YAML's bytes, its file
    name): checked as `flask check-taxonomy` checks it) or else a copy of the default
    study's current taxonomy. StudyError (TaxonomyError: every problem at its line) and
    nothing written when the slug, title, kind or taxonomy is refused."""
    if taxonomy is not None:
        raw, source = taxonomy
        load_taxonomy_text(raw, source)  # its problems before anything is written
    else:
        base = default_study()
        text = current_yaml(base)
        if text is None:
            raise StudyError(f"the default study has no taxonomy to copy: upload one for {slug!r}")
        raw, source = text.encode("utf-8"), f"copy of {base.slug} ({base.taxonomy_version})"
    try:
        study = create_study(slug, title, kind, owner=owner, judges=judges, commit=False)
        store_taxonomy(study, raw, source)  # commits the study and its version together
    except Exception:
        db.session.rollback()
        raise
    return study


def copy_study(source: Study, slug: str, owner: Researcher, title: str | None = None) -> Study:
    """A draft copy of `source` under a new slug, owned by `owner`: its kind and the study
    it judges, its current taxonomy version and settings, its documents with their
    paragraphs (attention checks and practice documents included). Not copied: sessions,
    annotations, suggestions, rounds, decisions, researchers' roles, the Prolific API
    token and a taxonomy file (the copy is set up in the console). StudyError and nothing
    written when the slug is refused."""
    judges = db.session.get(Study, source.judges_study_id) if source.judges_study_id else None
    try:
        study = create_study(
            slug,
            title or f"{source.title} (copy)"[:TITLE_MAX_LENGTH],
            source.kind,
            status=StudyStatus.DRAFT.value,
            owner=owner,
            judges=judges,
            commit=False,
        )
        _copy_documents(source, study)
        text = current_yaml(source)
        if text is not None:  # a version the source took: checked then, copied as it is
            db.session.add(
                TaxonomyVersion(
                    study_id=study.id,
                    version=source.taxonomy_version,
                    yaml_text=text,
                    source=f"copy of {source.slug} ({source.taxonomy_version})",
                    created_at=utcnow(),
                )
            )
            study.taxonomy_version = source.taxonomy_version
        study.settings = copy.deepcopy(source.settings or {})
        study.prolific_study_id = source.prolific_study_id
        db.session.commit()  # the study, its owner, documents and version together
    except Exception:
        db.session.rollback()
        raise
    return study


def _copy_documents(source: Study, target: Study) -> None:
    """Two statements whatever the number of documents: the documents, then their
    paragraphs (found through the external id, unique per study)."""
    now = utcnow()
    columns = [getattr(Document, name) for name in DOCUMENT_COLUMNS]
    db.session.execute(
        insert(Document).from_select(
            ["study_id", *DOCUMENT_COLUMNS, "created_at", "updated_at"],
            select(
                literal(target.id),
                *columns,
                literal(now, Document.created_at.type),
                literal(now, Document.updated_at.type),
            )
            .where(Document.study_id == source.id)
            .order_by(Document.id),
        )
    )
    old = Document.__table__.alias("old")
    new = Document.__table__.alias("new")
    db.session.execute(
        insert(Paragraph).from_select(
            ["document_id", "position", "text"],
            select(new.c.id, Paragraph.position, Paragraph.text)
            .join(old, old.c.id == Paragraph.document_id)
            .join(new, (new.c.external_id == old.c.external_id) & (new.c.study_id == target.id))
            .where(old.c.study_id == source.id),
        )
    )
