"""The gold set: export records of the adjudicated spans, with provenance; and
promotion of a document's gold set to attention-check gold.

A gold record is an annotation export record (app.export.annotation_record, the one
place the record's fields are declared) whose annotator is `adjudication:gold` on platform
`adjudication`, plus `"provenance": {"annotators", "merged", "decided_by"}`
(docs/contracts.md#other-exports): who marked the candidate, whether the span was
merged, and who decided.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from dataclasses import astuple
from pathlib import Path
from typing import Any

import click
from flask.cli import with_appcontext
from sqlalchemy import select

from app.adjudication.service import GoldSpan, iter_gold
from app.cli import document_option, file_output_option, records_format_option
from app.export import (
    ANNOTATION_CSV_COLUMNS,
    annotation_record,
    category_lookup,
    flatten_annotation,
    iter_csv,
    iter_jsonl,
)
from app.extensions import db
from app.models import Document
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
    """Gold records as a document's attention-check answers (Document.gold)."""
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
        answers.append(answer)
    return answers


def _document_or_fail(external_id: str) -> Document:
    document = db.session.scalar(select(Document).filter_by(external_id=external_id))
    if document is None:
        raise click.BadParameter(f"no document with id {external_id!r}", param_hint="DOC_ID")
    return document


@click.command("export-gold")
@records_format_option
@file_output_option()
@document_option
@with_appcontext
def export_gold_command(fmt: str, output: Path | None, document: str | None) -> None:
    """Export the adjudicated gold set: export records plus provenance.

    Each record is an annotation export record (annotator `adjudication:gold`, platform
    `adjudication`) with "provenance": {"annotators", "merged", "decided_by"}. CSV adds
    the columns provenance_annotators (;-separated), provenance_merged and
    provenance_decided_by.
    """
    if document is not None:
        _document_or_fail(document)
    if output is None:
        for chunk in gold_chunks(fmt, document):
            sys.stdout.write(chunk)
        return
    with output.open("w", encoding="utf-8", newline="") as out:
        for chunk in gold_chunks(fmt, document):
            out.write(chunk)
    click.echo(f"Wrote the gold set to {output}", err=True)


@click.command("promote-gold")
@click.argument("doc_id")
@with_appcontext
def promote_gold_command(doc_id: str) -> None:
    """Make DOC_ID's adjudicated gold set its attention-check gold.

    The document then counts as an attention check: the dashboard scores each worker's
    recall of these spans, and new workers get it as a check. Replaces any gold the
    document had.
    """
    document = _document_or_fail(doc_id)
    answers = attention_gold(iter_gold_records(doc_id))
    if not answers:
        raise click.ClickException(
            f"Document {doc_id!r} has no adjudicated spans yet: accept, merge or add spans "
            f"at /research/documents/{doc_id}/adjudicate first."
        )
    replaced = len(document.gold or [])
    document.gold = answers
    db.session.commit()
    message = f"Document {doc_id} now has {len(answers)} gold span(s) as an attention check"
    click.echo(message + (f" (replacing {replaced})." if replaced else "."))
