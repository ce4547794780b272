"""`flask study-report`: the study's figures for papers, and their download routes (login:
the blueprint's guard, app.research.auth.require_researcher)."""

from __future__ import annotations

import json

import click
from flask import Response
from flask.cli import with_appcontext

from app.cli import echo_report, report_format_option
from app.research import bp
from app.research.dashboard import load_study
from app.research.study_report import build_report, format_csv, format_table
from app.study import study_settings
from app.taxonomy import current_taxonomy


def study_report(id_prefix: str | None = None) -> dict:
    """The study-report JSON of the running app's study (documents whose id starts so)."""
    study = load_study(study_settings(), id_prefix=id_prefix)
    return build_report(study, [category.key for category in current_taxonomy().categories])


@click.command("study-report")
@report_format_option
@click.option("--id-prefix", default=None, help="Only documents whose id starts with this.")
@with_appcontext
def study_report_command(fmt: str, id_prefix: str | None) -> None:
    """Print the study's figures: BooookScore per document and overall (0-100), errors per
    sentence by category (BooookScore Table 1), agreement, attention checks; attention-check
    documents are listed as excluded and counted in no figure."""
    echo_report(study_report(id_prefix), fmt, format_csv, format_table)


@bp.get("/export/study-report.json")
def study_report_json() -> Response:
    """The study report as a JSON download."""
    body = json.dumps(study_report(), indent=2, ensure_ascii=False)
    return _download(body, "application/json; charset=utf-8", "study-report.json")


@bp.get("/export/study-report.csv")
def study_report_csv() -> Response:
    """The study report as a CSV download."""
    return _download(format_csv(study_report()), "text/csv; charset=utf-8", "study-report.csv")


def _download(body: str, content_type: str, filename: str) -> Response:
    response = Response(body, content_type=content_type)
    response.headers["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
