"""The Analyses page of the researcher console (/research/analyses): the judge report,
the recall estimate and the study planner of docs/analyses.md.

GET shows the forms and nothing computed (cheap: one query for the sources of
suggestions); each "Compute" is a POST that runs one analysis of app.research.analyses
and shows its result on the same page. Large studies are better served by the commands
(`flask judge-report`, `recall-estimate`, `plan-study`), which report progress.
"""

from __future__ import annotations

from typing import Any

from flask import render_template, request

from app.analysis.alttest import DEFAULT_EPSILON
from app.analysis.judge import SENTENCE, SPAN
from app.research import bp
from app.research.analyses import (
    FIGURES,
    AnalysisError,
    compute_judge_report,
    compute_plan,
    compute_recall_estimate,
    judge_sources,
)
from app.research.dashboard import DashboardView
from app.research.study_report import load_report_study

ANALYSES = ("judge", "recall", "plan")


def _number(name: str, default: float | None, low: float = 0.0) -> float | None:
    """A form number (None when empty and no default); ValueError with the field's name."""
    text = (request.form.get(name) or "").strip()
    if not text:
        if default is None:
            return None
        return default
    try:
        value = float(text)
    except ValueError as exc:
        raise AnalysisError(f"{name.replace('_', ' ')}: give a number") from exc
    if value < low:
        raise AnalysisError(f"{name.replace('_', ' ')}: give a number of at least {low:g}")
    return value


def _run(analysis: str, study: DashboardView) -> dict[str, Any]:
    form = request.form
    if analysis == "judge":
        unit = form.get("unit") if form.get("unit") in (SPAN, SENTENCE) else SPAN
        epsilon = _number("epsilon", DEFAULT_EPSILON)
        if epsilon > 1:
            raise AnalysisError("epsilon: give a number from 0 to 1")
        return compute_judge_report(study, (form.get("judge") or "").strip(), epsilon, unit)
    if analysis == "recall":
        return compute_recall_estimate(study)
    half_width = _number("half_width", None)
    if not half_width:
        raise AnalysisError("target half-width: give a number above 0")
    return compute_plan(
        study,
        form.get("figure") or "",
        half_width,
        _number("hourly_rate", None),
        _number("fee_percent", 0.0),
    )


@bp.route("/analyses", methods=["GET", "POST"])
def analyses():
    """The forms; on POST (analysis=judge|recall|plan), that analysis computed and shown."""
    results: dict[str, Any] = {}
    problems: dict[str, str] = {}
    analysis = request.form.get("analysis") if request.method == "POST" else None
    if analysis in ANALYSES:
        try:
            results[analysis] = _run(analysis, load_report_study())
        except AnalysisError as exc:
            problems[analysis] = str(exc)
    return render_template(
        "research/analyses.html",
        sources=judge_sources(),
        figures=FIGURES,
        default_epsilon=DEFAULT_EPSILON,
        form=request.form,
        results=results,
        problems=problems,
    )
