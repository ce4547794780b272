"""The study's figures for papers (`flask study-report`, /research/export/study-report.*).

The same figures as the dashboard (app.research.dashboard computes them; the rules are in
app.rules.metrics), in the JSON shape of docs/contracts.md#study-report-json. A document's
``booookscore`` is BooookScore as the release's scorer computes it (Chang et al. 2024,
eq. 1 and footnote 12; `Scorer.get_score`, app.rules.metrics): 100 * (1 - error units /
sentences) per submitted session, the mean over its sessions; the study's ``booookscore``
is the mean over documents with a submitted session. It is the one score not bounded to
0-100: a reading with more error units than sentences scores below 0, reported as it
comes. Every other score is on a 0-100 scale: ``errors_per_sentence`` (Table 1:
occurrences / sentences x 100), the span F1 figures and linked-pair F1 under
``agreement`` (app.research.agreement_figures: each with its unit, rule and bootstrap 95%
interval over documents), and each annotator's precision and recall under ``gold``
(attention checks, and the adjudicated gold set of other documents, at the
attention-check matching rule).
Krippendorff's alpha and gamma stay coefficients. Per document, ``sentences`` is its
number of sentences (what the score and Table 1 divide by) and ``error_sentences`` its
error units (the key keeps its second-wave name: it counts units, each error once
whatever it spans and however many labels it has), the mean over the document's submitted
sessions (a whole number with one annotator), so that with one annotator booookscore =
100 * (1 - error_sentences / sentences).
Attention-check documents are listed under ``excluded.documents`` and counted in no
figure; the workers left out (app.crowd.checks.flagged: failed checks, failed training, or
flagged by their attention checks) under ``excluded.annotators`` with their reason, and
no figure counts their sessions (``--include-flagged`` counts them again).
``suggestions`` gives, per source of model suggestions, the shares accepted, edited and
rejected by workers and the workers' own additions (app.suggestions.records, where the
rule is written). A document's ``mqm_per_100_words`` is its MQM-style score
(app.research.mqm: the sum of the severity weights of a session's errors per 100 words,
mean over submitted sessions; MQM, Lommel et al. 2014, as scored by Freitag et al. 2021),
null when the taxonomy has no severities.
``recall_estimate``, ``suggestion_arms`` and ``decoys`` are the analyses of
docs/analyses.md (app.research.analyses): the study's capture-recapture estimate of its
errors, the suggestion arms compared, and how often workers took decoy suggestions.
"""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from app.adjudication.gold import attention_gold, iter_gold_records
from app.crowd.settings import study_settings
from app.research.agreement_figures import Figure, agreement_figures
from app.research.analyses import compute_decoys, has_both_arms
from app.research.analysis_jobs import study_figure
from app.research.dashboard import DashboardView, load_study
from app.rules import metrics
from app.rules.csv_safety import safe_cell
from app.rules.metrics import GoldRecall
from app.rules.statuses import SessionStatus
from app.suggestions.records import suggestion_figures
from app.taxonomy import current_taxonomy

CHUNK = 64 * 1024  # characters per streamed piece of the report (iter_json, iter_csv)


def _percent(value: float | None) -> float | None:
    return None if value is None else 100 * value


def gold_scores(
    study: DashboardView, gold_sets: Mapping[int, list[dict]] | None = None
) -> dict[str, GoldRecall]:
    """Each annotator's score against gold: attention checks' gold (as the dashboard
    scores it) plus, on other documents, their adjudicated gold set (`gold_sets`, by
    document database id), at the attention-check matching rule (metrics.gold_recall)."""
    left_out = {worker.label for worker in study.excluded_annotators}
    scores = {row.label: row.gold for row in study.annotators if row.label not in left_out}
    for document in study.documents:
        gold = (gold_sets or {}).get(document.id)
        if document.is_check or not gold:
            continue
        for session in document.sessions:
            if session.status == SessionStatus.SUBMITTED and study.counted(session):
                earlier = scores.get(session.annotator, metrics.NO_GOLD)
                scores[session.annotator] = earlier + metrics.gold_recall(gold, session.spans)
    return {label: score for label, score in sorted(scores.items()) if score.total}


