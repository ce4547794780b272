"""A study's documents as a researcher manages them (issue 30 point 3, docs/studies.md):
retire (no new sessions from any door: /start passes it over, a document link refuses a
new session; the worker's session on it goes on, and it stays in exports and reports),
un-retire, and delete one nothing points to.

One code path: the console's documents page (app.studies.setup_pages) and the commands
`flask retire-documents` and `flask delete-documents` (app.studies.cli) call these
functions. Each is all or nothing: when any document is refused (an unknown id, or
something points to a document to delete), nothing changes and DocumentsRefused names
every refused document with its reason.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from app.core.extensions import db
from app.models import (
    AdjudicationDecision,
    AnnotationSession,
    Document,
    Study,
    Suggestion,
    TrainingAttempt,
    ValidationItem,
    utcnow,
)

# What may point to a document, each with why that keeps it: a document with any of them
# is retired, never deleted (nothing a worker, validator or researcher did is lost).
_POINTING = (
    (AnnotationSession, "session", "retire it instead: it keeps its sessions"),
    (ValidationItem, "validation item", "it is judged in a validation round"),
    (Suggestion, "suggestion", "model suggestions were imported for it"),
    (TrainingAttempt, "practice attempt", "workers practised on it"),
    (AdjudicationDecision, "adjudication decision", "its spans were adjudicated"),
)


@dataclass(frozen=True, slots=True)
class Refusal:
    """A document left as it was, and why."""

    document_id: str  # its external id, as the researcher named it
    reason: str

    def __str__(self) -> str:
        return f"{self.document_id}: {self.reason}"


class DocumentsRefused(Exception):
    """Nothing changed: every refused document with its reason."""

    def __init__(self, refusals: Sequence[Refusal]) -> None:
        super().__init__("; ".join(str(refusal) for refusal in refusals))
        self.refusals = list(refusals)


def study_documents(study: Study, external_ids: Iterable[str]) -> list[Document]:
    """The study's documents with these external ids, in the order given (an id named
    twice counts once); DocumentsRefused naming every id the study does not have."""
    wanted = list(dict.fromkeys(external_ids))
    found = {
        document.external_id: document
        for document in db.session.scalars(
            select(Document).where(Document.study_id == study.id, Document.external_id.in_(wanted))
        )
    }
    unknown = [
        Refusal(external_id, f"no document with this id in study {study.slug!r}")
        for external_id in wanted
        if external_id not in found
    ]
    if unknown:
        raise DocumentsRefused(unknown)
    return [found[external_id] for external_id in wanted]


def set_retired(documents: Sequence[Document], retired: bool) -> list[Document]:
    """Retire the documents (or, `retired` false, hand them out again), in one
    transaction; the documents whose state changed (one already so is left as it is)."""
    now = utcnow()
    changed = [d for d in documents if (d.retired_at is not None) != retired]
    for document in changed:
        document.retired_at = now if retired else None
    db.session.commit()
    return changed


def deletion_refusal(document: Document) -> str | None:
    """Why the document may not be deleted (something points to it: _POINTING), or None."""
    for model, noun, why in _POINTING:
        count = db.session.scalar(
            select(func.count()).select_from(model).where(model.document_id == document.id)
        )
        if count:
            return f"it has {count} {noun}{'s' if count != 1 else ''} ({why})."
    return None


def delete_documents(documents: Sequence[Document], *, dry_run: bool = False) -> None:
    """Delete the documents (their paragraphs go with them) in one transaction, or none
    of them: DocumentsRefused when anything points to any of them. `dry_run` checks only."""
    refusals = _deletion_refusals(documents)
    if refusals:
        raise DocumentsRefused(refusals)
    if dry_run:
        return
    names = [document.external_id for document in documents]
    for document in documents:
        db.session.delete(document)
    try:
        db.session.commit()
    except IntegrityError as error:
        # A session (or item) came to point to one of them between the check and the
        # delete: the foreign key refuses, and nothing is deleted.
        db.session.rollback()
        refusals = _deletion_refusals(documents)
        raise DocumentsRefused(
            refusals or [Refusal(name, "something came to point to it meanwhile") for name in names]
        ) from error


def _deletion_refusals(documents: Sequence[Document]) -> list[Refusal]:
    return [
        Refusal(document.external_id, reason)
        for document in documents
        if (reason := deletion_refusal(document))
    ]
