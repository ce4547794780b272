"""The Analyses page of the researcher console (/research/analyses): the judge report,
the recall estimate, the study planner and the suggestion arms of docs/analyses.md.

The page never computes them (app.research.analysis_jobs): each "Compute" is a POST that
asks for the analysis's key (its stored result, or a job on the analysis queue) and
answers 303 to the GET that shows it, the keys asked for in its query
(`?judge=KEY&recall=KEY&plan=KEY&arms=KEY`). The GET shows each key's stored result with
when it was computed, "being computed" while it waits (a live region; static/js/
research/analyses.mjs polls `/research/analyses/status` and reloads the page once it is
ready, and a Refresh link does the same without JavaScript), or why it could not be
computed. The commands (`flask judge-report`, `recall-estimate`, `plan-study`) share the
same keys: a result one computed is the other's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from flask import current_app, jsonify, redirect, render_template, request

from app.analysis.alttest import DEFAULT_EPSILON
from app.analysis.judge import SENTENCE, SPAN
from app.core.console_urls import console_url
from app.jobs import results
from app.jobs.limits import Limits
from app.jobs.queue import WORKER_SILENT, queue_state
from app.models import utcnow
from app.research import bp
from app.research.analyses import FIGURES, AnalysisError, judge_sources
from app.research.analysis_jobs import ANALYSES, Asked, ask, asked, outcome

KEY = re.compile(r"^[0-9a-f]{64}$")
# How often the page's module asks whether what it waits for is ready (milliseconds).
POLL_MS = 2000


def _number(name: str, default: float | None, low: float = 0.0) -> float | None:
    """A form number (None when empty and no default); AnalysisError with the field's name."""
    text = (request.form.get(name) or "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError as exc:
        raise AnalysisError(f"{name.replace('_', ' ')}: give a number") from exc
    if value < low:
        raise AnalysisError(f"{name.replace('_', ' ')}: give a number of at least {low:g}")
    return value


def _parameters(analysis: str) -> dict[str, Any]:
    """The posted form's parameters of one analysis, as the command takes them."""
    form = request.form
    if analysis == "judge":
        judge = (form.get("judge") or "").strip()
        if not judge:
            raise AnalysisError("model: name a source of suggestions or an annotator")
        epsilon = _number("epsilon", DEFAULT_EPSILON)
        if epsilon is None or epsilon > 1:
            raise AnalysisError("epsilon: give a number from 0 to 1")
        unit = form.get("unit") if form.get("unit") in (SPAN, SENTENCE) else SPAN
        return {"judge": judge, "epsilon": epsilon, "unit": unit, "weighted": False}
    if analysis == "recall":
        return {"method": None}
    if analysis == "arms":
        return {}
    half_width = _number("half_width", None)
    if not half_width:
        raise AnalysisError("target half-width: give a number above 0")
    figure = form.get("figure") or ""
    if figure not in FIGURES:
        raise AnalysisError(f"figure: choose one of {', '.join(FIGURES)}")
    return {
        "figure": figure,
        "half_width": half_width,
        "hourly_rate": _number("hourly_rate", None),
        "fee_percent": _number("fee_percent", 0.0),
    }


def _keys() -> dict[str, str]:
    """The keys the address asks to show, by analysis (anything else ignored)."""
    return {
        name: request.args[name] for name in ANALYSES if KEY.match(request.args.get(name, "") or "")
    }


@dataclass(frozen=True)
class Shown:
    """What the page shows of one analysis asked for: `state` done | pending | problem |
    missing; the analysis's JSON, its parameters, why it could not be computed, when."""

    state: str
    result: dict[str, Any] | None = None
    parameters: dict[str, Any] | None = None
    message: str | None = None
    computed_at: datetime | None = None
    requested_at: datetime | None = None
    stale: bool = False  # pending past its lease: the next Compute asks the queue again

    def as_json(self) -> dict[str, Any]:
        """The status endpoint's entry: {"state", "computed_at"}."""
        when = self.computed_at.isoformat() if self.computed_at else None
        return {"state": self.state, "computed_at": when}


def shown(row: results.Result | None) -> Shown:
    """A row as the page shows it."""
    limits = Limits.from_config(current_app.config)
    if row is None:
        return Shown("missing", message="Nothing was asked under this address: compute it again.")
    if not results.usable(row, limits):
        stale = row.requested_at < utcnow() - results.PENDING_LEASE
        return Shown("pending", requested_at=row.requested_at, stale=stale)
    parameters = (row.value or {}).get("parameters")
    try:
        result = outcome(row)
    except AnalysisError as exc:
        return Shown("problem", None, parameters, str(exc), row.computed_at)
    return Shown("done", result, parameters, None, row.computed_at)


def _read(keys: dict[str, str]) -> dict[str, Shown]:
    return {
        name: shown(results.read(ANALYSES[name][0], [key]).get(key)) for name, key in keys.items()
    }


@bp.route("/analyses", methods=["GET", "POST"])
def analyses():
    """GET: the forms, and the analyses the address asks for (stored, pending or
    refused). POST: ask for one (see ask_analysis)."""
    keys = _keys()
    if request.method == "POST":
        return ask_analysis(keys)
    return _page(keys, _read(keys), {}, {})


def ask_analysis(keys: dict[str, str]):
    """Ask for one analysis (analysis=judge|recall|plan|arms): 303 to the page that shows
    it (with the keys the address already showed); 422 with the form's problem."""
    analysis = request.form.get("analysis") or ""
    if analysis not in ANALYSES:
        return _page(keys, _read(keys), {}, {"page": "Choose an analysis to compute."}, 422)
    try:
        request_: Asked = asked(analysis, _parameters(analysis))
    except AnalysisError as exc:
        return _page(keys, _read(keys), request.form, {analysis: str(exc)}, 422)
    ask(request_)
    keys[analysis] = request_.key
    return redirect(
        console_url("research.analyses", **keys, _anchor=f"{analysis}-heading"), code=303
    )


@bp.get("/analyses/status")
def analyses_status():
    """JSON for the page's module: {"analyses": {name: {"state", "computed_at"}}, "ready":
    nothing is pending}."""
    states = {name: entry.as_json() for name, entry in _read(_keys()).items()}
    ready = all(entry["state"] != "pending" for entry in states.values())
    return jsonify({"analyses": states, "ready": ready})


def _page(
    keys: dict[str, str],
    entries: dict[str, Shown],
    form: Any,
    problems: dict[str, str],
    status: int = 200,
):
    pending = any(entry.state == "pending" for entry in entries.values())
    values = dict(form) if form else {}
    for name, entry in entries.items():  # the form shows what its result was asked with
        if name not in problems and entry.parameters:
            asked_with = {
                k: f"{v:g}" if isinstance(v, float) else v
                for k, v in entry.parameters.items()
                if v is not None
            }
            values = {**asked_with, **values}
    return (
        render_template(
            "research/analyses.html",
            sources=judge_sources(),
            figures=FIGURES,
            default_epsilon=DEFAULT_EPSILON,
            form=values,
            keys=keys,
            here=console_url("research.analyses", **keys),
            status_url=console_url("research.analyses_status", **keys),
            entries=entries,
            problems=problems,
            pending=pending,
            poll_ms=POLL_MS,
            analysis_queue=queue_state() if pending else None,
            worker_silent_minutes=int(WORKER_SILENT.total_seconds() // 60),
        ),
        status,
    )
