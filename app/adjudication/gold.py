"""The gold set: export records of the adjudicated spans, with provenance; and
promotion of a document's gold set to a new attention check (a copy: the document and
its readings stay as they were). The commands, `flask export-gold` and `flask
promote-gold`, are in app/adjudication/cli.py.

A gold record is an annotation export record (app.exports.record.annotation_record, the one
place the record's fields are declared) whose annotator is `adjudication:gold` on platform
`adjudication`, plus `"provenance": {"annotators", "merged", "decided_by"}`
(docs/contracts.md#other-exports): who marked the candidate, whether the span was
merged, and who decided.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import astuple
from typing import Any

from sqlalchemy import func, select

from app.adjudication.service import GoldSpan, iter_gold
from app.core.extensions import db
from app.exports.record import (
    ANNOTATION_CSV_COLUMNS,
    annotation_record,
    category_lookup,
    flatten_annotation,
)
from app.exports.writers import iter_csv, iter_jsonl
from app.models import AnnotationSession, Document, Paragraph
from app.studies import current_study_id
from app.taxonomy import Taxonomy, current_taxonomy

GOLD_PLATFORM = "adjudication"
# "platform:id" as every export record's annotator_id, so that import-annotations takes a
# gold export back as one submitted session per document of annotator adjudication:gold.
GOLD_ANNOTATOR = f"{GOLD_PLATFORM}:gold"
GOLD_CSV_COLUMNS = (
    *ANNOTATION_CSV_COLUMNS,
    "provenance_annotators",
    "provenance_merged",
    "provenance_decided_by",
)


def gold_record(gold: GoldSpan, taxonomy: Taxonomy) -> dict[str, Any]:
    """One gold span as an export record plus provenance."""
    row, proposal = gold.decision, gold.proposal
    record = annotation_record(
        category_lookup(taxonomy),
        document_id=gold.document_id,
        category=proposal.category,
        span=astuple(proposal.span),
        paired_span=astuple(proposal.paired_span) if proposal.paired_span else None,
        comment=row.note,
        annotator_id=GOLD_ANNOTATOR,
        platform=GOLD_PLATFORM,
        session_id=f"adjudication-{row.client_id}",
        submitted=True,
        created_at=row.decided_at,
        taxonomy_version=taxonomy.version,
        severity=proposal.severity,
        # A person's span, never an accepted suggestion: what import-annotations reads
        # back, so that a gold export round-trips.
        origin="worker",
    )
    record["provenance"] = {
        "annotators": list(row.annotators),
        "merged": row.decision == "merge",
        "decided_by": row.decided_by.email,
    }
    return record


def iter_gold_records(
    document: str | None = None, taxonomy: Taxonomy | None = None
) -> Iterator[dict[str, Any]]:
    """Every gold record, by document, paragraph and start."""
    taxonomy = taxonomy or current_taxonomy()
    for gold in iter_gold(document):
        yield gold_record(gold, taxonomy)


def flatten_gold(record: dict[str, Any]) -> dict[str, Any]:
    """A gold record as a CSV row: the annotation columns, then provenance."""
    provenance = record["provenance"]
    return flatten_annotation(record) | {
        "provenance_annotators": ";".join(provenance["annotators"]),
        "provenance_merged": "true" if provenance["merged"] else "false",
        "provenance_decided_by": provenance["decided_by"],
    }


def gold_chunks(fmt: str, document: str | None = None) -> Iterable[str]:
    """The gold export as text chunks, jsonl or csv."""
    records = iter_gold_records(document)
    if fmt == "jsonl":
        return iter_jsonl(records)
    return iter_csv(map(flatten_gold, records), GOLD_CSV_COLUMNS)


def attention_gold(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Gold records as a document's attention-check answers (Document.gold), each with the
    decision's note as its explanation when there is one."""
    answers = []
    for record in records:
        span = record["span"]
        answer = {
            "paragraph_id": span["paragraph_id"],
            "start": span["start"],
            "end": span["end"],
            "category": record["category"],
        }
        if record["paired_span"] is not None:
            paired = record["paired_span"]
            answer["paired_span"] = {k: paired[k] for k in ("paragraph_id", "start", "end")}
        if record["comment"]:
            answer["explanation"] = record["comment"]
        answers.append(answer)
    return answers


def promoted_copy(source: Document, answers: list[dict[str, Any]]) -> dict[str, Any]:
    """The attention check promote-gold imports: the source's text and descriptions, the
    gold set as its answers, and where it came from under meta."""
    texts = db.session.scalars(
        select(Paragraph.text).filter_by(document_id=source.id).order_by(Paragraph.position)
    ).all()
    return {
        "paragraphs": list(texts),
        # The source's own title, as plant-checks gives: workers must not see that a
        # document is a check (its gold and meta.promoted_from say so to researchers).
        "title": source.title,
        "entities": list(source.entities or []),
        "language": source.language,
        "meta": {"promoted_from": source.external_id},
        "gold": answers,
    }


def copy_refusal(copy_id: str, source_id: str, record: dict[str, Any]) -> str | None:
    """Why the copy may not be (re)written: another document holds the id, or workers
    already took the copy with other answers (they would be rescored)."""
    existing = db.session.scalar(
        select(Document).filter_by(external_id=copy_id, study_id=current_study_id())
    )
    if existing is None:
        return None
    if (existing.meta or {}).get("promoted_from") != source_id:
        return f"{copy_id}: a document with this id exists and is not {source_id}'s copy"
    if existing.gold == record["gold"]:
        return None
    taken = db.session.scalar(
        select(func.count(AnnotationSession.id)).where(AnnotationSession.document_id == existing.id)
    )
    if taken:
        return (
            f"{copy_id}: {taken} session(s) already took this check with its earlier answers; "
            "promote to a new --id"
        )
    return None
