"""Adjudication state in the database: the marks to adjudicate, and decisions saved once.

A decision is saved with one INSERT ... ON CONFLICT DO NOTHING on (document, client id),
as the worker API saves annotations: a replay of the same body answers 200 with what is
stored, the same id with another body answers 409, and nothing is ever overwritten. The
current decision on a candidate is its latest row.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import select

from app.adjudication.candidates import (
    DECISIONS,
    Candidate,
    Mark,
    Proposal,
    accepted,
    group_candidates,
    merged,
)
from app.core.errors import ApiError
from app.core.extensions import db
from app.core.persistence import upsert_insert
from app.models import (
    NOT_FROM_DECOY,
    AdjudicationDecision,
    Annotation,
    AnnotationSession,
    Annotator,
    Document,
    Paragraph,
    Researcher,
)
from app.rules.annotation import check_severity
from app.rules.spans import Span, SpanError, check_annotation
from app.rules.statuses import SessionStatus
from app.studies import current_study_id
from app.taxonomy import Taxonomy

MAX_NOTE = 2000
DECISIONS_TABLE = AdjudicationDecision.__table__


def document_or_404(external_id: str) -> Document:
    """The document with this external id, or 404."""
    document = db.session.scalar(
        select(Document).filter_by(external_id=external_id, study_id=current_study_id())
    )
    if document is None:
        raise ApiError.not_found(f"No document has the id {external_id!r}.")
    return document


def paragraph_texts(document_id: int) -> dict[int, str]:
    """position -> text for one document."""
    rows = db.session.execute(
        select(Paragraph.position, Paragraph.text).where(Paragraph.document_id == document_id)
    )
    return {position: text for position, text in rows}


def load_marks(document_id: int) -> list[Mark]:
    """Live annotations of the document's submitted sessions, as marks."""
    query = (
        select(Annotation, Annotator.platform, Annotator.external_id)
        .join(AnnotationSession, Annotation.session_id == AnnotationSession.id)
        .join(Annotator, AnnotationSession.annotator_id == Annotator.id)
        .where(
            AnnotationSession.document_id == document_id,
            AnnotationSession.status == SessionStatus.SUBMITTED,
            Annotation.deleted_at.is_(None),
            NOT_FROM_DECOY,  # what was taken from a decoy is no candidate for gold
        )
    )
    marks = []
    for row, platform, external_id in db.session.execute(query):
        paired = (
            None
            if row.paired_paragraph_id is None
            else Span(row.paired_paragraph_id, row.paired_start, row.paired_end, row.paired_text)
        )
        marks.append(
            Mark(
                annotation_id=row.id,
                annotator=f"{platform}:{external_id}",
                category=row.category,
                span=Span(row.paragraph_id, row.span_start, row.span_end, row.span_text),
                paired_span=paired,
                comment=row.comment,
                unit_id=row.unit_id if row.unit_id is not None else row.id,
                severity=row.severity,
            )
        )
    return marks


def decision_history(document_id: int) -> list[AdjudicationDecision]:
    """Every decision on a document, oldest first."""
    return list(
        db.session.scalars(
            select(AdjudicationDecision)
            .where(AdjudicationDecision.document_id == document_id)
            .order_by(AdjudicationDecision.id)
        )
    )


def current_decisions(history: list[AdjudicationDecision]) -> dict[str, AdjudicationDecision]:
    """candidate key -> its latest decision (later rows supersede earlier ones)."""
    latest: dict[str, AdjudicationDecision] = {}
    for row in history:
        latest[row.candidate_key] = row
    return latest


def decision_json(row: AdjudicationDecision) -> dict[str, Any]:
    """A stored decision as the API returns it."""
    decided_at = row.decided_at
    return {
        "id": row.client_id,
        "candidate": row.candidate_key,
        "paragraph_id": row.paragraph_id,
        "decision": row.decision,
        "boundary": row.boundary,
        "result": row.result,
        "annotators": row.annotators,
        "note": row.note,
        "decided_by": row.decided_by.email,
        "decided_at": decided_at.isoformat() if decided_at else None,
    }


def adjudication_state(document: Document, taxonomy: Taxonomy) -> dict[str, Any]:
    """Everything the page needs: paragraphs, annotators, candidates, current decisions."""
    marks = load_marks(document.id)
    candidates = group_candidates(marks)
    history = decision_history(document.id)
    texts = paragraph_texts(document.id)
    return {
        "document": {
            "id": document.external_id,
            "title": document.title,
            "language": document.language,
            "direction": document.direction,
            "paragraphs": [
                {"paragraph_id": position, "text": texts[position]} for position in sorted(texts)
            ],
        },
        "annotators": sorted({mark.annotator for mark in marks}),
        "categories": [
            {
                "key": c.key,
                "name": c.name,
                "type": c.type,
                "color": c.color,
                "severities": [s.key for s in taxonomy.severities_for(c.key)]
                if taxonomy.severities
                else [],
            }
            for c in taxonomy.categories
        ],
        "severities": [
            {"key": s.key, "name": s.name, "weight": s.weight} for s in taxonomy.severities
        ],
        "candidates": [candidate.to_dict(taxonomy.severity_weights) for candidate in candidates],
        "decisions": [decision_json(row) for row in current_decisions(history).values()],
        "history": len(history),
    }


