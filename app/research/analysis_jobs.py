"""The analyses of docs/analyses.md as kinds of the analysis queue (app/jobs): the judge
report, the recall estimate, the study planner and the suggestion-arm comparison.

Pages never compute them (issue 31: "pages never compute"): the Analyses page asks for a
key (`ask`: the stored result, or a job on the queue) and shows what is stored; the
commands (`flask judge-report`, `recall-estimate`, `plan-study`, `study-report`) read the
stored result of the same key, or compute and store it themselves (`stored_or_computed`),
so a result computed by either is the other's too.

A key is the kind's key (app.jobs.kinds.Kind.key) of
- the content: the study's id and `study_content()`, a fingerprint of the rows the
  analyses read (documents, sessions by status, outcome and arm, the annotations and
  paragraph timings of submitted sessions, suggestions and their rejections, validation
  judgments, the study's taxonomy version): whatever changes a reading (a submission, an
  import, a judgment, a new taxonomy version) changes the key, so a new key is computed
  and an old value is never served for new readings;
- the parameters: each analysis's own (judge, epsilon, unit, weighted; method; figure,
  half-width, hourly rate, fee) and the study's selection (id_prefix, include_flagged);
- the kind's algorithm version (part of every key: a changed rule is a new key).

A job computes on the readings as they are when it runs (a study still taking
submissions may have moved on since it was asked for; the page shows when it was
computed). Its value is `{"parameters", "result", "problem"}`: `result` the analysis's
JSON (docs/contracts.md section 10, unchanged), or `problem` the message of an analysis
that cannot run on this study (app.research.analyses.AnalysisError), stored as a result
too: the page and the commands say it without computing again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from flask import current_app
from sqlalchemy import case, func, select

from app.core.extensions import db
from app.crowd.settings import study_settings
from app.jobs import results
from app.jobs.kinds import Compute, Kind, register
from app.jobs.limits import Limits
from app.jobs.queue import compute_now, submit
from app.models import (
    Annotation,
    AnnotationSession,
    Document,
    ParagraphTiming,
    Study,
    Suggestion,
    SuggestionRejection,
    ValidationItem,
    ValidationJudgment,
    ValidationRound,
)
from app.research.analyses import (
    AnalysisError,
    compute_judge_report,
    compute_plan,
    compute_recall_estimate,
    compute_suggestion_arms,
)
from app.research.dashboard import DashboardView, load_study
from app.rules.statuses import SessionStatus
from app.studies import current_study, use_study

# The selection of the study every analysis's parameters carry (study-report's options).
SELECTION = {"id_prefix": None, "include_flagged": False}


def _judge(study: DashboardView, p: dict[str, Any]) -> dict[str, Any]:
    return compute_judge_report(study, p["judge"], p["epsilon"], p["unit"], p["weighted"])


def _recall(study: DashboardView, p: dict[str, Any]) -> dict[str, Any]:
    return compute_recall_estimate(study, p["method"])


def _plan(study: DashboardView, p: dict[str, Any]) -> dict[str, Any]:
    return compute_plan(study, p["figure"], p["half_width"], p["hourly_rate"], p["fee_percent"])


def _arms(study: DashboardView, p: dict[str, Any]) -> dict[str, Any] | None:
    return compute_suggestion_arms(study)


Analysis = Callable[[DashboardView, dict[str, Any]], dict[str, Any] | None]


def value_of(analysis: Analysis, study: DashboardView, parameters: dict[str, Any]) -> dict:
    """A kind's value: the analysis's JSON, or the problem that stops it, with the
    parameters it was asked with."""
    try:
        return {"parameters": parameters, "result": analysis(study, parameters), "problem": None}
    except ValueError as exc:  # AnalysisError, or a choice the estimators refuse
        return {"parameters": parameters, "result": None, "problem": str(exc)}


def _job_compute(analysis: Analysis) -> Compute:
    """The kind's computation: the study of the job, loaded as every figure reads it."""

    def compute(job: dict[str, Any], limits: Limits) -> dict[str, Any]:
        study = db.session.get(Study, job["study"])
        if study is None:
            return {"parameters": job["parameters"], "result": None, "problem": "no such study"}
        use_study(study)
        parameters = job["parameters"]
        view = load_study(
            study_settings(),
            id_prefix=parameters["id_prefix"],
            include_flagged=parameters["include_flagged"],
        )
        return value_of(analysis, view, parameters)

    compute.__doc__ = f"The queue's computation of {analysis.__name__.strip('_')}."
    return compute


JUDGE = register("judge_report", "judge-v1", _job_compute(_judge))
RECALL = register("recall_estimate", "recall-v1", _job_compute(_recall))
PLAN = register("plan_study", "plan-v1", _job_compute(_plan))
ARMS = register("suggestion_arms", "arms-v1", _job_compute(_arms))
ANALYSES: dict[str, tuple[Kind, Analysis]] = {
    "judge": (JUDGE, _judge),
    "recall": (RECALL, _recall),
    "plan": (PLAN, _plan),
    "arms": (ARMS, _arms),
}


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, float):
        return round(value, 3)
    return value if value is None or isinstance(value, (int, str, bool)) else str(value)


def _row(query) -> list[Any]:
    return [_plain(v) for v in db.session.execute(query).one()]


