"""The analyses of docs/analyses.md on this database: judge report, recall estimate,
suggestion arms and decoys, study planner.

Each analysis is one entry point `compute_...(study, ...) -> dict` (the JSON of
docs/contracts.md section 10), given the study as app.research.dashboard loads it (a
`DashboardView`: the figures' documents, their sentences and the counted submitted
sessions, attention checks and the workers left out set apart). They gather plain data
from it (and, for what the view does not hold, a few queries) and call the pure
arithmetic of app/analysis/. Nothing here belongs to a request: the commands
(app/research/cli.py) and the researcher's Analyses page's "Compute" (a POST) call them,
and a queue job can call them as they are.

The readings of the analyses are those of every study figure: submitted sessions of
regular documents, the workers left out (app.crowd.checks.flagged) not counted, no
annotation made from a decoy suggestion (app.research.dashboard does not load them). A
reading's spans are its annotation rows as `Mark(paragraph, start, end, category,
weight)`: a unit with two labels is two marks, one per category, as a model's sentence
with two types is (app.analysis.judge).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import func, select

from app.adjudication.gamma import gamma
from app.adjudication.gamma_cache import continuum, defined
from app.analysis import arm_effects, judge, planner, recall
from app.analysis.alttest import DEFAULT_EPSILON
from app.analysis.matching import Mark, iou_match
from app.core.extensions import db
from app.crowd.paragraph_times import iter_paragraph_records
from app.models import (
    Annotation,
    AnnotationSession,
    Suggestion,
    ValidationItem,
    ValidationJudgment,
    ValidationRound,
)
from app.research.dashboard import DashboardView, DocumentRow, SessionRow
from app.rules import metrics
from app.rules.statuses import SessionStatus
from app.studies import current_study_id
from app.suggestions.arms import study_arms
from app.suggestions.decoys import decoy_counts, session_decisions
from app.taxonomy import current_taxonomy

FIGURES = ("booookscore", "error-rate", "gamma", "precision")
PLANNER_GAMMA_SAMPLES = 20  # random continua per gamma in the planner (many subsets)


class AnalysisError(ValueError):
    """The analysis cannot run on this study (the message says why, for people)."""


# --- readings ---------------------------------------------------------------------------


def _counted(study: DashboardView, document: DocumentRow) -> list[SessionRow]:
    return [
        s for s in document.sessions if s.status == SessionStatus.SUBMITTED and study.counted(s)
    ]


def _marks(session: SessionRow, weights: dict[str, float] | None = None) -> list[Mark]:
    """A reading's rows as marks (the severity's weight, or 1)."""
    weights = weights or {}
    return [
        Mark(p, start, end, category, weights.get(severity or "", 1.0))
        for (p, start, end, category), severity in zip(
            session.spans, session.severities, strict=True
        )
    ]


def _regular(study: DashboardView) -> list[DocumentRow]:
    return [d for d in study.documents if not d.is_check]


# --- judge report -----------------------------------------------------------------------


def _suggestion_marks(source: str, documents: dict[int, str]) -> dict[str, list[Mark]]:
    """The source's (real) suggestions as marks by document external id, one per label."""
    query = select(
        Suggestion.document_id,
        Suggestion.paragraph_id,
        Suggestion.span_start,
        Suggestion.span_end,
        Suggestion.category,
        Suggestion.labels,
    ).where(
        Suggestion.study_id == current_study_id(),
        Suggestion.source == source,
        Suggestion.decoy.is_(False),
    )
    marks: dict[str, list[Mark]] = defaultdict(list)
    for document_id, p, start, end, category, labels in db.session.execute(query):
        if document_id in documents:
            for label in labels or [category]:
                marks[documents[document_id]].append(Mark(p, start, end, label))
    return marks


def judge_sources() -> list[str]:
    """The sources of suggestions a judge report can take (real suggestions only)."""
    query = (
        select(Suggestion.source)
        .where(Suggestion.study_id == current_study_id(), Suggestion.decoy.is_(False))
        .distinct()
    )
    return sorted(db.session.scalars(query))


