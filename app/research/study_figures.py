"""The dashboard's study-level figures: computed at once for a small study, read from
`analysis_results` for a large one.

The figures that need every submitted session's spans - mean BooookScore, pooled alpha,
mean F1, errors per sentence, the agreement figures with their bootstrap intervals and
gamma, the annotators' table with their attention-check scores, reading pace - take
seconds at 10,000 documents. From FIGURES_QUEUED_FROM documents on, a page never computes
them: it reads them from `analysis_results` (kind `dashboard_figures`), keyed by the
study, the flagged-workers switch and a fingerprint of what they depend on (documents,
sessions submitted or ended, the gamma and interval results stored so far, the study's
settings and taxonomy). When the key is missing the page asks the analysis queue for it
(app.jobs.queue.submit) and shows the newest figures of this study with their time, or
"pending" when there are none yet. Below FIGURES_QUEUED_FROM they are computed during the
page (milliseconds, as app.research.agreement_figures does with the intervals).

The workers left out of the figures (app.crowd.checks.flagged) are read once per process
and fingerprint for a large study (`left_out_at`).

The job renders the sections the dashboard shows (templates/research/_study_figures.html,
autoescaped as every page) and stores them with the figures' values; the page inserts
them as they are.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from flask import current_app
from markupsafe import Markup
from sqlalchemy import case, func, select

from app.adjudication.gamma_cache import GAMMA
from app.core.console_urls import links_of_study
from app.core.extensions import db
from app.crowd.checks.flagged import LeftOut, left_out_workers
from app.crowd.settings import EffectiveStudySettings, study_settings
from app.jobs import results
from app.jobs.kinds import register
from app.jobs.limits import Limits
from app.jobs.queue import submit
from app.models import AnalysisResult, AnnotationSession, Document, Study
from app.research.agreement_figures import INTERVALS, Figure, agreement_figures, resolve_gamma
from app.research.charts import dashboard_charts, formatters, pacing_charts
from app.research.dashboard import DashboardView, load_pacing, load_study
from app.rules.statuses import SessionStatus
from app.studies import current_study_id, use_study
from app.taxonomy import current_taxonomy

FIGURES_QUEUED_FROM = 500  # documents; below, computed during the page
SECTIONS = ("summary", "categories", "agreement", "annotators", "pacing")
TEMPLATE = "research/_study_figures.html"
# The annotators' table lists at most this many workers, the flagged ones first (about a
# kilobyte each: 3,000 workers would be 3 MB of HTML); sessions.csv has every one.
ANNOTATOR_ROWS = 40


@dataclass
class StudyFigures:
    """The sections to show, the agreement figures (for the page's notes on gamma), and
    whether they are current or, when not, since when they are stale."""

    html: dict[str, Markup] = field(default_factory=dict)  # empty: pending
    study: DashboardView | None = None  # computed here: the whole study, as loaded
    agreement: list[Figure] = field(default_factory=list)
    computed_at: datetime | None = None  # stored figures: when they were computed
    current: bool = True  # False: the study changed since (new figures are on their way)
    skipped: str | None = None  # the current ones were given up: time, memory or error

    @property
    def pending(self) -> bool:
        """No figures yet: the queue computes the first ones."""
        return not self.html


def render_sections(
    study: DashboardView, agreement: list[Figure], settings: EffectiveStudySettings
) -> dict[str, str]:
    """The study-level sections of the dashboard, as HTML (autoescaped templates)."""
    taxonomy = current_taxonomy()
    pace = load_pacing(study, taxonomy.study.min_words_per_minute)
    module = current_app.jinja_env.get_template(TEMPLATE).make_module(
        {
            **formatters(),
            "taxonomy": taxonomy,
            "settings": settings,
            "annotator_rows": ANNOTATOR_ROWS,
        }
    )
    return {
        "summary": str(module.summary_figures(study)),
        "categories": str(module.categories_section(study, dashboard_charts(study, taxonomy))),
        "agreement": str(module.agreement_table(agreement)),
        "annotators": str(module.annotators_section(study)),
        "pacing": str(module.pacing(pace, pacing_charts(pace))),
    }


def compute_now(
    settings: EffectiveStudySettings,
    include_flagged: bool,
    left_out: Mapping[int, LeftOut] | None = None,
) -> StudyFigures:
    """The figures computed here (a small study's page): stored gamma only, as ever."""
    study = load_study(settings, include_flagged=include_flagged, left_out=left_out)
    resolve_gamma(study)
    agreement = agreement_figures(study)
    html = render_sections(study, agreement, settings)
    return StudyFigures({k: Markup(v) for k, v in html.items()}, study, agreement)  # noqa: S704


def compute_study_figures(job: dict[str, Any], limits: Limits) -> dict[str, Any]:
    """The `dashboard_figures` kind: every study-level figure of the dashboard, computed
    in the worker (gamma as stored, what is missing asked of the queue; the intervals
    computed here)."""
    study_row = db.session.get(Study, job["study_id"])
    if study_row is None:
        return {"skipped": "error"}
    use_study(study_row)
    settings = study_settings()
    study = load_study(settings, include_flagged=job["include_flagged"])
    resolve_gamma(study)
    agreement = agreement_figures(study, compute=True)
    with links_of_study(study_row.slug):  # the sections' links to the study's downloads
        html = render_sections(study, agreement, settings)
    return {
        "html": html,
        "agreement": [asdict(figure) for figure in agreement],
    }


DASHBOARD_FIGURES = register("dashboard_figures", "v1", compute_study_figures)


def _prefix(include_flagged: bool) -> str:
    """The first 16 characters of every key of this study and switch (the newest
    figures are found by it)."""
    name = f"{DASHBOARD_FIGURES.name}/{current_study_id()}/{int(include_flagged)}"
    return hashlib.sha256(name.encode()).hexdigest()[:16]


def fingerprint(settings: EffectiveStudySettings) -> list:
    """What the study-level figures depend on, in one statement: documents, sessions
    (submitted, ended), the gamma and interval results stored so far."""
    study_id = current_study_id()
    sessions = AnnotationSession.study_id == study_id
    ready = AnalysisResult.status.in_((results.DONE, results.SKIPPED, results.ERROR))
    documents = Document.study_id == study_id
    row = db.session.execute(
        select(
            func.count(),
            func.sum(case((AnnotationSession.status == SessionStatus.SUBMITTED, 1), else_=0)),
            func.max(AnnotationSession.submitted_at),
            func.count(AnnotationSession.outcome),
            select(func.count()).where(documents).scalar_subquery(),
            select(func.max(Document.id)).where(documents).scalar_subquery(),
            select(func.max(Document.updated_at)).where(documents).scalar_subquery(),
            select(func.count())
            .where(AnalysisResult.kind.in_((GAMMA.name, INTERVALS.name)), ready)
            .scalar_subquery(),
        ).where(sessions)
    ).one()
    return [
        [str(value) if value is not None else None for value in row],
        current_taxonomy().version,
        repr(settings),
    ]


def stored_figures(
    settings: EffectiveStudySettings, include_flagged: bool, content: list | None = None
) -> StudyFigures:
    """A large study's figures from `analysis_results`: the current ones, else the newest
    (marked stale) or none (pending), the current ones asked of the queue. `content`:
    the study's fingerprint, when the caller has it."""
    prefix = _prefix(include_flagged)
    text = json.dumps(content or fingerprint(settings), sort_keys=True)
    key = prefix + DASHBOARD_FIGURES.key(text)[:48]
    row = results.read(DASHBOARD_FIGURES, [key]).get(key)
    current = row is not None and row.status == results.DONE
    skipped = None
    if row is not None and row.status in (results.SKIPPED, results.ERROR):
        skipped = (row.value or {}).get("skipped") or "error"
    if not current:
        if row is not None or not results.in_flight(DASHBOARD_FIGURES, prefix):
            # One computation at a time per study: while one runs, a changed study waits
            # for it rather than queueing a computation per view.
            job = {"study_id": current_study_id(), "include_flagged": include_flagged}
            submit(DASHBOARD_FIGURES, {key: job}, {key: row} if row is not None else {})
        row = results.newest(DASHBOARD_FIGURES, prefix)
    if row is None or not row.value or "html" not in row.value:
        return StudyFigures(skipped=skipped)
    value = row.value
    return StudyFigures(
        {name: Markup(value["html"].get(name, "")) for name in SECTIONS},  # noqa: S704
        None,
        [_figure(figure) for figure in value.get("agreement", [])],
        row.computed_at,
        current,
        skipped,
    )


_LEFT_OUT: dict[str, dict[int, LeftOut]] = {}
LEFT_OUT_CACHE_SIZE = 16


def left_out_at(settings: EffectiveStudySettings, content: list) -> dict[int, LeftOut]:
    """The workers left out (app.crowd.checks.flagged), remembered per process for one
    fingerprint of the study: what decides it (ended and submitted sessions, the
    documents' gold, the settings) is in the fingerprint, so a change is a new entry."""
    key = json.dumps([current_study_id(), content], sort_keys=True)
    found = _LEFT_OUT.get(key)
    if found is None:
        if len(_LEFT_OUT) >= LEFT_OUT_CACHE_SIZE:
            _LEFT_OUT.clear()
        found = _LEFT_OUT[key] = left_out_workers(settings)
    return found


def _figure(data: dict[str, Any]) -> Figure:
    data = dict(data)
    if data.get("ci95") is not None:
        data["ci95"] = tuple(data["ci95"])
    data["skipped"] = tuple(data.get("skipped") or ())
    return Figure(**data)


def is_large(documents: int) -> bool:
    """Whether the study's figures are read from `analysis_results` (not computed here)."""
    return documents >= FIGURES_QUEUED_FROM
