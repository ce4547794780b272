"""Validation rounds in the researcher console: the list, each round's report (HTML, JSON, CSV).

Bar geometry is computed here (`precision_chart`) so that the template only places SVG
shapes with presentation attributes: the CSP forbids style attributes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from flask import Response, abort, jsonify, render_template
from flask_login import login_required

from app.research import bp
from app.validation.report import compute_report, format_csv
from app.validation.rounds import find_round, round_overview

CHART_WIDTH = 560
LABEL_WIDTH = 200
ROW_HEIGHT = 26
BAR_HEIGHT = 16
TOP = 22  # room for the axis labels
GROUP_TITLES = {
    "by_source": "By source",
    "by_category": "By category",
    "by_annotator": "By original annotator",
    "by_document": "By document",
}


@dataclass(frozen=True)
class ChartRow:
    """One bar: precision with its 95% interval, in SVG coordinates."""

    label: str
    y: float
    width: float
    ci_low: float
    ci_high: float
    display: str

    @property
    def text_y(self) -> float:
        """Baseline of the row's label and value."""
        return self.y + BAR_HEIGHT - 4

    @property
    def mid_y(self) -> float:
        """Vertical centre of the bar (for the interval whisker)."""
        return self.y + BAR_HEIGHT / 2


@dataclass(frozen=True)
class Chart:
    """A horizontal bar chart of precision per group, scaled 0-100%."""

    chart_id: str
    title: str
    rows: list[ChartRow]
    plot_width: float
    height: float
    ticks: list[tuple[float, str]]

    @property
    def width(self) -> int:
        """Total width of the SVG."""
        return CHART_WIDTH

    @property
    def left(self) -> int:
        """Where bars start (right of the labels)."""
        return LABEL_WIDTH


def precision_chart(chart_id: str, title: str, groups: Mapping[str, Mapping[str, Any]]) -> Chart:
    """Bars of precision (with Wilson interval whiskers) for each group of a report."""
    plot = CHART_WIDTH - LABEL_WIDTH - 70
    rows = []
    for index, (name, stats) in enumerate(groups.items()):
        precision = stats["precision"] or 0.0
        low, high = stats["ci95"] or (precision, precision)
        label = name if len(name) <= 28 else name[:27] + "…"
        rows.append(
            ChartRow(
                label=label,
                y=TOP + index * ROW_HEIGHT,
                width=round(plot * precision, 1),
                ci_low=round(plot * low, 1),
                ci_high=round(plot * high, 1),
                display=f"{100 * precision:.0f}% (n={stats['judgments']})",
            )
        )
    ticks = [(round(plot * t / 4, 1), f"{25 * t}%") for t in range(5)]
    return Chart(chart_id, title, rows, plot, TOP + len(rows) * ROW_HEIGHT + 4, ticks)


def _report_or_404(name: str) -> dict[str, Any]:
    round_ = find_round(name)
    if round_ is None:
        abort(404, description=f"There is no validation round called {name!r}.")
    return compute_report(round_)


@bp.get("/rounds")
@login_required
def rounds():
    """Every validation round with its counts and links to its report."""
    return render_template("research/rounds.html", rounds=round_overview())


@bp.get("/rounds/<name>")
@login_required
def round_report(name: str):
    """A round's precision report: overall, by source, category, annotator and document."""
    report = _report_or_404(name)
    charts = [
        precision_chart(f"chart-{group}", title, report[group])
        for group, title in GROUP_TITLES.items()
        if report[group]
    ]
    return render_template(
        "research/round_report.html",
        report=report,
        charts=charts,
        group_titles=GROUP_TITLES,
    )


@bp.get("/rounds/<name>/report.json")
@login_required
def round_report_json(name: str):
    """The report as JSON (the shape of `flask validation report --format json`)."""
    return jsonify(_report_or_404(name))


@bp.get("/rounds/<name>/report.csv")
@login_required
def round_report_csv(name: str) -> Response:
    """The report as CSV, one row per group."""
    response = Response(format_csv(_report_or_404(name)), content_type="text/csv; charset=utf-8")
    response.headers["Content-Disposition"] = f'attachment; filename="{name}-report.csv"'
    return response