def compute_judge_report(
    study: DashboardView,
    judge_name: str,
    epsilon: float = DEFAULT_EPSILON,
    unit: str = judge.SPAN,
    weighted: bool = False,
) -> dict[str, Any]:
    """The judge-report JSON: the judge is a source of suggestions (`import-suggestions
    --source`) or an annotator's `platform:id` (`import-annotations`); the humans are
    every other counted reading of the documents the judge annotated."""
    weights = current_taxonomy().severity_weights if weighted else {}
    regular = _regular(study)
    by_id = {d.id: d.external_id for d in regular}
    from_suggestions = _suggestion_marks(judge_name, by_id)
    annotators = {s.annotator for d in regular for s in _counted(study, d)}
    if not from_suggestions and judge_name not in annotators:
        sources = ", ".join(judge_sources()) or "none"
        raise AnalysisError(
            f"No suggestions from source {judge_name!r} and no annotator {judge_name!r} on "
            f"the study's documents (sources of suggestions: {sources}; an annotator is "
            "named platform:id as in the exports)."
        )
    readings: dict[str, dict[str, list[Mark]]] = {}
    sentences: dict[str, list[metrics.Sentence]] = {}
    for document in regular:
        by_annotator = {s.annotator: _marks(s, weights) for s in _counted(study, document)}
        if from_suggestions:
            if document.external_id not in from_suggestions:
                continue
            by_annotator.pop(judge_name, None)
            by_annotator[judge_name] = from_suggestions[document.external_id]
        elif judge_name not in by_annotator:
            continue
        readings[document.external_id] = by_annotator
        sentences[document.external_id] = document.sentences
    report = judge.judge_report(
        readings, judge_name, unit=unit, sentences=sentences, weighted=weighted, epsilon=epsilon
    )
    return report


# --- recall estimate --------------------------------------------------------------------


def _planted_captures(study: DashboardView) -> tuple[int, list[recall.DocumentCaptures]]:
    """(planted errors on attention-check documents read twice or more, their captures):
    an annotator found a planted error when one of their spans matches it."""
    planted, captures = 0, []
    for document in study.documents:
        if not document.is_check or not document.gold:
            continue
        readings = {s.annotator: _marks(s) for s in _counted(study, document)}
        if len(readings) < 2:
            continue
        errors = []
        for answer in document.gold:
            truth = Mark(answer["paragraph_id"], answer["start"], answer["end"], answer["category"])
            finders = frozenset(
                annotator
                for annotator, marks in readings.items()
                if any(iou_match(truth, mark) for mark in marks)
            )
            if finders:
                errors.append((answer["category"], finders))
        planted += len(document.gold)
        captures.append(
            recall.DocumentCaptures(document.external_id, frozenset(readings), tuple(errors))
        )
    return planted, captures


def compute_recall_estimate(study: DashboardView, method: str | None = None) -> dict[str, Any]:
    """The recall-estimate JSON: capture-recapture over the counted readings of regular
    documents (app.analysis.recall; `method` None chooses Chapman or model M_t), and the
    same estimate on the planted errors of attention checks beside their true number."""
    captures = [
        recall.captures_of(
            document.external_id,
            {s.annotator: _marks(s) for s in _counted(study, document)},
        )
        for document in _regular(study)
    ]
    report = recall.recall_estimate(captures, method)
    planted, planted_captures = _planted_captures(study)
    if planted_captures:
        report["planted"] = recall.planted_check(planted, planted_captures)
    return report


# --- suggestion arms and decoys ---------------------------------------------------------


def compute_decoys(study: DashboardView) -> dict[str, Any]:
    """study-report `decoys`: decoys shown, taken and the take rate with its interval,
    overall and per worker (shown 0 and a null rate when no decoy was shown)."""
    return arm_effects.decoy_rates(decoy_counts(study.excluded_annotator_ids))


def _reading_seconds() -> dict[int, tuple[float, int]]:
    """Per submitted session: (seconds its paragraphs were visible, paragraphs timed)."""
    totals: dict[int, list[float]] = defaultdict(lambda: [0.0, 0])
    for row in iter_paragraph_records(submitted_only=True):
        if row["seconds_visible"] is not None:
            total = totals[int(row["session_id"])]
            total[0] += row["seconds_visible"]
            total[1] += 1
    return {sid: (seconds, int(count)) for sid, (seconds, count) in totals.items()}