def study_content() -> dict[str, Any]:
    """A fingerprint of the current study's rows that the analyses read (a handful of
    aggregate statements; no reading is loaded): see the module's docstring."""
    study = current_study()
    sid = study.id
    and_study = (AnnotationSession.study_id == sid,)
    submitted = (*and_study, AnnotationSession.status == SessionStatus.SUBMITTED)
    sessions = db.session.execute(
        select(
            AnnotationSession.status,
            AnnotationSession.outcome,
            AnnotationSession.arm,
            func.count(),
            func.sum(AnnotationSession.id),
            func.max(AnnotationSession.submitted_at),
        )
        .where(*and_study)
        .group_by(AnnotationSession.status, AnnotationSession.outcome, AnnotationSession.arm)
    ).all()
    return {
        "study": sid,
        "taxonomy": study.taxonomy_version,
        "documents": _row(
            select(func.count(), func.sum(Document.id), func.max(Document.updated_at)).where(
                Document.study_id == sid
            )
        ),
        "sessions": sorted(([_plain(v) for v in row] for row in sessions), key=repr),
        "annotations": _row(
            select(
                func.count(),
                func.sum(Annotation.id),
                func.count(Annotation.deleted_at),
                func.max(Annotation.deleted_at),
            )
            .join(AnnotationSession, AnnotationSession.id == Annotation.session_id)
            .where(*submitted)
        ),
        "timings": _row(
            select(func.count(), func.sum(ParagraphTiming.seconds_visible))
            .join(AnnotationSession, AnnotationSession.id == ParagraphTiming.session_id)
            .where(*submitted)
        ),
        "suggestions": _row(
            select(
                func.count(),
                func.sum(Suggestion.id),
                func.sum(case((Suggestion.decoy.is_(True), 1), else_=0)),
            ).where(Suggestion.study_id == sid)
        ),
        "rejections": _row(
            select(
                func.count(),
                func.sum(SuggestionRejection.id),
                func.count(SuggestionRejection.withdrawn_at),
            )
            .join(AnnotationSession, AnnotationSession.id == SuggestionRejection.session_id)
            .where(*submitted)
        ),
        "judgments": _row(
            select(func.count(), func.sum(ValidationJudgment.id))
            .join(ValidationItem, ValidationItem.id == ValidationJudgment.item_id)
            .join(ValidationRound, ValidationRound.id == ValidationItem.round_id)
            .where(ValidationRound.study_id == sid)
        ),
    }


@dataclass(frozen=True)
class Asked:
    """One analysis asked for: its kind, key and job (everything the worker needs)."""

    name: str
    kind: Kind
    key: str
    job: dict[str, Any]


def asked(name: str, parameters: dict[str, Any]) -> Asked:
    """The key and job of analysis `name` (judge | recall | plan | arms) on the current
    study with these parameters (the selection's defaults added)."""
    kind = ANALYSES[name][0]
    parameters = {**SELECTION, **parameters}
    content = study_content()
    key = kind.key(content, parameters)
    return Asked(name, kind, key, {"study": content["study"], "parameters": parameters})


def ask(request: Asked) -> results.Result | None:
    """A page's way: the stored row of the key, asked of the queue when it has no usable
    one (app.jobs.queue.submit: pending, and one job across every server). Never computes."""
    found = results.read(request.kind, [request.key])
    limits = Limits.from_config(current_app.config)
    if results.usable(found.get(request.key), limits):
        return found[request.key]
    submit(request.kind, {request.key: request.job}, found)
    return results.read(request.kind, [request.key]).get(request.key)


def stored_or_computed(
    request: Asked,
    study: Callable[[], DashboardView] | None = None,
    progress: Callable[[str], None] | None = None,
) -> tuple[dict[str, Any] | None, results.Result]:
    """A command's way: (the analysis's JSON, its row): the stored result of the key, or
    computed here and stored (`study`: the command's loaded study, else loaded here);
    AnalysisError with the stored problem, a skip over the analysis limits or an error."""
    analysis = ANALYSES[request.name][1]

    def compute(job: dict[str, Any], limits: Limits) -> dict[str, Any]:
        if progress is not None:
            progress(f"Computing the {request.kind.name.replace('_', ' ')}...")
        if study is None:
            return request.kind.compute(job, limits)
        return value_of(analysis, study(), job["parameters"])

    row = compute_now(request.kind, request.key, request.job, compute)
    return outcome(row), row


def outcome(row: results.Result) -> dict[str, Any] | None:
    """The analysis's JSON of a stored row; AnalysisError for what stops it."""
    if row.status == results.SKIPPED:
        limits = (row.value or {}).get("limits", [0, 0])
        raise AnalysisError(
            f"Skipped: over the analysis limits ({(row.value or {}).get('skipped')}; "
            f"ANALYSIS_TIME_LIMIT {limits[0]:g} s, ANALYSIS_MEMORY_LIMIT {limits[1]:g} MB): "
            "run its command with larger limits (0: none) to compute it."
        )
    if row.status == results.ERROR:
        raise AnalysisError(f"The computation failed: {row.error}")
    value = row.value or {}
    if value.get("problem"):
        raise AnalysisError(value["problem"])
    return value.get("result")


def study_figure(
    name: str, parameters: dict[str, Any], study: DashboardView, compute: bool
) -> tuple[dict[str, Any] | None, bool]:
    """(an analysis's JSON, pending) for a report on the loaded `study`: computed here
    when missing (`compute`, for commands), else the stored result, or None and pending
    (asked of the queue)."""
    request = asked(name, parameters)
    if compute:
        return stored_or_computed(request, study=lambda: study)[0], False
    row = ask(request)
    if row is None or not results.usable(row, Limits.from_config(current_app.config)):
        return None, True
    return outcome(row), False
