"""Boundary-aware agreement (`flask agreement --gamma`), computed outside page requests.

Per document with at least two submitted sessions: gamma (app.adjudication.gamma) over
the live annotations, each document's paragraphs laid end to end (one character between
paragraphs) so that spans have one position line; and the mean over annotator pairs of
the F1 of linked span pairs (paired categories). Pooled: the mean over documents, with a
percentile bootstrap 95% interval resampling whole documents (seeded), gamma's Monte-Carlo
standard error (`mc_se`: of the mean, from each document's samples) and the documents
whose gamma broke ANALYSIS_TIME_LIMIT or ANALYSIS_MEMORY_LIMIT (`skipped`).

As every study figure: attention-check documents (documents with gold spans) are left
out, and so are the sessions of workers app.crowd.checks.flagged leaves out (failed checks,
failed training, flagged by their attention checks) unless `include_flagged`; the
report says how many of each (`left_out`).
"""

from __future__ import annotations

from collections import defaultdict
from statistics import fmean
from typing import Any

from sqlalchemy import select

from app.adjudication.gamma import Unit, mean_linked_pair_f1, pooled_mc_se
from app.adjudication.gamma_cache import (
    analysis_limits,
    compute,
    continuum,
    defined,
    gamma_samples,
)
from app.adjudication.gamma_runner import BoundedGamma
from app.adjudication.service import load_marks, paragraph_texts
from app.core.extensions import db
from app.crowd.checks.flagged import left_out_workers
from app.crowd.settings import study_settings
from app.models import AnnotationSession, Annotator, Document
from app.rules.intervals import bootstrap_mean_ci
from app.rules.metrics import unit_rows
from app.rules.statuses import SessionStatus
from app.studies import current_study_id

GAMMA_UNIT = (
    "gamma (Mathet et al. 2015) per document, combined dissimilarity alpha=1 beta=1, "
    "identical units of an annotator once, exact up to 500 units and pygamma-agreement's "
    "windowed fast-gamma beyond, chance from {samples} seeded samples (mc_se: Monte-Carlo "
    "standard error); mean over documents"
)
PAIR_UNIT = "F1 of linked span pairs (both spans overlap, same category), mean over annotator pairs"


def documents_to_compare(document: str | None) -> tuple[list[tuple[int, str]], list[str]]:
    """The documents with submitted sessions, (id, external id), and the external ids of
    the attention checks among them (left out)."""
    submitted = select(AnnotationSession.document_id).where(
        AnnotationSession.status == SessionStatus.SUBMITTED
    )
    query = (
        select(Document.id, Document.external_id, Document.gold)
        .where(Document.study_id == current_study_id(), Document.id.in_(submitted))
        .order_by(Document.external_id)
    )
    if document is not None:
        query = query.where(Document.external_id == document)
    rows = db.session.execute(query).all()
    checks = [external_id for _, external_id, gold in rows if gold]
    return [(pk, external_id) for pk, external_id, gold in rows if not gold], checks


def document_units(
    document_id: int, left_out: frozenset[str] | set[str] = frozenset()
) -> tuple[list[Unit], dict[str, list[tuple]], list[str]]:
    """(gamma units, linked pairs per annotator, annotators) of one document's
    submitted sessions, without those of the annotators ("platform:id") `left_out`."""
    texts = paragraph_texts(document_id)
    lengths = [len(texts[position]) for position in sorted(texts)]
    # Every submitted annotator counts, also one who marked nothing (load_marks has only
    # those with marks).
    annotators = [
        f"{platform}:{external_id}"
        for platform, external_id in db.session.execute(
            select(Annotator.platform, Annotator.external_id)
            .join(AnnotationSession, AnnotationSession.annotator_id == Annotator.id)
            .where(
                AnnotationSession.document_id == document_id,
                AnnotationSession.status == SessionStatus.SUBMITTED,
            )
        )
        if f"{platform}:{external_id}" not in left_out
    ]
    marks = [mark for mark in load_marks(document_id) if mark.annotator not in left_out]
    # One gamma unit per error unit (the rows of one span with several labels are one; its
    # first row's category, "" for none: app.rules.metrics.unit_rows).
    units = continuum(
        lengths,
        (
            (
                mark.annotator,
                [(mark.span.paragraph_id, mark.span.start, mark.span.end, mark.category or "")],
            )
            for mark in unit_rows(marks, [mark.unit_id for mark in marks])
        ),
    )
    linked: dict[str, list[tuple]] = defaultdict(list)
    for mark in marks:
        span, paired = mark.span, mark.paired_span
        if paired is not None:
            linked[mark.annotator].append(
                (
                    (span.paragraph_id, span.start, span.end),
                    (paired.paragraph_id, paired.start, paired.end),
                    mark.category,
                )
            )
    return units, linked, sorted(annotators)


def agreement_report(
    document: str | None = None,
    samples: int | None = None,
    seed: int = 0,
    progress=None,
    include_flagged: bool = False,
) -> dict[str, Any]:
    """Per-document gamma and linked-pair F1, pooled with bootstrap intervals (attention
    checks left out, and the workers left out unless `include_flagged`); gamma under the
    analysis limits (`skipped`), with its Monte-Carlo standard error."""
    samples = samples or gamma_samples()
    rows = []
    documents, checks = documents_to_compare(document)
    workers = [] if include_flagged else list(left_out_workers(study_settings()).values())
    left_out = {worker.label for worker in workers}
    with BoundedGamma(analysis_limits()) as runner:
        for document_id, external_id in documents:
            units, linked, annotators = document_units(document_id, left_out)
            row: dict[str, Any] = {
                "document_id": external_id,
                "annotators": len(annotators),
                "gamma": None,
                "observed_disorder": None,
                "expected_disorder": None,
                "gamma_mc_se": None,
                "gamma_skipped": None,
                "linked_pair_f1": None,
            }
            if defined(units, annotators):
                result = compute(units, annotators, runner, samples, seed)
                if "skipped" in result:
                    row["gamma_skipped"] = result["skipped"]
                else:
                    row |= {
                        "gamma": result["gamma"],
                        "observed_disorder": result["observed"],
                        "expected_disorder": result["expected"],
                        "gamma_mc_se": result["mc_se"],
                    }
                row["linked_pair_f1"] = mean_linked_pair_f1(linked, annotators)
            rows.append(row)
            if progress is not None:
                progress(1)
    computed = [r for r in rows if r["gamma"] is not None]
    gamma = _pooled([r["gamma"] for r in rows], seed, GAMMA_UNIT.format(samples=samples))
    gamma["mc_se"] = pooled_mc_se([r["gamma_mc_se"] for r in computed])
    gamma["skipped"] = [r["document_id"] for r in rows if r["gamma_skipped"]]
    return {
        "agreement": {
            "gamma": gamma,
            "linked_pair_f1": _pooled([r["linked_pair_f1"] for r in rows], seed, PAIR_UNIT),
        },
        "documents": rows,
        "samples": samples,
        "seed": seed,
        "left_out": {
            "documents": checks,
            "annotators": [worker.as_report() for worker in workers],
        },
    }


def _pooled(values: list[float | None], seed: int, unit: str) -> dict[str, Any]:
    present = [v for v in values if v is not None]
    ci = bootstrap_mean_ci(present, seed=seed)
    return {
        "value": fmean(present) if present else None,
        "ci95": list(ci) if ci else None,
        "unit": unit,
        "documents": len(present),
    }