def _ratio(parts: Sequence[tuple[float, float]], scale: float = 100.0) -> float | None:
    below = sum(b for _, b in parts)
    return scale * sum(a for a, _ in parts) / below if below else None


def _arm_figures() -> dict[str, Callable]:
    """The arms' figures, each from the list of one arm's documents (a document: its
    readings in that arm, each a dict, and its per-document figures, computed once: the
    bootstrap only re-averages them)."""

    def accepted(documents):
        return _ratio([(r["taken"], r["decided"]) for d in documents for r in d["readings"]])

    def errors(documents):
        return _ratio([(r["units"], r["sentences"]) for d in documents for r in d["readings"]])

    def score(documents):
        return metrics.mean(d["booookscore"] for d in documents)

    def agreement(documents):
        value = metrics.mean(d["agreement"] for d in documents)
        return None if value is None else 100 * value

    def seconds(documents):
        return _ratio(
            [(r["seconds"], r["paragraphs"]) for d in documents for r in d["readings"]], 1.0
        )

    return {
        "accepted": accepted,
        "errors_per_sentence": errors,
        "booookscore": score,
        "agreement": agreement,
        "seconds_per_paragraph": seconds,
    }


def _arm_document(readings: list[dict]) -> dict[str, Any]:
    """One document's readings in one arm, with the per-document figures computed once."""
    return {
        "readings": readings,
        "booookscore": metrics.mean(r["score"] for r in readings if r["score"] is not None),
        "agreement": metrics.mean_pairwise_f1([r["reading"] for r in readings]),
    }


def has_both_arms() -> bool:
    """Whether the study has both suggestion arms (show and none): one query."""
    return {arm_effects.SHOW, arm_effects.NONE} <= {arm for arm, _ in study_arms()}


def compute_suggestion_arms(study: DashboardView) -> dict[str, Any] | None:
    """study-report `suggestion_arms`: each figure per arm (show, none) and the difference
    show - none with its bootstrap interval over documents (app.analysis.arm_effects);
    None unless the study has both arms."""
    if not has_both_arms():
        return None
    regular = _regular(study)
    sessions = [s for d in regular for s in _counted(study, d)]
    arm_of = dict(
        db.session.execute(
            select(AnnotationSession.id, AnnotationSession.arm).where(
                AnnotationSession.id.in_([s.id for s in sessions] or [-1])
            )
        ).all()
    )
    decisions = session_decisions(s.id for s in sessions)
    seconds = _reading_seconds()
    documents = []
    for document in regular:
        by_arm: dict[str, list[dict]] = defaultdict(list)
        for s in _counted(study, document):
            arm = arm_of.get(s.id)
            if arm is None:
                continue
            taken, decided = decisions.get(s.id, (0, 0))
            spent, paragraphs = seconds.get(s.id, (0.0, 0))
            by_arm[arm].append(
                {
                    "taken": taken,
                    "decided": decided,
                    "units": s.error_units,
                    "sentences": len(document.sentences),
                    "score": metrics.booookscore(len(document.sentences), s.error_units),
                    "reading": metrics.Reading.of_units(s.units),
                    "seconds": spent,
                    "paragraphs": paragraphs,
                }
            )
        if by_arm:
            documents.append({arm: _arm_document(rows) for arm, rows in by_arm.items()})
    return arm_effects.compare_arms(documents, _arm_figures())


# --- study planner ----------------------------------------------------------------------


def _gamma_of(document: DocumentRow) -> planner.PerDocument:
    def per_document(readings: Sequence[SessionRow]) -> tuple[float, float] | None:
        annotators = sorted({s.annotator for s in readings})
        units = continuum(
            document.paragraph_lengths,
            ((s.annotator, [(p, a, b, c or "") for p, a, b, c in s.unit_spans]) for s in readings),
        )
        if len(annotators) < 2 or not defined(units, annotators):
            return None
        return gamma(units, samples=PLANNER_GAMMA_SAMPLES, annotators=annotators).gamma, 1.0

    return per_document


