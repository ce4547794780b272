"""`flask study-report`: the study's figures for papers, and their download routes (login:
the blueprint's guard, app.research.auth.require_researcher)."""

from __future__ import annotations

import json
import sys
from collections import defaultdict

import click
from flask import Response, request
from flask.cli import with_appcontext

from app.adjudication.gold import attention_gold, iter_gold_records
from app.cli import echo_report, report_format_option
from app.crowd.settings import study_settings
from app.research import bp
from app.research.agreement_figures import agreement_figures, resolve_gamma
from app.research.dashboard import Study, load_study
from app.research.study_report import build_report, format_csv, format_table
from app.taxonomy import current_taxonomy


def study_report(
    id_prefix: str | None = None, compute_gamma: bool = False, include_flagged: bool = False
) -> dict:
    """The study-report JSON of the running app's study (documents whose id starts so;
    workers left out by app.crowd.checks.flagged counted only with `include_flagged`).
    Gamma: computed where missing with `compute_gamma` (the command), else the cached
    values (the downloads: a page request never waits for it)."""
    study = load_study(study_settings(), id_prefix=id_prefix, include_flagged=include_flagged)
    if compute_gamma:
        total = sum(
            not d.is_check and bool(d.figures and d.figures.gamma_key) for d in study.documents
        )
        with click.progressbar(length=total, label="Computing gamma", file=sys.stderr) as bar:
            resolve_gamma(study, compute=True, progress=bar.update)
    else:
        resolve_gamma(study)
    return build_report(
        study,
        [category.key for category in current_taxonomy().categories],
        agreement_figures(study),
        adjudicated_gold(study),
    )


def adjudicated_gold(study: Study) -> dict[int, list[dict]]:
    """The adjudicated gold set of each regular document that has one, as attention-check
    answers (app.adjudication.gold), by document database id."""
    wanted = {d.external_id: d.id for d in study.documents if not d.is_check}
    by_document: dict[str, list[dict]] = defaultdict(list)
    for record in iter_gold_records():
        if record["document_id"] in wanted:
            by_document[record["document_id"]].append(record)
    return {wanted[key]: attention_gold(records) for key, records in by_document.items()}


@click.command("study-report")
@report_format_option
@click.option("--id-prefix", default=None, help="Only documents whose id starts with this.")
@click.option(
    "--include-flagged",
    is_flag=True,
    help="Count the sessions of workers who failed checks or training or were flagged by "
    "their attention checks (left out by default; listed under excluded.annotators).",
)
@with_appcontext
def study_report_command(fmt: str, id_prefix: str | None, include_flagged: bool) -> None:
    """Print the study's figures: BooookScore per document and overall (0-100), errors per
    sentence by category (BooookScore Table 1), agreement (alpha, span F1, gamma,
    linked-pair F1, each with a bootstrap 95% interval over documents), precision and
    recall against gold (attention checks and adjudicated gold sets); attention-check
    documents and the workers left out (failed checks, failed training, flagged by their
    attention checks) are listed as excluded and counted in no figure. Computes the gamma
    of documents not yet in the gamma cache (progress on standard error)."""
    report = study_report(id_prefix, compute_gamma=True, include_flagged=include_flagged)
    echo_report(report, fmt, format_csv, format_table)


@bp.get("/export/study-report.json")
def study_report_json() -> Response:
    """The study report as a JSON download (?include_flagged=1: as the dashboard's switch)."""
    body = json.dumps(
        study_report(include_flagged=include_flagged_arg()), indent=2, ensure_ascii=False
    )
    return _download(body, "application/json; charset=utf-8", "study-report.json")


@bp.get("/export/study-report.csv")
def study_report_csv() -> Response:
    """The study report as a CSV download (?include_flagged=1: as the dashboard's switch)."""
    body = format_csv(study_report(include_flagged=include_flagged_arg()))
    return _download(body, "text/csv; charset=utf-8", "study-report.csv")


def include_flagged_arg() -> bool:
    """The console's switch: ?include_flagged=1 counts the workers left out."""
    return request.args.get("include_flagged") == "1"


def _download(body: str, content_type: str, filename: str) -> Response:
    response = Response(body, content_type=content_type)
    response.headers["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