@dataclass(frozen=True)
class DecisionIn:
    """A validated decision request, before its result is computed."""

    client_id: str
    candidate: str
    decision: str
    boundary: str | None
    category: str | None
    span: Span | None
    paired_span: Span | None
    note: str | None
    severity: str | None = None


def _span(value: Any, field: str) -> Span | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise ApiError.bad_request(f"{field} must be an object.", field=field)
    try:
        span = Span(
            int(value["paragraph_id"]), int(value["start"]), int(value["end"]), value["text"]
        )
    except (KeyError, TypeError, ValueError):
        raise ApiError.bad_request(
            f"{field} needs integer paragraph_id, start, end and a text.", field=field
        ) from None
    if not isinstance(span.text, str):
        raise ApiError.bad_request(f"{field}.text must be a string.", field=f"{field}.text")
    return span


def parse_decision(body: Mapping[str, Any]) -> DecisionIn:
    """Check the shape of a decision body (400 on a malformed one)."""
    client_id = body.get("id")
    try:
        client_id = str(uuid.UUID(str(client_id)))
    except ValueError:
        raise ApiError.bad_request("id must be a UUID made by the page.", field="id") from None
    decision = body.get("decision")
    if decision not in DECISIONS:
        raise ApiError.bad_request(
            f"decision must be one of {', '.join(DECISIONS)}.", field="decision"
        )
    candidate = body.get("candidate")
    if decision == "own" and candidate is None:
        candidate = f"own-{client_id}"
    if not isinstance(candidate, str) or not 0 < len(candidate) <= 80:
        raise ApiError.bad_request("candidate must be a candidate key.", field="candidate")
    for name in ("boundary", "category", "note", "severity"):
        if body.get(name) is not None and not isinstance(body[name], str):
            raise ApiError.bad_request(f"{name} must be a string.", field=name)
    note = body.get("note") or None
    if note is not None and len(note) > MAX_NOTE:
        raise ApiError.unprocessable(f"The note is limited to {MAX_NOTE} characters.", field="note")
    return DecisionIn(
        client_id=client_id,
        candidate=candidate,
        decision=decision,
        boundary=body.get("boundary") or None,
        category=body.get("category") or None,
        span=_span(body.get("span"), "span"),
        paired_span=_span(body.get("paired_span"), "paired_span"),
        note=note,
        severity=body.get("severity") or None,
    )


def _checked(
    proposal: Proposal, taxonomy: Taxonomy, texts: Mapping[int, str], *, own: bool = False
) -> Proposal:
    """The proposal with a paired span dropped for a singleton category; SpanError if a
    rule is broken (the same rules as a worker's annotation: a severity the category
    offers; an own span needs one when the taxonomy has severities, as a worker's does)."""
    category = taxonomy.category(proposal.category)
    if category is not None and not category.is_paired and proposal.paired_span is not None:
        proposal = replace(proposal, paired_span=None)
    if proposal.severity is not None or (own and taxonomy.severities):
        check_severity(taxonomy, proposal.category, proposal.severity)
    check_annotation(
        category=category,
        known_categories=[c.key for c in taxonomy.categories],
        category_key=proposal.category,
        span=proposal.span,
        paired_span=proposal.paired_span,
        comment=None,
        comment_required=False,
        comment_label="",
        max_comment_length=0,
        texts=texts,
        furthest=max(texts, default=0),
    )
    return proposal


def _resolve(
    data: DecisionIn,
    candidates: dict[str, Candidate],
    earlier: dict[str, AdjudicationDecision],
    taxonomy: Taxonomy,
    texts: Mapping[int, str],
) -> dict[str, Any]:
    """The row's values for this decision: result, paragraph and provenance."""
    candidate = candidates.get(data.candidate)
    if data.decision == "own":
        if not data.candidate.startswith("own-"):
            raise ApiError.bad_request("An own span's key starts with own-.", field="candidate")
        if data.span is None or data.category is None:
            raise ApiError.bad_request("An own span needs span and category.", field="span")
        own = Proposal(data.category, data.span, data.paired_span, data.severity)
        proposal = _checked(own, taxonomy, texts, own=True)
        return {"result": proposal.to_dict(), "paragraph_id": proposal.span.paragraph_id}
    if candidate is None:
        previous = earlier.get(data.candidate)
        if data.decision == "reject" and previous is not None:
            # A span decided earlier (an own span, or a candidate that has since changed)
            # can still be taken out of the gold set.
            return {
                "result": None,
                "paragraph_id": previous.paragraph_id,
                "annotators": previous.annotators,
                "annotation_ids": previous.annotation_ids,
            }
        raise ApiError.not_found(
            "No candidate has this key any more; reload the page.", field="candidate"
        )
    provenance = {
        "paragraph_id": candidate.paragraph_id,
        "annotators": candidate.annotators,
        "annotation_ids": sorted(mark.annotation_id for mark in candidate.marks),
    }
    if data.decision == "reject":
        return {"result": None, **provenance}
    weights = taxonomy.severity_weights
    if data.decision == "accept":
        proposal = accepted(candidate, weights)
    else:
        boundary = data.boundary or "union"
        proposal = merged(candidate, boundary, data.category, texts, data.severity, weights)
    return {"result": _checked(proposal, taxonomy, texts).to_dict(), **provenance}