def _precision_counts() -> dict[int, tuple[int, int]]:
    """Per session: (judgments counting the annotation valid, judgments) over every
    validation round's items made from its annotations; partial agreement counts as valid
    where the round says so (`partial_counts_as_valid`, app.validation.report's rule)."""
    partial_valid = {
        round_id: (settings or {}).get("partial_counts_as_valid", True)
        for round_id, settings in db.session.execute(
            select(ValidationRound.id, ValidationRound.settings).where(
                ValidationRound.study_id == current_study_id()
            )
        )
    }
    query = (
        select(
            Annotation.session_id,
            ValidationItem.round_id,
            ValidationJudgment.verdict,
            func.count(),
        )
        .select_from(ValidationJudgment)
        .join(ValidationItem, ValidationItem.id == ValidationJudgment.item_id)
        .join(Annotation, Annotation.id == ValidationItem.annotation_id)
        .join(ValidationRound, ValidationRound.id == ValidationItem.round_id)
        .where(ValidationRound.study_id == current_study_id())
        .group_by(Annotation.session_id, ValidationItem.round_id, ValidationJudgment.verdict)
    )
    counts: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for session_id, round_id, verdict, count in db.session.execute(query):
        valid = verdict == "agree" or (verdict == "partial" and partial_valid.get(round_id, True))
        counts[session_id][0] += count if valid else 0
        counts[session_id][1] += count
    return {sid: (ok, n) for sid, (ok, n) in counts.items()}


def compute_plan(
    study: DashboardView,
    figure: str,
    half_width: float,
    hourly_rate: float | None = None,
    fee_percent: float = 0.0,
) -> dict[str, Any]:
    """The plan-study JSON (app.analysis.planner) from the study as a pilot: its counted
    submitted readings of regular documents, their minutes from the paragraph timings
    (or, without timings, from the session's start to its submission)."""
    if figure not in FIGURES:
        raise AnalysisError(f"unknown figure {figure!r}; choose one of {', '.join(FIGURES)}")
    regular = [d for d in _regular(study) if _counted(study, d)]
    if len(regular) < planner.MIN_DOCUMENTS:
        raise AnalysisError(
            f"The planner needs a pilot: submitted readings of at least "
            f"{planner.MIN_DOCUMENTS} documents (this study has {len(regular)})."
        )
    readings = [_counted(study, d) for d in regular]
    document_of = {s.id: d for d, rows in zip(regular, readings, strict=True) for s in rows}
    if figure == "gamma":
        # Each document's gamma is on its own text: the readings say which document.
        def per_document(rows: Sequence[SessionRow]) -> tuple[float, float] | None:
            return _gamma_of(document_of[rows[0].id])(rows) if rows else None

    elif figure == "precision":
        counts = _precision_counts()
        per_document = planner.ratio_of_readings(
            lambda s: 100 * counts.get(s.id, (0, 0))[0], lambda s: counts.get(s.id, (0, 0))[1]
        )
    elif figure == "error-rate":  # error units per 100 sentences (BooookScore's complement)
        per_document = planner.ratio_of_readings(
            lambda s: 100 * s.error_units, lambda s: len(document_of[s.id].sentences)
        )
    else:
        per_document = planner.mean_of_readings(
            lambda s: metrics.booookscore(len(document_of[s.id].sentences), s.error_units)
        )
    seconds = _reading_seconds()
    # A reading's minutes: its paragraph timings, else (sessions from before timings were
    # kept, or imported) the time from its start to its submission.
    minutes = [
        (seconds[s.id][0] if s.id in seconds else s.seconds) / 60 for rows in readings for s in rows
    ]
    plan = planner.plan_study(
        readings, per_document, figure, half_width, minutes, hourly_rate, fee_percent
    )
    if not plan["plans"]:
        raise AnalysisError(
            f"The pilot gives no {figure} to plan from: it needs the figure defined on at "
            "least two documents (gamma and agreement: two readings of a document; "
            "precision: judged annotations in a validation round)."
        )
    return plan
