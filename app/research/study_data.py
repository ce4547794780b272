"""The study's data as the exchange formats read it (issue 33, docs/interop.md): documents
and their paragraphs, annotation and session records, validators' judgments, the
readings of each annotator, and one row per worker to pay.

Every read of the W3C and brat exports, the Hugging Face dataset and the payment sheets
goes through this module. The annotation and session records come from the exports
(app.exports: their `ExportFilter` says which rows, of the current study); every query
written here passes through `in_study`, the one place that narrows it to the current
study (app.studies: `--study SLUG` of a command, the console's study). The study's slug
names it in W3C identifiers (``urn:falte:<study>:...``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from itertools import groupby
from typing import Any

from sqlalchemy import Join, Select, Table, and_, distinct, func, select

from app.core.extensions import db
from app.crowd.checks.flagged import FLAGGED, gold_found_per_session, left_out_workers
from app.crowd.settings import study_settings
from app.exports.record import BATCH, ExportFilter, iso_text, iter_annotation_records
from app.exports.session_rows import iter_session_records
from app.models import (
    Annotation,
    AnnotationSession,
    Annotator,
    Document,
    Paragraph,
    ValidationItem,
    ValidationJudgment,
    ValidationRound,
    ValidationSession,
)
from app.rules.statuses import SessionStatus
from app.studies import current_study, current_study_id
from app.taxonomy import current_taxonomy

VALIDATED = ("agree", "partial")  # verdicts that make an annotation validated (bonus)
# When a worker's sessions end differently, the one that decides the payment: a final
# failure, then completed work, then a return; otherwise the worker is still open.
OUTCOME_ORDER = ("failed_checks", "failed_training", "completed", "no_consent")


def in_study(query: Select) -> Select:
    """The query narrowed to the current study's rows.

    Every table of the query's FROM (inner joins; an outer join's optional side is left
    alone) that carries `study_id` is held to the current study; a query that reaches
    none of them, only annotations, validation sessions, items or judgments, is held to
    them through their session or round. A query that reaches no study at all is a
    mistake and refused: no read of a study's data goes out unscoped."""
    tables = {table.name: table for table in _inner_tables(query.get_final_froms())}
    study_id = current_study_id()
    direct = [
        tables[name].c.study_id == study_id
        for name in ("documents", "annotation_sessions", "validation_rounds", "suggestions")
        if name in tables
    ]
    if direct:
        return query.where(*direct)
    for name, through in _THROUGH.items():
        if name in tables:
            return query.where(through(tables[name], study_id))
    raise ValueError(f"in_study: the query reaches no study's table ({', '.join(tables)})")


def _inner_tables(froms: Iterable[Any]) -> Iterator[Table]:
    for item in froms:
        if isinstance(item, Join):
            yield from _inner_tables([item.left])
            if not item.isouter:
                yield from _inner_tables([item.right])
        elif isinstance(item, Table):
            yield item


def _rounds_of(study_id: int) -> Select:
    return select(ValidationRound.id).where(ValidationRound.study_id == study_id)


def _items_of(study_id: int) -> Select:
    return select(ValidationItem.id).where(ValidationItem.round_id.in_(_rounds_of(study_id)))


def _sessions_of(study_id: int) -> Select:
    return select(AnnotationSession.id).where(AnnotationSession.study_id == study_id)


_THROUGH: dict[str, Any] = {
    "annotations": lambda t, s: t.c.session_id.in_(_sessions_of(s)),
    "validation_sessions": lambda t, s: t.c.round_id.in_(_rounds_of(s)),
    "validation_items": lambda t, s: t.c.round_id.in_(_rounds_of(s)),
    "validation_judgments": lambda t, s: t.c.item_id.in_(_items_of(s)),
}


def study_name() -> str:
    """The study's name as the formats write it: its slug."""
    return current_study().slug


# --- documents ---------------------------------------------------------------------------


def document_texts(ids: Iterable[str] | None = None) -> dict[str, tuple[str, ...]]:
    """Document id -> its paragraphs in order (every document, or those of `ids`)."""
    query = in_study(
        select(Document.external_id, Paragraph.text)
        .join(Paragraph, Paragraph.document_id == Document.id)
        .order_by(Document.external_id, Paragraph.position)
    )
    if ids is not None:
        query = query.where(Document.external_id.in_(set(ids)))
    texts: dict[str, list[str]] = defaultdict(list)
    for document_id, text in db.session.execute(query):
        texts[document_id].append(text)
    return {key: tuple(value) for key, value in texts.items()}