def build_report(
    study: DashboardView,
    category_keys: list[str],
    figures: Sequence[Figure] = (),
    gold_sets: Mapping[int, list[dict]] | None = None,
) -> dict[str, Any]:
    """The study-report JSON of a loaded study (see the module docstring); `figures` are
    app.research.agreement_figures', `gold_sets` the adjudicated gold of regular
    documents."""
    regular = [document for document in study.documents if not document.is_check]
    rates = study.errors_per_sentence
    keys = [*category_keys, *sorted(set(rates) - set(category_keys))]
    annotators = {
        session.annotator
        for document in regular
        for session in document.sessions
        if session.status == SessionStatus.SUBMITTED and study.counted(session)
    }
    return {
        "documents": [
            {
                "document_id": document.external_id,
                "sentences": len(document.sentences),
                "error_sentences": document.error_sentences,  # error units (module docstring)
                "booookscore": _percent(document.coherence),
                "mqm_per_100_words": document.mqm,
                # Per-document agreement (app.research.agreement_figures's rules; null: fewer than
                # two annotators, no linked pairs, or gamma not computed yet).
                "gamma": document.gamma,
                "linked_pair_f1": _percent(document.pair_f1),
            }
            for document in regular
        ],
        "booookscore": _percent(study.mean_coherence),
        "errors_per_sentence": {key: 100 * rates.get(key, 0.0) for key in keys},
        "agreement": {figure.name: figure.as_report() for figure in figures},
        "suggestions": suggestion_figures(
            {document.id for document in regular}, study.excluded_annotator_ids
        ),
        "gold": {
            label: {
                "precision": _percent(score.precision),
                "recall": _percent(score.recall_category),
            }
            for label, score in gold_scores(study, gold_sets).items()
        },
        "excluded": {
            "documents": study.excluded,
            "annotators": [worker.as_report() for worker in study.excluded_annotators],
        },
        "annotators": len(annotators),
    }


