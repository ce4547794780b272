"""Suggestions as researchers get them: the `--what suggestions` export (every suggestion
with every decision on it) and the figures per source (dashboard, study-report).

Figures per source (the `suggestions` part of study-report's JSON, every value 0-100,
null when there is nothing to divide by), over submitted sessions in the show arm, on
documents with suggestions from that source, attention checks left out; decoy suggestions
are left out here (app.suggestions.decoys measures them):

- accepted / edited / rejected: the suggestions decided that way, as a share of the
  suggestions decided (a decision counts while it stands: an accepted suggestion whose
  annotation was removed, or a rejection undone, is not counted). accepted + edited is the
  model's precision as the workers judged it in the task.
- worker_added: the workers' own annotations (origin `worker`) as a share of every
  annotation they kept (their own, accepted and edited): what the model missed (recall
  misses), in the workers' judgment.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select

from app.core.extensions import db
from app.exports.record import iso_text  # the exports' one ISO-8601 form
from app.models import (
    Annotation,
    AnnotationSession,
    Document,
    Suggestion,
    SuggestionRejection,
)
from app.rules.statuses import SessionStatus
from app.studies import current_study_id

BATCH = 1000
DECISION_OF_ORIGIN = {"suggestion-accepted": "accepted", "suggestion-edited": "edited"}


def _span(paragraph_id, start, end, text) -> dict[str, Any] | None:
    if paragraph_id is None:
        return None
    return {"paragraph_id": paragraph_id, "start": start, "end": end, "text": text}


def _decisions(document: str | None) -> dict[int, list[dict[str, Any]]]:
    """suggestion pk -> every decision made on it (standing or not), oldest first."""
    made = select(
        Annotation.suggestion_id,
        Annotation.session_id,
        Annotation.origin,
        Annotation.client_id,
        Annotation.created_at,
        Annotation.deleted_at,
    ).where(Annotation.suggestion_id.is_not(None))
    rejected = select(
        SuggestionRejection.suggestion_id,
        SuggestionRejection.session_id,
        SuggestionRejection.created_at,
        SuggestionRejection.withdrawn_at,
    )
    if document is not None:
        in_document = (
            select(Suggestion.id)
            .join(Document)
            .where(Document.external_id == document, Document.study_id == current_study_id())
        )
        made = made.where(Annotation.suggestion_id.in_(in_document))
        rejected = rejected.where(SuggestionRejection.suggestion_id.in_(in_document))
    decisions: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for pk, session_id, origin, client_id, at, removed in db.session.execute(made):
        decisions[pk].append(
            {
                "session_id": str(session_id),
                "decision": DECISION_OF_ORIGIN[origin],
                "annotation_id": client_id,
                "at": iso_text(at),
                "withdrawn_at": iso_text(removed),
            }
        )
    for pk, session_id, at, withdrawn in db.session.execute(rejected):
        decisions[pk].append(
            {
                "session_id": str(session_id),
                "decision": "rejected",
                "annotation_id": None,
                "at": iso_text(at),
                "withdrawn_at": iso_text(withdrawn),
            }
        )
    for items in decisions.values():
        items.sort(key=lambda d: (int(d["session_id"]), d["at"] or ""))
    return decisions


def iter_suggestion_records(document: str | None = None) -> Iterator[dict[str, Any]]:
    """One suggestions record (docs/contracts.md#other-exports) per suggestion, by
    document, paragraph and start.

    `category` stays one key (the suggestion's first label); `labels` lists all of them
    (a sentence GPT-4 gave several types is one suggestion, one unit, with several labels).

    Each decision also says `withdrawn_at` (null while it stands): the annotation made by
    an Accept or Edit was removed, or a rejection undone; nothing a worker did is lost."""
    decisions = _decisions(document)
    query = (
        select(Suggestion, Document.external_id)
        .join(Document, Suggestion.document_id == Document.id)
        .where(Suggestion.study_id == current_study_id())
        .order_by(
            Document.external_id, Suggestion.paragraph_id, Suggestion.span_start, Suggestion.id
        )
    )
    if document is not None:
        query = query.where(Document.external_id == document)
    result = db.session.execute(query.execution_options(yield_per=BATCH, stream_results=True))
    for row, document_id in result:
        yield {
            "suggestion_id": row.external_id,
            "source": row.source,
            "document_id": document_id,
            "category": row.category,  # the first of `labels` (one key, as the contract)
            "labels": list(row.labels or [row.category]),  # every type the model gave
            "span": _span(row.paragraph_id, row.span_start, row.span_end, row.span_text),
            "paired_span": _span(
                row.paired_paragraph_id, row.paired_start, row.paired_end, row.paired_text
            ),
            "question": row.question,
            "decoy": bool(row.decoy),  # issue 32: planted deliberately wrong
            "decisions": decisions.get(row.id, []),
        }
        db.session.expunge(row)


def count_suggestions(document: str | None = None) -> int:
    """How many records iter_suggestion_records yields."""
    query = (
        select(func.count(Suggestion.id))
        .join(Document)
        .where(Suggestion.study_id == current_study_id())
    )
    if document is not None:
        query = query.where(
            Document.external_id == document, Document.study_id == current_study_id()
        )
    return db.session.scalar(query) or 0


# --- figures per source -----------------------------------------------------------------


@dataclass
class SourceCounts:
    """One source's decided suggestions and the annotations kept beside them."""

    accepted: int = 0
    edited: int = 0
    rejected: int = 0
    worker_added: int = 0

    @property
    def decided(self) -> int:
        """Suggestions decided (standing decisions)."""
        return self.accepted + self.edited + self.rejected


def _percent(part: int, whole: int) -> float | None:
    return round(100 * part / whole, 2) if whole else None


def source_shares(counts: SourceCounts) -> dict[str, float | None]:
    """The study-report figures of one source (rule in the module docstring), 0-100."""
    kept = counts.accepted + counts.edited + counts.worker_added
    return {
        "accepted": _percent(counts.accepted, counts.decided),
        "edited": _percent(counts.edited, counts.decided),
        "rejected": _percent(counts.rejected, counts.decided),
        "worker_added": _percent(counts.worker_added, kept),
    }


def source_counts(
    document_ids: set[int] | None = None, left_out: set[int] | None = None
) -> dict[str, SourceCounts]:
    """Per source: standing decisions and workers' own annotations, in submitted sessions
    of the show arm on documents with that source's suggestions (attention checks out);
    `document_ids` keeps only those documents, `left_out` drops the sessions of these
    annotators (database ids: the workers app.crowd.checks.flagged leaves out)."""
    sessions = select(AnnotationSession.id, AnnotationSession.document_id).where(
        AnnotationSession.study_id == current_study_id(),
        AnnotationSession.status == SessionStatus.SUBMITTED,
        AnnotationSession.arm == "show",
        AnnotationSession.is_attention_check.is_(False),
    )
    if left_out:
        sessions = sessions.where(AnnotationSession.annotator_id.not_in(left_out))
    sessions = sessions.subquery()
    # Decoys are measured on their own (app.suggestions.decoys), never in these shares.
    sources = (
        select(Suggestion.document_id, Suggestion.source)
        .where(Suggestion.decoy.is_(False), Suggestion.study_id == current_study_id())
        .distinct()
    )
    if document_ids is not None:
        sources = sources.where(Suggestion.document_id.in_(document_ids))
    per_document: dict[int, set[str]] = defaultdict(set)
    for document_id, source in db.session.execute(sources):
        per_document[document_id].add(source)
    counts: dict[str, SourceCounts] = {}
    if not per_document:
        return counts
    for source in sorted({s for group in per_document.values() for s in group}):
        counts[source] = SourceCounts()
    made = (
        select(Suggestion.source, Annotation.origin, func.count())
        .select_from(Annotation)
        .join(Suggestion, Annotation.suggestion_id == Suggestion.id)
        .join(sessions, sessions.c.id == Annotation.session_id)
        .where(Annotation.deleted_at.is_(None), Suggestion.decoy.is_(False))
        .group_by(Suggestion.source, Annotation.origin)
    )
    for source, origin, count in db.session.execute(made):
        if source in counts:
            setattr(counts[source], DECISION_OF_ORIGIN[origin], count)
    rejected = (
        select(Suggestion.source, func.count())
        .select_from(SuggestionRejection)
        .join(Suggestion, SuggestionRejection.suggestion_id == Suggestion.id)
        .join(sessions, sessions.c.id == SuggestionRejection.session_id)
        .where(SuggestionRejection.withdrawn_at.is_(None), Suggestion.decoy.is_(False))
        .group_by(Suggestion.source)
    )
    for source, count in db.session.execute(rejected):
        if source in counts:
            counts[source].rejected = count
    own = (
        select(sessions.c.document_id, func.count())
        .select_from(Annotation)
        .join(sessions, sessions.c.id == Annotation.session_id)
        .where(Annotation.deleted_at.is_(None), Annotation.origin == "worker")
        .group_by(sessions.c.document_id)
    )
    for document_id, count in db.session.execute(own):
        for source in per_document.get(document_id, ()):
            counts[source].worker_added += count
    return counts


def suggestion_figures(
    document_ids: set[int] | None = None, left_out: set[int] | None = None
) -> dict[str, dict[str, Any]]:
    """{source: {"accepted", "edited", "rejected", "worker_added"}} in percent."""
    counts = source_counts(document_ids, left_out)
    return {source: source_shares(c) for source, c in counts.items()}


def counts_table(counts: Mapping[str, SourceCounts]) -> list[dict[str, Any]]:
    """Rows for the dashboard: counts and shares per source."""
    return [
        {"source": source, "counts": c, "decided": c.decided, **source_shares(c)}
        for source, c in counts.items()
    ]