def save_decision(
    document: Document, researcher: Researcher, body: Mapping[str, Any], taxonomy: Taxonomy
) -> tuple[AdjudicationDecision, bool]:
    """Store a decision once; (row, created). Replays return the stored row; the same id
    with another decision raises 409; a broken rule raises 422."""
    data = parse_decision(body)
    stored = _stored(document.id, data.client_id)
    if stored is not None:
        # A replay is answered from what is stored, even if the candidate has changed
        # since (another session submitted): the decision was saved the first time.
        return _replayed(stored, data), False
    texts = paragraph_texts(document.id)
    candidates = {c.key: c for c in group_candidates(load_marks(document.id))}
    earlier = current_decisions(decision_history(document.id))
    try:
        values = _resolve(data, candidates, earlier, taxonomy, texts)
    except SpanError as error:
        raise ApiError.unprocessable(error.message, code=error.code, field=error.field) from None
    values = {
        "document_id": document.id,
        "client_id": data.client_id,
        "candidate_key": data.candidate,
        "decision": data.decision,
        "boundary": (data.boundary or "union") if data.decision == "merge" else None,
        "note": data.note,
        "annotators": [],
        "annotation_ids": [],
        "decided_by_id": researcher.id,
        **values,
    }
    connection = db.session.connection()
    statement = (
        upsert_insert(connection.dialect.name)(DECISIONS_TABLE)
        .values(**values)
        .on_conflict_do_nothing(index_elements=["document_id", "client_id"])
        .returning(DECISIONS_TABLE.c.id)
    )
    new_id = connection.execute(statement).scalar()
    db.session.commit()
    if new_id is not None:
        return db.session.get(AdjudicationDecision, new_id), True
    # A concurrent duplicate won the race: answer as a replay.
    return _replayed(_stored(document.id, data.client_id), data), False


def _stored(document_id: int, client_id: str) -> AdjudicationDecision | None:
    return db.session.scalar(
        select(AdjudicationDecision).filter_by(document_id=document_id, client_id=client_id)
    )


def _replayed(stored: AdjudicationDecision, data: DecisionIn) -> AdjudicationDecision:
    """The stored row when `data` asks for the same decision, else 409."""
    result = stored.result or {}
    same = (
        stored.candidate_key == data.candidate
        and stored.decision == data.decision
        and (data.decision != "merge" or stored.boundary == (data.boundary or "union"))
        and (data.category is None or result.get("category") == data.category)
        and (data.severity is None or result.get("severity") == data.severity)
        and (data.decision != "own" or _own_spans_equal(result, data))
    )
    if not same:
        raise ApiError.conflict(
            "A decision with this id was already saved with different content. "
            "Reload the page to see what is stored.",
            field="id",
        )
    return stored


def _own_spans_equal(result: Mapping[str, Any], data: DecisionIn) -> bool:
    paired = data.paired_span.to_dict() if data.paired_span else None
    return result.get("span") == (data.span.to_dict() if data.span else None) and (
        result.get("paired_span") == paired
    )


@dataclass(frozen=True)
class GoldSpan:
    """One adjudicated span of the gold set, with its provenance."""

    document_id: str
    decision: AdjudicationDecision
    proposal: Proposal


def iter_gold(document: str | None = None) -> Iterator[GoldSpan]:
    """The gold set: the current accept / merge / own decisions, by document, paragraph,
    start."""
    query = (
        select(Document.id, Document.external_id)
        .where(Document.study_id == current_study_id())
        .order_by(Document.external_id)
    )
    if document is not None:
        query = query.where(Document.external_id == document)
    decided = select(AdjudicationDecision.document_id).distinct()
    query = query.where(Document.id.in_(decided))
    for document_id, external_id in db.session.execute(query).all():
        spans = [
            GoldSpan(external_id, row, Proposal.from_dict(row.result))
            for row in current_decisions(decision_history(document_id)).values()
            if row.result is not None
        ]
        spans.sort(
            key=lambda g: (g.proposal.span.paragraph_id, g.proposal.span.start, g.proposal.span.end)
        )
        yield from spans