def _number(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def format_table(report: Mapping[str, Any]) -> str:
    """The report as plain text for the terminal."""
    # The MQM column only where the taxonomy has severities (else every value is null).
    with_mqm = any(d["mqm_per_100_words"] is not None for d in report["documents"])
    lines = [
        f"BooookScore (mean over documents; 100 x (1 - error units / sentences), "
        f"below 0 possible): {_number(report['booookscore'])}",
        f"Annotators: {report['annotators']}",
        "",
        f"{'document':<40} {'sentences':>9} {'error units':>11} "
        f"{'BooookScore':>11} {'gamma':>6} {'pair F1':>7}"
        + (f" {'MQM/100 words':>13}" if with_mqm else ""),
    ]
    for document in report["documents"]:
        name = document["document_id"]
        lines.append(
            f"{name if len(name) <= 40 else name[:39] + '…':<40} {document['sentences']:>9} "
            f"{_number(document['error_sentences']):>11} {_number(document['booookscore']):>11} "
            f"{_number(document.get('gamma'), 3):>6} {_number(document.get('linked_pair_f1')):>7}"
            + (f" {_number(document['mqm_per_100_words']):>13}" if with_mqm else "")
        )
    lines += ["", "Errors per sentence (% , BooookScore Table 1):"]
    lines += [f"  {key:<30} {value:6.2f}" for key, value in report["errors_per_sentence"].items()]
    lines += ["", "Agreement:"]
    for name, figure in report["agreement"].items():
        interval = _interval(figure["ci95"])
        mc_se = f" (Monte-Carlo SE {figure['mc_se']:.4f})" if figure.get("mc_se") else ""
        lines.append(f"  {name}: {_number(figure['value'], 3)}{interval}{mc_se} ({figure['unit']})")
        if figure.get("skipped"):
            lines.append(f"    skipped (over the analysis limits): {', '.join(figure['skipped'])}")
    if report["gold"]:
        lines += [
            "",
            "Against gold: attention checks and adjudicated sets (precision / recall, %):",
        ]
        lines += [
            f"  {name}: {_number(g['precision'], 1)} / {_number(g['recall'], 1)}"
            for name, g in report["gold"].items()
        ]
    if report.get("suggestions"):
        lines += ["", "Suggestions (% accepted / edited / rejected; workers' own additions %):"]
        lines += [
            f"  {source}: {_number(s['accepted'], 1)} / {_number(s['edited'], 1)} / "
            f"{_number(s['rejected'], 1)}; {_number(s['worker_added'], 1)}"
            for source, s in report["suggestions"].items()
        ]
    lines += _analysis_lines(report)
    documents, workers = report["excluded"]["documents"], report["excluded"]["annotators"]
    lines += ["", f"Excluded (attention checks): {', '.join(documents) if documents else 'none'}"]
    lines.append(
        "Excluded annotators (their sessions count in no figure): "
        + (", ".join(f"{w['annotator_id']} ({w['reason']})" for w in workers) or "none")
    )
    return "\n".join(lines) + "\n"


def _analysis_lines(report: Mapping[str, Any]) -> list[str]:
    """The table's lines of the recall estimate, the suggestion arms and the decoys."""
    lines = []
    estimate = report.get("recall_estimate")
    if estimate and estimate["estimated"] is not None:
        lines += [
            "",
            f"Errors found: {estimate['found']}; estimated (capture-recapture): "
            f"{_number(estimate['estimated'], 1)}{_interval(estimate['ci95'])}; "
            f"share found {_number(estimate['share_found'], 1)}%",
        ]
    arms = report.get("suggestion_arms")
    if arms:
        lines += ["", "Suggestion arms (show - none, bootstrap 95% CI):"]
        for name, difference in arms["difference"].items():
            values = " / ".join(_number(arms["arms"][arm][name]) for arm in arms["arms"])
            lines.append(
                f"  {name}: {values}; difference {_number(difference['value'])}"
                f"{_interval(difference['ci95'])}"
            )
    decoys = report.get("decoys")
    if decoys and decoys["shown"]:
        rate = decoys["rate"]
        lines += [
            "",
            f"Decoys taken (accepted or edited): {decoys['taken']} of {decoys['shown']} "
            f"shown, {_number(rate['value'], 1)}%{_interval(rate['ci95'])}",
        ]
    return lines


def _interval(ci95: list[float] | None) -> str:
    return "" if ci95 is None else f" [95% CI {ci95[0]:.3f}, {ci95[1]:.3f}]"


def _cell(value: Any) -> Any:
    # Ids come from imported files: a cell starting like a formula is neutralised.
    return "" if value is None else safe_cell(value)


def format_csv(report: Mapping[str, Any]) -> str:
    """The report as CSV rows: section, key, sentence counts (documents), value."""
    return "".join(iter_csv(report))


def iter_csv(report: Mapping[str, Any]) -> Iterator[str]:
    """format_csv's text in chunks of about CHUNK characters, as they are written (a
    download or the command streams them: a 10,000-document report is never one string)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    for row in _csv_rows(report):
        writer.writerow(row)
        if buffer.tell() >= CHUNK:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
    yield buffer.getvalue()


def iter_json(report: Mapping[str, Any]) -> Iterator[str]:
    """The report as indented JSON (json.dumps(report, indent=2, ensure_ascii=False)), in
    chunks of about CHUNK characters as the encoder writes them."""
    pieces: list[str] = []
    size = 0
    for piece in json.JSONEncoder(indent=2, ensure_ascii=False).iterencode(report):
        pieces.append(piece)
        size += len(piece)
        if size >= CHUNK:
            yield "".join(pieces)
            pieces, size = [], 0
    yield "".join(pieces)


def _csv_rows(report: Mapping[str, Any]) -> Iterator[tuple]:
    """format_csv's rows, in order."""
    yield ("section", "key", "sentences", "error_sentences", "value")
    for document in report["documents"]:
        yield (
            "document",
            _cell(document["document_id"]),
            document["sentences"],
            _cell(document["error_sentences"]),
            _cell(document["booookscore"]),
        )
        if document["mqm_per_100_words"] is not None:
            key = _cell(document["document_id"])
            value = document["mqm_per_100_words"]
            yield ("mqm_per_100_words", key, "", "", value)
    for document in report["documents"]:
        for name in ("gamma", "linked_pair_f1"):
            if document.get(name) is not None:
                yield (f"document_{name}", _cell(document["document_id"]), "", "", document[name])
    yield ("study", "booookscore", "", "", _cell(report["booookscore"]))
    yield ("study", "annotators", "", "", report["annotators"])
    for key, value in report["errors_per_sentence"].items():
        yield ("errors_per_sentence", _cell(key), "", "", value)
    for name, figure in report["agreement"].items():
        low, high = figure["ci95"] or (None, None)
        yield ("agreement", name, "", "", _cell(figure["value"]))
        yield ("agreement_ci95_low", name, "", "", _cell(low))
        yield ("agreement_ci95_high", name, "", "", _cell(high))
        yield ("agreement_unit", name, "", "", _cell(figure["unit"]))
        if "mc_se" in figure:  # gamma's Monte-Carlo error, and the documents it skipped
            yield ("agreement_mc_se", name, "", "", _cell(figure["mc_se"]))
            for skipped in figure["skipped"]:
                yield ("agreement_skipped", name, "", "", _cell(skipped))
    for name, gold in report["gold"].items():
        yield ("gold_precision", _cell(name), "", "", _cell(gold["precision"]))
        yield ("gold_recall", _cell(name), "", "", _cell(gold["recall"]))
    for source, shares in report.get("suggestions", {}).items():
        for key, value in shares.items():
            yield (f"suggestions_{key}", _cell(source), "", "", _cell(value))
    yield from _analysis_rows(report)
    for document_id in report["excluded"]["documents"]:
        yield ("excluded", _cell(document_id), "", "", "")
    for worker in report["excluded"]["annotators"]:
        yield ("excluded_annotator", _cell(worker["annotator_id"]), "", "", worker["reason"])


def _analysis_rows(report: Mapping[str, Any]) -> list[tuple]:
    """CSV rows of the recall estimate, the suggestion arms and the decoys."""
    rows: list[tuple] = []
    estimate = report.get("recall_estimate") or {}
    for key in ("found", "estimated", "share_found"):
        if key in estimate:
            rows.append(("recall_estimate", key, "", "", _cell(estimate[key])))
    for bound, value in zip(("ci95_low", "ci95_high"), estimate.get("ci95") or (), strict=False):
        rows.append(("recall_estimate", bound, "", "", value))
    arms = report.get("suggestion_arms")
    if arms:
        for arm, figures in arms["arms"].items():
            for name, value in figures.items():
                rows.append((f"suggestion_arm_{arm}", name, "", "", _cell(value)))
        for name, difference in arms["difference"].items():
            low, high = difference["ci95"] or (None, None)
            rows.append(("suggestion_arms_difference", name, "", "", _cell(difference["value"])))
            rows.append(("suggestion_arms_ci95_low", name, "", "", _cell(low)))
            rows.append(("suggestion_arms_ci95_high", name, "", "", _cell(high)))
    decoys = report.get("decoys")
    if decoys:
        low, high = decoys["rate"]["ci95"] or (None, None)
        rows += [
            ("decoys", "shown", "", "", decoys["shown"]),
            ("decoys", "taken", "", "", decoys["taken"]),
            ("decoys", "rate", "", "", _cell(decoys["rate"]["value"])),
            ("decoys", "rate_ci95_low", "", "", _cell(low)),
            ("decoys", "rate_ci95_high", "", "", _cell(high)),
        ]
    return rows


def load_report_study(id_prefix: str | None = None, include_flagged: bool = False) -> DashboardView:
    """The running app's study as the report counts it: documents whose id starts with
    `id_prefix`; the workers app.crowd.checks.flagged leaves out counted only with
    `include_flagged`."""
    return load_study(study_settings(), id_prefix=id_prefix, include_flagged=include_flagged)


def gamma_to_compute(study: DashboardView) -> int:
    """How many regular documents' gamma the report needs (cached or not)."""
    return sum(not d.is_check and bool(d.figures and d.figures.gamma_key) for d in study.documents)


def study_report(
    study: DashboardView, compute: bool = False, id_prefix: str | None = None
) -> dict[str, Any]:
    """The study-report JSON of a loaded study whose gamma is resolved (app.research.
    agreement_figures.resolve_gamma: computed by the command, stored for the downloads;
    a large study's intervals likewise: `compute`, the command computes what is missing),
    with the analyses of docs/analyses.md that go into it."""
    report = build_report(
        study,
        [category.key for category in current_taxonomy().categories],
        agreement_figures(study, compute),
        adjudicated_gold(study),
    )
    return {**report, **analysis_keys(study, compute, id_prefix)}


# What a download shows of an analysis still on the queue: the shape, nulls, and pending.
PENDING_RECALL = {"found": None, "estimated": None, "ci95": None, "share_found": None}
PENDING_ARMS: dict[str, Any] = {"arms": {}, "difference": {}}


def analysis_keys(
    study: DashboardView, compute: bool = False, id_prefix: str | None = None
) -> dict[str, Any]:
    """study-report's `recall_estimate` (the recall estimate's `study` object),
    `suggestion_arms` (null without both arms) and `decoys` (app.research.analyses).
    The first two are the analysis queue's results (app.research.analysis_jobs), shared
    with the Analyses page and the commands: computed here when missing (`compute`, the
    commands), else read, or asked of the queue and given with nulls and `"pending":
    true` (a download never computes them)."""
    selection = {"id_prefix": id_prefix, "include_flagged": study.include_flagged}
    recall, recall_pending = study_figure("recall", {"method": None, **selection}, study, compute)
    arms, arms_pending = None, False
    if has_both_arms():  # else null, and nothing to ask the queue
        arms, arms_pending = study_figure("arms", selection, study, compute)
    return {
        "recall_estimate": {**PENDING_RECALL, "pending": True}
        if recall_pending or recall is None
        else recall["study"],
        "suggestion_arms": {**PENDING_ARMS, "pending": True} if arms_pending else arms,
        "decoys": compute_decoys(study),
    }


def adjudicated_gold(study: DashboardView) -> dict[int, list[dict]]:
    """The adjudicated gold set of each regular document that has one, as attention-check
    answers (app.adjudication.gold), by document database id."""
    wanted = {d.external_id: d.id for d in study.documents if not d.is_check}
    by_document: dict[str, list[dict]] = defaultdict(list)
    for record in iter_gold_records():
        if record["document_id"] in wanted:
            by_document[record["document_id"]].append(record)
    return {wanted[key]: attention_gold(records) for key, records in by_document.items()}
