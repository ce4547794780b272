"""The study's agreement figures, each with its unit, rule and bootstrap 95% interval.

Figures (documents with two or more submitted sessions; attention checks left out):

- ``krippendorff_alpha_sentences``: Krippendorff's alpha (nominal, error / no error per
  sentence), pooled over documents (app.rules.metrics). A sentence is marked when an error's
  primary span overlaps it: the sentence of a paired span (the earlier text a repetition
  or inconsistency points at) is left out.
- ``mean_pairwise_span_f1``: span-overlap F1 per annotator pair, mean per document, mean
  over documents (app.rules.metrics.span_f1): a span matches when it shares at least one
  character with a span of the other annotator, whatever the categories; one span per
  error unit.
- ``mean_pairwise_span_f1_same_category``: the same with a match needing a category in
  common too (the category-aware figure beside it).
- ``gamma``: gamma (Mathet, Widlöcher & Métivier 2015) per document, mean over documents
  (app.adjudication.gamma; a Monte-Carlo estimate read from `analysis_results`:
  app.adjudication.gamma_cache).
- ``linked_pair_f1``: F1 of linked span pairs (paired categories: both spans overlap, same
  category) per annotator pair, mean per document, mean over documents.

Intervals: app.rules.intervals (percentile bootstrap, whole documents resampled, 1000
resamples, seed 0). Gamma's interval counts only the documents whose gamma is computed;
``pending`` says how many are not yet (pages never compute gamma themselves), ``skipped``
which broke ANALYSIS_TIME_LIMIT or ANALYSIS_MEMORY_LIMIT (their ids), and ``mc_se`` is the
Monte-Carlo standard error of the mean gamma, which the interval leaves out
(app.adjudication.gamma).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from app.adjudication import gamma_cache
from app.adjudication.gamma import pooled_mc_se
from app.adjudication.gamma_runner import BoundedGamma
from app.jobs import results
from app.jobs.kinds import register
from app.jobs.limits import Limits
from app.jobs.queue import compute_now, submit
from app.research.dashboard import DashboardView, DocumentRow
from app.rules.intervals import (
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    bootstrap_alpha_ci,
    bootstrap_mean_ci,
)

# From this many documents on, a figure's interval is a job on the analysis queue (pages
# read it, or show it pending; commands compute it): 1000 resamples of 10,000 documents
# took about a second per figure here. Below, it is computed at once (milliseconds).
QUEUED_INTERVALS_FROM = 500
INTERVAL_RULE = (
    f"95% CI: percentile bootstrap (Efron) over documents, {BOOTSTRAP_RESAMPLES} resamples, "
    f"seed {BOOTSTRAP_SEED}"
)


@dataclass(frozen=True)
class Figure:
    """One agreement figure: value and interval on the figure's own scale (a coefficient,
    or a share 0-1 when `percent`), what it measures (`unit`; reports add the interval's
    rule) and how many documents it pools."""

    name: str
    label: str
    value: float | None
    ci95: tuple[float, float] | None
    unit: str
    documents: int
    percent: bool = False
    pending: int = 0
    mc_se: float | None = None  # gamma: the Monte-Carlo standard error of the value
    skipped: tuple[str, ...] = ()  # gamma: documents over the analysis limits
    ci_pending: bool = False  # the interval is still a job on the queue (large studies)

    def as_report(self) -> dict:
        """The study-report shape: {"value", "ci95", "unit", "documents"} (F1 as 0-100);
        gamma adds "pending", "mc_se" and "skipped" (document ids)."""
        scale = 100 if self.percent else 1
        report = {
            "value": None if self.value is None else scale * self.value,
            "ci95": None if self.ci95 is None else [scale * self.ci95[0], scale * self.ci95[1]],
            "unit": f"{self.unit}; {INTERVAL_RULE}",
            "documents": self.documents,
        }
        if self.name == "gamma":
            report |= {"pending": self.pending, "mc_se": self.mc_se, "skipped": list(self.skipped)}
        return report


def resolve_gamma(
    study: DashboardView,
    compute: bool = False,
    progress: Callable[[int], None] | None = None,
) -> None:
    """Fill each document's gamma from `analysis_results`; what is missing is computed
    here (`compute`, for commands) or asked of the queue (app.jobs.queue.submit) and
    marked pending. Either way under the analysis limits: a document over them is marked
    skipped."""
    samples, limits = gamma_cache.gamma_samples(), gamma_cache.analysis_limits()
    wanted = []
    for document in _agreeing(study):
        figures = document.figures
        if figures is None or figures.gamma_key is None:  # gamma undefined
            continue
        key = figures.gamma_key  # made with the default samples (app.research.dashboard)
        if samples != gamma_cache.DEFAULT_GAMMA_SAMPLES:
            key = gamma_cache.content_key(figures.gamma_units, figures.gamma_annotators, samples)
        wanted.append((document, key))
    rows = results.read(gamma_cache.GAMMA, [key for _, key in wanted])
    missing = {}
    with BoundedGamma(limits) as runner:
        for document, key in wanted:
            figures = document.figures
            assert figures is not None
            units, annotators = figures.gamma_units, figures.gamma_annotators
            row = rows.get(key)
            found = gamma_cache.value_of(row) if results.usable(row, limits) else None
            if found is None and compute:
                found = gamma_cache.compute(units, annotators, runner, samples)
            if found is None:
                missing[key] = gamma_cache.payload(units, annotators, samples)
                document.gamma_pending = True
            elif "skipped" in found:
                document.gamma_skipped = found["skipped"]
            else:
                document.gamma, document.gamma_mc_se = found["gamma"], found["mc_se"]
            if progress is not None:
                progress(1)
    submit(gamma_cache.GAMMA, missing, rows)


def _agreeing(study: DashboardView) -> list[DocumentRow]:
    return [document for document in study.documents if not document.is_check]


def compute_interval(job: dict[str, Any], limits: Limits) -> dict[str, Any]:
    """The `bootstrap_ci` kind's computation: {"ci95": [low, high] | None} of the job's
    values (per-document values, or alpha's parts for "pooled_alpha")."""
    if job["statistic"] == "pooled_alpha":
        ci = bootstrap_alpha_ci([tuple(parts) for parts in job["values"]])
    else:
        ci = bootstrap_mean_ci(job["values"])
    return {"ci95": None if ci is None else list(ci)}


INTERVALS = register(
    "bootstrap_ci",
    f"percentile-bootstrap/{BOOTSTRAP_RESAMPLES}-resamples/seed-{BOOTSTRAP_SEED}/95",
    compute_interval,
)


class _Intervals:
    """The figures' intervals: computed here for a small study; for a large one read from
    `analysis_results`, computed now (`compute`: commands) or asked of the queue."""

    def __init__(self, documents: int, compute: bool) -> None:
        self.queued = documents >= QUEUED_INTERVALS_FROM
        self.compute = compute
        self.missing: dict[str, dict[str, Any]] = {}

    def __call__(self, statistic: str, values: list) -> tuple[tuple[float, float] | None, bool]:
        """(interval, pending) of one figure."""
        if not self.queued:
            if statistic == "pooled_alpha":
                return bootstrap_alpha_ci(values), False
            return bootstrap_mean_ci(values), False
        job = {
            "statistic": statistic,
            "values": [list(v) if isinstance(v, tuple) else v for v in values],
        }
        key = INTERVALS.key(job)
        if self.compute:
            row = compute_now(INTERVALS, key, job)
        else:
            row = results.read(INTERVALS, [key]).get(key)
            if row is None or row.status != results.DONE:
                self.missing[key] = job
                return None, True
        ci = (row.value or {}).get("ci95") if row.status == results.DONE else None
        return (None if ci is None else (ci[0], ci[1])), False

    def submit(self) -> None:
        """Ask the queue for what is missing."""
        submit(INTERVALS, self.missing)


def agreement_figures(study: DashboardView, compute: bool = False) -> list[Figure]:
    """The five figures with intervals (call resolve_gamma first for gamma); a large
    study's intervals are read from the queue's results, or computed here (`compute`)."""
    documents = _agreeing(study)
    interval = _Intervals(len(documents), compute)
    parts = [
        d.figures.alpha_parts
        for d in documents
        if d.figures and d.figures.alpha_parts[1] + d.figures.alpha_parts[2]
    ]
    f1 = [d.f1 for d in documents if d.f1 is not None]
    f1_same = [d.f1_same_category for d in documents if d.f1_same_category is not None]
    gamma = [d.gamma for d in documents if d.gamma is not None]
    mc_se = pooled_mc_se([d.gamma_mc_se for d in documents if d.gamma is not None])
    skipped = tuple(d.external_id for d in documents if d.gamma_skipped)
    pairs = [d.pair_f1 for d in documents if d.pair_f1 is not None]
    pending = sum(d.gamma_pending for d in documents)
    alpha_ci, alpha_pending = interval("pooled_alpha", parts)
    f1_ci, f1_pending = interval("mean", f1)
    same_ci, same_pending = interval("mean", f1_same)
    gamma_ci, gamma_pending = interval("mean", gamma)
    pairs_ci, pairs_pending = interval("mean", pairs)
    interval.submit()
    return [
        Figure(
            "krippendorff_alpha_sentences",
            "Krippendorff's α (sentences, pooled)",
            study.pooled_alpha,
            alpha_ci,
            "alpha (-1 to 1), nominal, error / no error per sentence (marked by primary "
            "spans; a paired span's sentence is left out), pooled over documents",
            len(parts),
            ci_pending=alpha_pending,
        ),
        Figure(
            "mean_pairwise_span_f1",
            "mean pairwise span F1",
            _mean(f1),
            f1_ci,
            "percent, span-overlap F1 (a match: one shared character or more, any category; "
            "one span per error unit) averaged over annotator pairs and documents",
            len(f1),
            percent=True,
            ci_pending=f1_pending,
        ),
        Figure(
            "mean_pairwise_span_f1_same_category",
            "mean pairwise span F1, same category",
            _mean(f1_same),
            same_ci,
            "percent, span-overlap F1 where a match needs a category in common too (one "
            "shared character or more; one span per error unit) averaged over annotator "
            "pairs and documents",
            len(f1_same),
            percent=True,
            ci_pending=same_pending,
        ),
        Figure(
            "gamma",
            "γ (Mathet et al. 2015)",
            _mean(gamma),
            gamma_ci,
            "gamma (Mathet et al. 2015; at most 1, 0 = chance), per document over its units "
            "(identical units of an annotator once; combined dissimilarity alpha=1 beta=1, "
            "paragraphs end to end; exact alignment up to 500 units, pygamma-agreement's "
            "windowed fast-gamma beyond), chance from "
            f"{gamma_cache.gamma_samples()} random continua seeded {gamma_cache.GAMMA_SEED} "
            "(mc_se: the mean's Monte-Carlo standard error); mean over documents",
            len(gamma),
            ci_pending=gamma_pending,
            pending=pending,
            mc_se=mc_se,
            skipped=skipped,
        ),
        Figure(
            "linked_pair_f1",
            "linked-pair F1",
            _mean(pairs),
            pairs_ci,
            "percent, F1 of linked span pairs (both spans overlap, same category) averaged "
            "over annotator pairs and documents",
            len(pairs),
            percent=True,
            ci_pending=pairs_pending,
        ),
    ]


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None
