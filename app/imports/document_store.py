"""Storing input documents: new, updated or unchanged, all or nothing.

Parsing and normalisation live in app/imports/document_formats.py (pure); this module compares
the parsed documents with the database and writes them in one transaction (`flask
import-documents`: app/imports/cli.py).

A document belongs to one study (the current one: app.studies) and is matched by its
external id in that study; another study's document of the same id is another document.
Same paragraphs (same content hash) and same title, language, entities, meta and gold:
unchanged. Same paragraphs, other metadata: updated in
place (offsets don't move). Other paragraphs: replaced, unless annotations (live or
removed) or validation items point into the old text; then the whole import is refused.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from sqlalchemy import case, delete, func, insert, null, select, update

from app.core.errors import ProblemsError
from app.core.extensions import db
from app.imports.document_formats import DocumentInput
from app.models import Annotation, AnnotationSession, Document, Paragraph, ValidationItem
from app.studies import current_study_id

# Rows per statement: well under SQLite's and PostgreSQL's bound-parameter limits.
CHUNK = 500

Progress = Callable[[int], None]
T = TypeVar("T")


@dataclass
class ImportReport:
    """External ids of the documents an import created, updated or left unchanged."""

    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        """How many documents the import covered."""
        return len(self.created) + len(self.updated) + len(self.unchanged)

    def summary(self) -> str:
        """`N documents: X new, Y updated, Z unchanged`."""
        documents = "document" if self.total == 1 else "documents"
        return (
            f"{self.total} {documents}: {len(self.created)} new, "
            f"{len(self.updated)} updated, {len(self.unchanged)} unchanged"
        )


class DocumentImportRefused(ProblemsError):
    """The import would break stored work; nothing was written. `problems`: one per document."""


@dataclass
class _Plan:
    report: ImportReport = field(default_factory=ImportReport)
    new: list[DocumentInput] = field(default_factory=list)
    new_text: list[tuple[Document, DocumentInput]] = field(default_factory=list)
    new_metadata: list[tuple[Document, DocumentInput]] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)


def preview_import(inputs: Sequence[DocumentInput]) -> ImportReport:
    """What import_documents would do, without writing; raises DocumentImportRefused too."""
    try:
        plan = _plan(inputs, current_study_id())
    finally:
        db.session.rollback()
    if plan.refusals:
        raise DocumentImportRefused(plan.refusals)
    return plan.report


def import_documents(
    inputs: Sequence[DocumentInput], *, progress: Progress | None = None
) -> ImportReport:
    """Store the documents in one transaction; on any refusal roll back and raise."""
    advance = progress or (lambda _count: None)
    study_id = current_study_id()
    try:
        plan = _plan(inputs, study_id)
        if plan.refusals:
            raise DocumentImportRefused(plan.refusals)
        advance(len(plan.report.unchanged))
        _insert_new(plan.new, study_id, advance)
        for document, source in plan.new_text:
            _replace_text(document, source)
            advance(1)
        for document, source in plan.new_metadata:
            _set_metadata(document, source)
            advance(1)
        db.session.commit()
    except BaseException:
        db.session.rollback()
        raise
    return plan.report


def _plan(inputs: Sequence[DocumentInput], study_id: int) -> _Plan:
    plan = _Plan()
    existing: dict[str, Document] = {}
    ids = [source.external_id for source in inputs]
    for chunk in _chunks(ids):
        query = select(Document).where(
            Document.study_id == study_id, Document.external_id.in_(chunk)
        )
        existing.update((doc.external_id, doc) for doc in db.session.scalars(query))
    for source in inputs:
        document = existing.get(source.external_id)
        if document is None:
            plan.new.append(source)
            plan.report.created.append(source.external_id)
        elif document.content_hash != source.content_hash:
            plan.new_text.append((document, source))
            plan.report.updated.append(source.external_id)
        elif _metadata_differs(document, source):
            plan.new_metadata.append((document, source))
            plan.report.updated.append(source.external_id)
        else:
            plan.report.unchanged.append(source.external_id)
    usage = _stored_work([document.id for document, _ in plan.new_text])
    for document, _ in plan.new_text:
        annotations, items = usage.get(document.id, (0, 0))
        if annotations or items:
            plan.refusals.append(_text_changed(document.external_id, annotations, items))
    return plan


def _stored_work(document_ids: list[int]) -> dict[int, tuple[int, int]]:
    """Annotations (live or removed) and validation items per document id."""
    annotations: dict[int, int] = {}
    items: dict[int, int] = {}
    for chunk in _chunks(document_ids):
        annotation_counts = (
            select(AnnotationSession.document_id, func.count(Annotation.id))
            .join(Annotation, Annotation.session_id == AnnotationSession.id)
            .where(AnnotationSession.document_id.in_(chunk))
            .group_by(AnnotationSession.document_id)
        )
        annotations.update(db.session.execute(annotation_counts).all())
        item_counts = (
            select(ValidationItem.document_id, func.count(ValidationItem.id))
            .where(ValidationItem.document_id.in_(chunk))
            .group_by(ValidationItem.document_id)
        )
        items.update(db.session.execute(item_counts).all())
    return {
        doc_id: (annotations.get(doc_id, 0), items.get(doc_id, 0))
        for doc_id in annotations.keys() | items.keys()
    }


def _text_changed(external_id: str, annotations: int, items: int) -> str:
    """The refusal for a document whose paragraphs changed under stored work."""
    parts = [plural(annotations, "annotation"), plural(items, "validation item")]
    what = " and ".join(part for part in parts if part)
    verb = "points" if annotations + items == 1 else "point"
    return (
        f"{external_id}: text changed but {what} {verb} into it; "
        "import under a new id or remove them first"
    )


def _metadata_differs(document: Document, source: DocumentInput) -> bool:
    return (
        document.title != source.title
        or document.language != source.language
        or list(document.entities or []) != list(source.entities)
        or (document.meta or {}) != source.meta
        or document.gold != source.gold
    )


def _insert_new(sources: list[DocumentInput], study_id: int, advance: Progress) -> None:
    # Bulk INSERT ... RETURNING per chunk of documents (SQLite falls back to a statement per
    # row when the ORM flushes objects and needs their ids in order), then the paragraphs
    # as one executemany: a handful of statements, not one per row.
    for chunk in _chunks(sources):
        rows = [
            {
                "study_id": study_id,
                "external_id": source.external_id,
                "content_hash": source.content_hash,
                "paragraph_count": len(source.paragraphs),
                **_metadata(source),
            }
            for source in chunk
        ]
        returning = insert(Document).returning(Document.external_id, Document.id)
        ids = dict(db.session.execute(returning, rows).all())
        _insert_paragraphs(
            [
                {"document_id": ids[source.external_id], "position": position, "text": text}
                for source in chunk
                for position, text in enumerate(source.paragraphs)
            ]
        )
        advance(len(chunk))


def _replace_text(document: Document, source: DocumentInput) -> None:
    db.session.execute(
        delete(Paragraph).where(Paragraph.document_id == document.id),
        execution_options={"synchronize_session": False},
    )
    _insert_paragraphs(
        [
            {"document_id": document.id, "position": position, "text": text}
            for position, text in enumerate(source.paragraphs)
        ]
    )
    _set_metadata(document, source)
    document.content_hash = source.content_hash
    document.paragraph_count = len(source.paragraphs)
    # Sessions without annotations may have read further than the new text goes.
    last = len(source.paragraphs) - 1
    db.session.execute(
        update(AnnotationSession)
        .where(AnnotationSession.document_id == document.id, AnnotationSession.furthest > last)
        .values(
            furthest=last,
            position=case(
                (AnnotationSession.position > last, last), else_=AnnotationSession.position
            ),
        ),
        execution_options={"synchronize_session": False},
    )
    db.session.expire(document, ["paragraphs"])


def _set_metadata(document: Document, source: DocumentInput) -> None:
    for name, value in _metadata(source).items():
        setattr(document, name, value)
    if not source.gold:
        # SQL NULL, not the JSON value null, so that `gold IS NULL` finds ordinary documents.
        document.gold = null()


def _metadata(source: DocumentInput) -> dict[str, Any]:
    """Title, language, entities, meta and (when given) gold as column values; no gold: left out."""
    # New objects, not in-place edits, so that SQLAlchemy sees the JSON columns change.
    values: dict[str, Any] = {
        "title": source.title,
        "language": source.language,
        "entities": list(source.entities),
        "meta": dict(source.meta),
    }
    if source.gold:
        values["gold"] = [dict(span) for span in source.gold]
    return values


def _insert_paragraphs(rows: list[dict[str, object]]) -> None:
    for chunk in _chunks(rows, size=5 * CHUNK):
        db.session.execute(insert(Paragraph), chunk)


def _chunks(items: Sequence[T], size: int = CHUNK) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def plural(count: int, noun: str) -> str:
    """'1 noun', 'N nouns', or '' for none."""
    if not count:
        return ""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