def document_records() -> Iterator[dict[str, Any]]:
    """The dataset's `documents` rows: id, title, language, paragraphs, and whether it is
    an attention check (excluded from the figures), read a document at a time (one query,
    its paragraphs in order). Practice documents are no part of it."""
    practice = set(current_taxonomy().training.documents)
    query = in_study(
        select(
            Document.external_id, Document.title, Document.language, Document.gold,
            Paragraph.text,
        )
        .outerjoin(Paragraph, Paragraph.document_id == Document.id)
        .order_by(Document.external_id, Paragraph.position)
    )  # fmt: skip
    rows = db.session.execute(query.execution_options(yield_per=BATCH))
    for document_id, group in groupby(rows, key=lambda row: row[0]):
        first = next(group)
        if document_id in practice:
            continue
        paragraphs = [text for *_, text in (first, *group) if text is not None]
        yield {
            "document_id": document_id,
            "title": first[1],
            "language": first[2],
            "paragraphs": paragraphs,
            "is_attention_check": bool(first[3]),
        }


def document_languages() -> list[str | None]:
    """The documents' BCP 47 language tags (None: not given)."""
    return list(db.session.scalars(in_study(select(Document.language).distinct())))


# --- annotations, sessions, judgments ----------------------------------------------------


def annotation_records(flt: ExportFilter) -> Iterator[dict[str, Any]]:
    """The annotation export records (docs/contracts.md#annotation-export-records)."""
    return iter_annotation_records(flt)


def session_records(document: str | None = None) -> Iterator[dict[str, Any]]:
    """The sessions export's rows."""
    return iter_session_records(document)


def readings(flt: ExportFilter) -> Iterator[tuple[str, str]]:
    """(annotator id, document id) of every session the filter covers, annotations or
    not (a reading without errors is an empty brat .ann), by document, read as they
    go."""
    query = (
        select(Annotator.platform + ":" + Annotator.external_id, Document.external_id)
        .join(AnnotationSession, AnnotationSession.annotator_id == Annotator.id)
        .join(Document, Document.id == AnnotationSession.document_id)
        .order_by(Document.external_id, AnnotationSession.id)
    )
    if flt.document is not None:
        query = query.where(Document.external_id == flt.document)
    if flt.submitted_only:
        query = query.where(AnnotationSession.status == SessionStatus.SUBMITTED)
    for row in db.session.execute(in_study(query).execution_options(yield_per=BATCH)):
        yield row[0], row[1]


def judgment_records() -> Iterator[dict[str, Any]]:
    """The dataset's `judgments` rows: one validator's verdict on one item, with the item's
    document, span, labels and (when it came from this app) its annotator."""
    origin = Annotator.platform + ":" + Annotator.external_id
    columns = (ValidationJudgment, ValidationItem, ValidationRound.name, Document.external_id)
    query = in_study(
        select(*columns, origin)
        .join(ValidationItem, ValidationItem.id == ValidationJudgment.item_id)
        .join(ValidationRound, ValidationRound.id == ValidationItem.round_id)
        # Outer, so that in_study holds the rows to the study through its rounds only: a
        # validation study's items are on the documents of the study it judges.
        .outerjoin(Document, Document.id == ValidationItem.document_id)
        .outerjoin(Annotation, Annotation.id == ValidationItem.annotation_id)
        .outerjoin(AnnotationSession, AnnotationSession.id == Annotation.session_id)
        .outerjoin(Annotator, Annotator.id == AnnotationSession.annotator_id)
        .order_by(ValidationRound.name, ValidationItem.order_key, ValidationJudgment.id)
    )
    result = db.session.execute(query.execution_options(yield_per=BATCH))
    for judgment, item, round_name, document_id, annotator in result:
        span = None
        if item.paragraph_id is not None:
            span = {"paragraph_id": item.paragraph_id, "start": item.span_start,
                    "end": item.span_end, "text": item.span_text}  # fmt: skip
        yield {
            "round": round_name,
            "item_id": item.external_id,
            "document_id": document_id,
            "span": span,
            "labels": list(item.labels or ()),
            "annotator_id": annotator or item.origin_annotator,
            "validator": judgment.validator,
            "verdict": judgment.verdict,
            "reasons": list(judgment.reasons or ()),
            "explanation": judgment.explanation,
            "created_at": iso_text(judgment.created_at),
        }


