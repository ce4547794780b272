"""Validation rounds in the researcher console: the list with its validator links, the form
that creates a round from our export, and each round's report (HTML, JSON, CSV).

Bar geometry is computed in app.research.charts (`precision_chart`) so that the template
only places SVG shapes with presentation attributes: the CSP forbids style attributes.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from flask import Response, abort, flash, jsonify, redirect, render_template
from flask_wtf import FlaskForm
from wtforms import BooleanField, IntegerField, StringField
from wtforms.validators import DataRequired, InputRequired, Length, NumberRange, Optional, Regexp

from app.core.console_urls import console_url
from app.exports.record import ExportFilter
from app.research import bp
from app.research.charts import precision_chart
from app.research.downloads import EXPORTS
from app.research.routes import worker_url
from app.rules.platforms import MTURK_PREVIEW, mturk_external_question, prolific_study_url
from app.studies import current_study
from app.taxonomy import current_taxonomy
from app.validation.report import compute_report, format_csv
from app.validation.rounds import (
    ROUND_NAME,
    RoundError,
    RoundSummary,
    create_round,
    find_round,
    judged_study,
    left_out_lines,
    round_overview,
    working_on,
)

GROUP_TITLES = {
    "by_source": "By source",
    "by_category": "By category",
    "by_annotator": "By original annotator",
    "by_document": "By document",
}


def _report_or_404(name: str) -> dict[str, Any]:
    round_ = find_round(name)
    if round_ is None:
        abort(404, description=f"There is no validation round called {name!r}.")
    return compute_report(round_)


class RoundForm(FlaskForm):
    """The options of `flask validation create-round`, for items from our own export."""

    name = StringField(
        "Round name",
        validators=[
            DataRequired("Give the round a name."),
            Length(max=200),
            Regexp(
                ROUND_NAME,
                message="Use letters, digits, '.', '_' or '-', starting with a letter or digit "
                "(it is part of the validators' address /validate/NAME).",
            ),
        ],
    )
    judgments_per_item = IntegerField(
        "Validators per item",
        default=1,
        validators=[
            InputRequired("Give a whole number from 1 to 100."),
            NumberRange(1, 100, "Give a whole number from 1 to 100."),
        ],
    )
    sample = IntegerField(
        "Sample (optional)",
        validators=[Optional(), NumberRange(min=1, message="Give a whole number of at least 1.")],
    )
    seed = IntegerField(
        "Seed (optional)",
        validators=[Optional(), NumberRange(0, 2**31 - 1, "Give a whole number from 0.")],
    )
    include_unsubmitted = BooleanField("Include annotations of sessions not submitted")


def _validator_links(name: str) -> dict[str, str]:
    """The links for a round's validators, as the study page gives them for annotators."""
    start = worker_url("validation.start", round_name=name)
    return {
        "direct": start,
        "prolific": prolific_study_url(start),
        "mturk_xml": mturk_external_question(start),
        "mturk_preview": worker_url(
            "validation.start", round_name=name, assignmentId=MTURK_PREVIEW
        ),
    }


def _create_from_export(form: RoundForm) -> RoundSummary:
    """Create the round from our export (every session; create_round keeps the submitted
    ones unless asked), through the same code as the CLI. A validation study's round
    judges the annotations of the study it names (docs/validation-rounds.md)."""
    study = current_study()
    with tempfile.TemporaryDirectory(prefix="falte-round-") as folder:
        path = Path(folder) / "annotations.jsonl"
        with path.open("w", encoding="utf-8") as out, working_on(judged_study(study) or study):
            EXPORTS["annotations"].write(out, "jsonl", ExportFilter())
        return create_round(
            form.name.data.strip(),
            [path],
            current_taxonomy(),
            judgments_per_item=form.judgments_per_item.data,
            sample=form.sample.data,
            seed=form.seed.data,
            include_unsubmitted=bool(form.include_unsubmitted.data),
        )


def _created_message(summary: RoundSummary) -> str:
    text = f"Created round {summary.name}: {summary.total} item(s), seed {summary.seed}."
    if summary.unsubmitted_left_out:
        text += f" Left out {summary.unsubmitted_left_out} annotation(s) of sessions not submitted."
    for line in left_out_lines(summary):
        text += f" Left out {line}."
    if summary.rejected:
        text += f" {len(summary.rejected)} annotation(s) could not be used."
    return text


@bp.route("/rounds", methods=["GET", "POST"])
def rounds():
    """Every validation round with its counts, validator links and report; the form that
    creates one (POST)."""
    form = RoundForm()
    problems: list[str] = []
    status = 200
    if form.validate_on_submit():
        if find_round(form.name.data.strip()) is not None:
            form.name.errors = [f"A round named {form.name.data.strip()} already exists."]
        else:
            try:
                summary = _create_from_export(form)
            except RoundError as error:
                problems = error.problems
            else:
                flash(_created_message(summary), "info")
                return redirect(console_url("research.rounds"))
    if form.is_submitted():
        status = 400 if form.errors or problems else 200
    overview = round_overview()
    return render_template(
        "research/rounds.html",
        rounds=overview,
        links={row.name: _validator_links(row.name) for row in overview},
        form=form,
        problems=problems,
    ), status


@bp.get("/rounds/<name>")
def round_report(name: str):
    """A round's precision report: overall, by source, category, annotator and document."""
    report = _report_or_404(name)
    chart = precision_chart(
        "chart-precision",
        "Precision per group with 95% intervals",
        [(group, title, report[group]) for group, title in GROUP_TITLES.items()],
    )
    return render_template(
        "research/round_report.html",
        report=report,
        chart=chart,
        group_titles=GROUP_TITLES,
    )


@bp.get("/rounds/<name>/report.json")
def round_report_json(name: str):
    """The report as JSON (the shape of `flask validation report --format json`)."""
    return jsonify(_report_or_404(name))


@bp.get("/rounds/<name>/report.csv")
def round_report_csv(name: str) -> Response:
    """The report as CSV, one row per group."""
    response = Response(format_csv(_report_or_404(name)), content_type="text/csv; charset=utf-8")
    response.headers["Content-Disposition"] = f'attachment; filename="{name}-report.csv"'
    return response
