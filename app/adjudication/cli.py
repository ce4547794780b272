"""The adjudication commands: `flask export-gold`, `flask promote-gold` and `flask agreement
--gamma`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from flask.cli import with_appcontext
from sqlalchemy import select

from app.adjudication.boundary_agreement import agreement_report, documents_to_compare
from app.adjudication.gold import (
    attention_gold,
    copy_refusal,
    gold_chunks,
    iter_gold_records,
    promoted_copy,
)
from app.core.cli_kit import document_option, fail, file_output_option, records_format_option
from app.core.extensions import db
from app.imports.document_formats import document_from_record
from app.imports.document_store import DocumentImportRefused, import_documents
from app.models import Document
from app.studies import current_study_id
from app.studies.cli import study_option


def _document_or_fail(external_id: str) -> Document:
    document = db.session.scalar(
        select(Document).filter_by(external_id=external_id, study_id=current_study_id())
    )
    if document is None:
        raise click.BadParameter(f"no document with id {external_id!r}", param_hint="DOC_ID")
    return document


@click.command("export-gold")
@records_format_option
@file_output_option()
@document_option
@with_appcontext
@study_option
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
@click.option(
    "--id", "new_id", default=None, help="Id of the new attention check [default: DOC_ID-gold]."
)
@with_appcontext
@study_option
def promote_gold_command(doc_id: str, new_id: str | None) -> None:
    """Copy DOC_ID as a new attention check whose answers are DOC_ID's adjudicated gold set.

    The copy (DOC_ID-gold, or --id) has DOC_ID's paragraphs, title, entities and language,
    and the gold set as its `gold` (each decision's note as the span's explanation), as
    plant-checks makes a check: new workers get it at the study's attention_check_share
    and the dashboard scores them on it. DOC_ID, its sessions and every figure made from
    them stay exactly as they were. Promoting again after more adjudication updates the
    copy while no worker has taken it; after that, promote to a new --id.
    """
    source = _document_or_fail(doc_id)
    answers = attention_gold(iter_gold_records(doc_id))
    if not answers:
        raise click.ClickException(
            f"Document {doc_id!r} has no adjudicated spans yet: accept, merge or add spans "
            f"at /research/documents/{doc_id}/adjudicate first."
        )
    copy_id = new_id if new_id is not None else f"{doc_id}-gold"
    record = promoted_copy(source, answers)
    refusal = copy_refusal(copy_id, doc_id, record)
    if refusal:
        fail(f"{refusal}; nothing changed.")
    try:
        report = import_documents([document_from_record(copy_id, record)])
    except ValueError as exc:
        fail(f"--id {copy_id!r}: {exc}")
    except DocumentImportRefused as exc:
        fail(f"{copy_id}: import refused; nothing changed: {exc}")
    click.echo(
        f"{copy_id}: {report.summary()}; an attention check with {len(answers)} gold span(s) "
        f"from {doc_id}'s adjudication. {doc_id} itself is unchanged."
    )


def _number(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


@click.command("agreement")
@click.option("--gamma", "with_gamma", is_flag=True, required=True, help="Compute gamma.")
@click.option("--document", help="Only this document (its external id).")
@click.option(
    "--samples",
    type=click.IntRange(1, 10000),
    default=None,
    help="Random continua for the expected disorder (default: GAMMA_SAMPLES, 100).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of every sampler.")
@click.option(
    "--include-flagged",
    is_flag=True,
    help="Count the sessions of workers who failed checks or training or were flagged by "
    "their attention checks (left out by default, as in study-report).",
)
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True
)
@with_appcontext
@study_option
def agreement_command(
    with_gamma: bool,
    document: str | None,
    samples: int | None,
    seed: int,
    include_flagged: bool,
    fmt: str,
) -> None:
    """Boundary-aware agreement of submitted sessions: gamma (Mathet et al. 2015) per
    document and pooled, and the F1 of linked span pairs, with bootstrap 95% intervals
    over documents. Gamma is a Monte-Carlo estimate: fixed --samples and --seed make it
    reproducible, and its Monte-Carlo standard error is given beside it. Each document's
    gamma runs under ANALYSIS_TIME_LIMIT and ANALYSIS_MEMORY_LIMIT; documents over them
    are listed as skipped. Attention-check documents are left out, and so are the sessions
    of workers who failed checks or training or were flagged (see --include-flagged)."""
    documents, checks = documents_to_compare(document)
    if document is not None and checks:
        raise click.BadParameter(
            f"{document!r} is an attention check: no agreement figure counts it",
            param_hint="--document",
        )
    if document is not None and not documents:
        raise click.BadParameter(
            f"no document {document!r} with submitted sessions", param_hint="--document"
        )
    with click.progressbar(length=len(documents), label="Computing gamma", file=sys.stderr) as bar:
        report = agreement_report(document, samples, seed, bar.update, include_flagged)
    if fmt == "json":
        click.echo(json.dumps(report, ensure_ascii=False, indent=2))
        return
    left_out = report["left_out"]
    if left_out["documents"]:
        click.echo(
            f"Left out: {len(left_out['documents'])} attention-check document(s) "
            f"({', '.join(left_out['documents'])})"
        )
    if left_out["annotators"]:
        workers = ", ".join(f"{w['annotator_id']} ({w['reason']})" for w in left_out["annotators"])
        click.echo(
            f"Left out: the sessions of {len(left_out['annotators'])} worker(s): {workers} "
            "(--include-flagged counts them)"
        )
    for name, figure in report["agreement"].items():
        ci = figure["ci95"]
        interval = f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else ""
        mc_se = f" (Monte-Carlo SE {figure['mc_se']:.4f})" if figure.get("mc_se") else ""
        click.echo(f"{name}: {_number(figure['value'])}{interval}{mc_se}  ({figure['unit']})")
        if figure.get("skipped"):
            skipped = ", ".join(figure["skipped"])
            click.echo(f"  skipped (over the analysis limits): {skipped}")
    click.echo(f"{'document':<30} {'annotators':>10} {'gamma':>7} {'pair F1':>7}")
    for row in report["documents"]:
        click.echo(
            f"{row['document_id'][:30]:<30} {row['annotators']:>10} "
            f"{_number(row['gamma']):>7} {_number(row['linked_pair_f1']):>7}"
        )