# --- payments ----------------------------------------------------------------------------


def _validated_per_session() -> dict[int, int]:
    """Session id -> its annotations a validator judged agree or partially agree."""
    query = in_study(
        select(Annotation.session_id, func.count(distinct(Annotation.id)))
        .join(ValidationItem, ValidationItem.annotation_id == Annotation.id)
        .join(
            ValidationJudgment,
            and_(
                ValidationJudgment.item_id == ValidationItem.id,
                ValidationJudgment.verdict.in_(VALIDATED),
            ),
        )
        .where(Annotation.deleted_at.is_(None))
        .group_by(Annotation.session_id)
    )
    return dict(db.session.execute(query).all())  # type: ignore[arg-type]


def _decisive(outcomes: Iterable[str | None]) -> str | None:
    ended = set(outcomes)
    return next((outcome for outcome in OUTCOME_ORDER if outcome in ended), None)


def _worker_rows(sessions: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per-session facts grouped into app.interop.payments' per-worker rows: one per
    Prolific participant, one per MTurk assignment (each is paid on its own)."""
    grouped: dict[tuple, dict[str, Any]] = {}
    outcomes: dict[tuple, list[str | None]] = defaultdict(list)
    for s in sessions:
        assignment = s["assignment_id"] if s["platform"] == "mturk" else None
        key = (s["role"], s["platform"], s["worker_id"], assignment)
        row = grouped.setdefault(key, {
            "platform": s["platform"], "worker_id": s["worker_id"], "role": s["role"],
            "assignment_id": assignment, "hit_id": s["hit_id"] if assignment else None,
            "flagged": s["flagged"], "validated": 0, "planted_found": 0,
        })  # fmt: skip
        row["validated"] += s["validated"]
        row["planted_found"] += s["planted_found"]
        outcomes[key].append(s["outcome"])
    for key, row in grouped.items():
        row["outcome"] = _decisive(outcomes[key])
    return list(grouped.values())


def payment_rows() -> list[dict[str, Any]]:
    """One row per worker to pay (app.interop.payments' shape), annotators then
    validators, in order of their first session."""
    flagged = {
        worker for worker, left in left_out_workers(study_settings()).items()
        if left.reason == FLAGGED
    }  # fmt: skip
    validated, planted = _validated_per_session(), gold_found_per_session()
    sessions: list[dict[str, Any]] = []
    annotation_sessions = in_study(
        select(AnnotationSession, Annotator)
        .join(Annotator, Annotator.id == AnnotationSession.annotator_id)
        .order_by(AnnotationSession.id)
    )
    for session, annotator in db.session.execute(annotation_sessions):
        params = session.platform_params or {}
        sessions.append({
            "role": "annotator", "platform": annotator.platform,
            "worker_id": annotator.external_id, "assignment_id": params.get("assignment_id"),
            "hit_id": params.get("hit_id"), "outcome": session.outcome,
            "flagged": annotator.id in flagged, "validated": validated.get(session.id, 0),
            "planted_found": planted.get(session.id, 0),
        })  # fmt: skip
    validation_sessions = in_study(
        select(ValidationSession, Annotator)
        .join(Annotator, Annotator.id == ValidationSession.annotator_id)
        .order_by(ValidationSession.id)
    )
    for session, annotator in db.session.execute(validation_sessions):
        params = session.platform_params or {}
        done = session.status == SessionStatus.SUBMITTED
        sessions.append({
            "role": "validator", "platform": annotator.platform,
            "worker_id": annotator.external_id, "assignment_id": params.get("assignment_id"),
            "hit_id": params.get("hit_id"), "outcome": "completed" if done else None,
            "flagged": False, "validated": 0, "planted_found": 0,
        })  # fmt: skip
    return _worker_rows(sessions)
