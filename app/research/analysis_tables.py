"""The analyses' reports as a terminal table and as CSV (`--format table|csv` of
judge-report, recall-estimate and plan-study; JSON is the report itself).

CSV rows are `section, key, value, ci95_low, ci95_high`; ids and category keys come from
imported files, so every text cell goes through app.rules.csv_safety.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping
from typing import Any

from app.rules.csv_safety import safe_cell

CSV_HEADER = ("section", "key", "value", "ci95_low", "ci95_high")


def _number(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _interval(ci95: list[float] | None, digits: int = 1) -> str:
    return "" if ci95 is None else f" [{ci95[0]:.{digits}f}, {ci95[1]:.{digits}f}]"


def _cell(value: Any) -> Any:
    return "" if value is None else safe_cell(value)


def _csv(rows: Iterable[tuple]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(CSV_HEADER)
    for section, key, value, ci95 in rows:
        low, high = ci95 or (None, None)
        writer.writerow((section, _cell(key), _cell(value), _cell(low), _cell(high)))
    return buffer.getvalue()


def _scores(name: str, scores: Mapping[str, Any]) -> str:
    return f"  {name:<32} " + "  ".join(
        f"{figure[0].upper()} {_number(scores[figure]['value'])}{_interval(scores[figure]['ci95'])}"
        for figure in ("precision", "recall", "f1")
    )


# --- judge report -----------------------------------------------------------------------


def judge_table(report: Mapping[str, Any]) -> str:
    """The judge report for the terminal."""
    lines = [
        f"Judge {report['judge']} against {report['humans']} human annotator(s) on "
        f"{report['documents']} document(s), matched by {report['unit']} "
        "(scores 0-100, bootstrap 95% intervals over documents):",
        _scores("overall", report["overall"]),
        "",
        "Per category:",
        *(_scores(str(key), scores) for key, scores in report["per_category"].items()),
        "",
        "Per human:",
        *(_scores(str(key), scores) for key, scores in report.get("per_human", {}).items()),
        "",
    ]
    between = report["human_human"]
    lines.append(
        "Humans against each other: F1 "
        + (
            f"{_number(between['f1']['value'])}{_interval(between['f1']['ci95'])}"
            if between
            else "- (no document has two humans)"
        )
    )
    alt = report["alt_test"]
    if alt is None:
        lines.append(f"Alternative Annotator Test: not run. {report['alt_test_reason']}")
    else:
        lines.append(
            f"Alternative Annotator Test (epsilon {alt['epsilon']}): winning rate "
            f"{alt['winning_rate']:.2f}, rho {_number(alt['rho'], 2)}: "
            + ("passed" if alt["passed"] else "not passed")
        )
        lines += [
            f"  {row['annotator_id']}: p = {row['p_value']:.4f} "
            + ("(judge wins)" if row["won"] else "")
            for row in alt["annotators"]
        ]
    return "\n".join(lines) + "\n"


def judge_csv(report: Mapping[str, Any]) -> str:
    """The judge report as CSV rows."""

    rows: list[tuple] = [
        ("judge", "judge", report["judge"], None),
        ("judge", "unit", report["unit"], None),
        ("judge", "documents", report["documents"], None),
        ("judge", "humans", report["humans"], None),
    ]
    for figure in ("precision", "recall", "f1"):
        rows.append(("overall", figure, *_value(report["overall"][figure])))
    for key, values in report["per_category"].items():
        rows += [
            (f"per_category_{figure}", key, values[figure]["value"], values[figure]["ci95"])
            for figure in ("precision", "recall", "f1")
        ]
    for key, values in report.get("per_human", {}).items():
        rows += [
            (f"per_human_{figure}", key, values[figure]["value"], values[figure]["ci95"])
            for figure in ("precision", "recall", "f1")
        ]
    if report["human_human"]:
        rows.append(("human_human", "f1", *_value(report["human_human"]["f1"])))
    alt = report["alt_test"]
    if alt is None:
        rows.append(("alt_test", "reason", report["alt_test_reason"], None))
    else:
        for key in ("epsilon", "winning_rate", "rho", "passed"):
            rows.append(("alt_test", key, alt[key], None))
        for row in alt["annotators"]:
            rows.append(("alt_test_p_value", row["annotator_id"], row["p_value"], None))
            rows.append(("alt_test_won", row["annotator_id"], row["won"], None))
    return _csv(rows)


def _value(figure: Mapping[str, Any]) -> tuple[Any, Any]:
    return figure["value"], figure["ci95"]


# --- recall estimate --------------------------------------------------------------------


def _estimate_line(name: str, row: Mapping[str, Any]) -> str:
    return (
        f"  {name:<40} found {row['found']:>4}  estimated {_number(row['estimated'])}"
        f"{_interval(row['ci95'])}  share found {_number(row['share_found'])}%"
    )


def recall_table(report: Mapping[str, Any]) -> str:
    """The recall estimate for the terminal."""
    lines = [
        f"Errors nobody found: capture-recapture, method {report['method']} "
        "(95% log-normal intervals):",
        _estimate_line("study", report["study"]),
        *(
            [
                "  No estimate: it needs documents read by two annotators or more, and an error "
                "found by two of them."
            ]
            if report["study"]["estimated"] is None
            else []
        ),
        "",
        "Per category:",
        *(_estimate_line(str(key), row) for key, row in report["per_category"].items()),
        "",
        "Per document:",
        *(_estimate_line(str(row["document_id"]), row) for row in report["documents"]),
    ]
    planted = report["planted"]
    if planted:
        lines += [
            "",
            f"Planted errors: {planted['planted']}; estimated from their captures "
            f"{_number(planted['estimated'])}{_interval(planted['ci95'])}",
        ]
    return "\n".join(lines) + "\n"


def recall_csv(report: Mapping[str, Any]) -> str:
    """The recall estimate as CSV rows."""
    rows: list[tuple] = [("method", "method", report["method"], None)]

    def estimate(section: str, key: Any, row: Mapping[str, Any]):
        yield (f"{section}_found", key, row["found"], None)
        yield (f"{section}_estimated", key, row["estimated"], row["ci95"])
        yield (f"{section}_share_found", key, row["share_found"], None)

    rows += estimate("study", "study", report["study"])
    for key, row in report["per_category"].items():
        rows += estimate("category", key, row)
    for row in report["documents"]:
        rows += estimate("document", row["document_id"], row)
    if report["planted"]:
        planted = report["planted"]
        rows.append(("planted", "planted", planted["planted"], None))
        rows.append(("planted", "estimated", planted["estimated"], planted["ci95"]))
    return _csv(rows)


# --- study planner ----------------------------------------------------------------------


def plan_table(report: Mapping[str, Any]) -> str:
    """The study plan for the terminal."""
    lines = [
        f"Plans bringing the 95% interval of {report['figure']} under +-{report['half_width']}:",
        f"{'annotators/doc':>14} {'documents':>9} {'half-width':>10} {'worker-min':>10} "
        f"{'cost':>10}",
    ]
    for plan in report["plans"]:
        note = "  (extrapolated)" if plan.get("extrapolated") else ""
        lines.append(
            f"{plan['annotators_per_document']:>14} {plan['documents']:>9} "
            f"{plan['expected_half_width']:>10.2f} {plan['worker_minutes']:>10.0f} "
            f"{_number(plan['cost'], 2):>10}{note}"
        )
    return "\n".join(lines) + "\n"


def plan_csv(report: Mapping[str, Any]) -> str:
    """The study plan as CSV: one row per number of annotators per document."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    keys = (
        "annotators_per_document",
        "documents",
        "expected_half_width",
        "worker_minutes",
        "cost",
        "extrapolated",
    )
    writer.writerow(("figure", "half_width", *keys))
    for plan in report["plans"]:
        values = ("" if plan[key] is None else plan[key] for key in keys)
        writer.writerow((report["figure"], report["half_width"], *values))
    return buffer.getvalue()
