"""The precision report of a validation round: SQL aggregation, then pure arithmetic.

Counting is done by the database (GROUP BY); Python only turns counts into rates.
Definitions (BooookScore, appendix J): precision = (agree + partial) / judgments when
the round counts partial agreement as valid (the default), else agree / judgments;
strict_precision = agree / judgments; ci95 is the Wilson score interval of `precision`.
`by_category` counts every label of a multi-label item; items without labels are left
out of it. `by_annotator` covers items with an original annotator (our own exports);
model items and other items without one are left out of it.
`agreement`, over the items judged by two or more validators: percent_agreement is the
mean, over those items, of the share of validator pairs that gave the same verdict;
Krippendorff's alpha (Krippendorff 2011, "Computing Krippendorff's alpha-reliability")
three ways, each null when undefined (e.g. every judgment has the same value):
krippendorff_alpha_ordinal, the main figure, on the verdicts ordered agree > partial >
disagree (ordinal metric); krippendorff_alpha_valid, nominal alpha on valid vs not valid
as precision counts them (partial is valid when the round's partial_counts_as_valid);
krippendorff_alpha, nominal alpha on the three verdicts (secondary).
"""

from __future__ import annotations

import csv
import io
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import krippendorff
import numpy as np
from sqlalchemy import Select, case, distinct, func, select, true

from app.core.extensions import db
from app.models import VERDICTS, Document, ValidationItem, ValidationJudgment, ValidationRound
from app.rules.csv_safety import safe_cell

Z95 = 1.96
GROUPS = ("by_source", "by_category", "by_annotator", "by_document")


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """Wilson score interval for a proportion successes/n; None when n is 0."""
    if n <= 0:
        return None
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))


def group_stats(
    agree: int, partial: int, disagree: int, partial_counts_as_valid: bool = True
) -> dict[str, Any]:
    """Counts and rates of one group of judgments, in the report's shape."""
    n = agree + partial + disagree
    valid = agree + partial if partial_counts_as_valid else agree
    interval = wilson_interval(valid, n)
    return {
        "judgments": n,
        "agree": agree,
        "partial": partial,
        "disagree": disagree,
        "precision": valid / n if n else None,
        "strict_precision": agree / n if n else None,
        "ci95": list(interval) if interval else None,
    }


def _count_matrix(per_item: Iterable[Sequence[int]], width: int = len(VERDICTS)) -> np.ndarray:
    """Rows of per-value counts (agree, partial, disagree), keeping items with 2+ judgments."""
    rows = list(per_item)
    width = len(rows[0]) if rows else width
    matrix = np.array(rows, dtype=float).reshape(-1, width)
    return matrix[matrix.sum(axis=1) >= 2]


def percent_agreement(per_item: Iterable[Sequence[int]]) -> float | None:
    """Mean over items (2+ judgments) of the share of validator pairs that agree.

    `per_item`: one (agree, partial, disagree) count triple per item.
    """
    matrix = _count_matrix(per_item)
    if not len(matrix):
        return None
    n = matrix.sum(axis=1)
    same = (matrix * (matrix - 1)).sum(axis=1)
    return float((same / (n * (n - 1))).mean())


def krippendorff_alpha(per_item: Iterable[Sequence[int]], level: str = "nominal") -> float | None:
    """Krippendorff's alpha from per-item counts of each value, values in their order.

    `level`: "nominal" or "ordinal" (the columns are the ordered values, e.g. agree,
    partial, disagree). None when undefined (no item with two judgments, or one value only).
    """
    matrix = _count_matrix(per_item)
    if not len(matrix) or np.count_nonzero(matrix.sum(axis=0)) < 2:
        return None  # one value only: expected disagreement is 0, alpha undefined
    try:
        value = krippendorff.alpha(value_counts=matrix, level_of_measurement=level)
    except (ValueError, ZeroDivisionError):
        return None
    return None if math.isnan(value) else float(value)


def valid_counts(
    per_item: Iterable[Sequence[int]], partial_counts_as_valid: bool = True
) -> list[tuple[int, int]]:
    """(valid, not valid) counts per item from (agree, partial, disagree), as precision counts."""
    if partial_counts_as_valid:
        return [(agree + partial, disagree) for agree, partial, disagree in per_item]
    return [(agree, partial + disagree) for agree, partial, disagree in per_item]


def agreement(per_item: Sequence[Sequence[int]], partial_counts_as_valid: bool) -> dict[str, Any]:
    """The report's agreement block: percent agreement and the three alphas."""
    return {
        "items_with_multiple": len(per_item),
        "percent_agreement": percent_agreement(per_item),
        "krippendorff_alpha_ordinal": krippendorff_alpha(per_item, "ordinal"),
        "krippendorff_alpha_valid": krippendorff_alpha(
            valid_counts(per_item, partial_counts_as_valid)
        ),
        "krippendorff_alpha": krippendorff_alpha(per_item),
    }


def _counts_by(rows: Iterable[tuple[Any, str, int]]) -> dict[Any, dict[str, int]]:
    grouped: dict[Any, dict[str, int]] = defaultdict(lambda: dict.fromkeys(VERDICTS, 0))
    for key, verdict, count in rows:
        grouped[key][verdict] += count
    return grouped


def _base(round_id: int, *columns) -> Select:
    return (
        select(*columns, ValidationJudgment.verdict, func.count())
        .select_from(ValidationJudgment)
        .join(ValidationItem, ValidationItem.id == ValidationJudgment.item_id)
        .where(ValidationItem.round_id == round_id)
    )


def _each_element(column, dialect: str):
    """The elements of a JSON list column as a table (joined laterally)."""
    if dialect == "postgresql":
        return func.json_array_elements_text(column).table_valued("value")
    return func.json_each(column).table_valued("value")


def _grouped(round_id: int, key, *joins) -> dict[Any, dict[str, int]]:
    query = _base(round_id, key)
    for target, on in joins:
        query = query.join(target, on)
    query = query.group_by(key, ValidationJudgment.verdict)
    return _counts_by(db.session.execute(query))


def compute_report(round_: ValidationRound) -> dict[str, Any]:
    """The report of a round (docs/contracts.md#validation-report), `agreement` included."""
    settings = round_.settings or {}
    lenient = bool(settings.get("partial_counts_as_valid", True))
    dialect = db.engine.dialect.name
    rid = round_.id
    overall = _grouped(rid, ValidationItem.round_id).get(rid, dict.fromkeys(VERDICTS, 0))
    labels = _each_element(ValidationItem.labels, dialect)
    reasons_table = _each_element(ValidationJudgment.reasons, dialect)
    groups = {
        "by_source": _grouped(rid, ValidationItem.source),
        "by_category": _grouped(rid, labels.c.value, (labels, true())),
        "by_annotator": {
            k: v for k, v in _grouped(rid, ValidationItem.origin_annotator).items() if k is not None
        },
        "by_document": _grouped(
            rid, Document.external_id, (Document, Document.id == ValidationItem.document_id)
        ),
    }
    reason_rows = db.session.execute(
        select(reasons_table.c.value, func.count())
        .select_from(ValidationJudgment)
        .join(ValidationItem, ValidationItem.id == ValidationJudgment.item_id)
        .join(reasons_table, true())
        .where(ValidationItem.round_id == rid)
        .group_by(reasons_table.c.value)
    )
    items = db.session.scalar(
        select(func.count(ValidationItem.id)).where(ValidationItem.round_id == rid)
    )
    judged_items = db.session.scalar(
        select(func.count(distinct(ValidationJudgment.item_id)))
        .join(ValidationItem, ValidationItem.id == ValidationJudgment.item_id)
        .where(ValidationItem.round_id == rid)
    )
    per_item = _multi_judged(rid)
    stats = group_stats(overall["agree"], overall["partial"], overall["disagree"], lenient)
    report: dict[str, Any] = {
        "round": round_.name,
        "items": items or 0,
        "judged_items": judged_items or 0,
        "judgments": stats["judgments"],
        "agree": stats["agree"],
        "partial": stats["partial"],
        "disagree": stats["disagree"],
        "precision": stats["precision"],
        "strict_precision": stats["strict_precision"],
    }
    for name in GROUPS:
        report[name] = {
            str(key): group_stats(c["agree"], c["partial"], c["disagree"], lenient)
            for key, c in sorted(groups[name].items(), key=lambda kv: str(kv[0]))
        }
    report["reasons"] = dict(sorted(reason_rows, key=lambda kv: (-kv[1], kv[0])))
    report["agreement"] = agreement(per_item, lenient)
    return report


def _multi_judged(round_id: int) -> list[tuple[int, int, int]]:
    """(agree, partial, disagree) counts of each item judged two or more times."""
    counts = [
        func.sum(case((ValidationJudgment.verdict == verdict, 1), else_=0)) for verdict in VERDICTS
    ]
    query = (
        select(*counts)
        .join(ValidationItem, ValidationItem.id == ValidationJudgment.item_id)
        .where(ValidationItem.round_id == round_id)
        .group_by(ValidationJudgment.item_id)
        .having(func.count() >= 2)
    )
    return [tuple(row) for row in db.session.execute(query)]


ALPHA_LABELS = (
    ("krippendorff_alpha_ordinal", "ordinal, agree > partial > disagree (main)"),
    ("krippendorff_alpha_valid", "valid vs not valid, as precision counts"),
    ("krippendorff_alpha", "nominal, three verdicts"),
)


def _alpha(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _interval(stats: Mapping[str, Any]) -> str:
    ci = stats.get("ci95")
    return "-" if not ci else f"{100 * ci[0]:.1f}-{100 * ci[1]:.1f}%"


def report_rows(report: Mapping[str, Any]) -> list[tuple[str, str, Mapping[str, Any]]]:
    """(group, name, stats) rows: overall first, then every group, for tables and CSV."""
    overall = {
        key: report[key]
        for key in ("judgments", "agree", "partial", "disagree", "precision", "strict_precision")
    }
    n, valid = report["judgments"], None
    if n and report["precision"] is not None:
        valid = round(report["precision"] * n)
    interval = wilson_interval(valid, n) if valid is not None else None
    overall["ci95"] = list(interval) if interval else None
    rows: list[tuple[str, str, Mapping[str, Any]]] = [("overall", "all", overall)]
    for group in GROUPS:
        rows += [(group.removeprefix("by_"), name, stats) for name, stats in report[group].items()]
    return rows


def format_table(report: Mapping[str, Any]) -> str:
    """A plain-text table of the report for the terminal."""
    header = (
        "group",
        "name",
        "judged",
        "agree",
        "partial",
        "disagree",
        "prec.",
        "strict",
        "95% CI",
    )
    lines = [header]
    for group, name, s in report_rows(report):
        lines.append(
            (
                group,
                name if len(name) <= 40 else name[:39] + "…",
                str(s["judgments"]),
                str(s["agree"]),
                str(s["partial"]),
                str(s["disagree"]),
                _pct(s["precision"]),
                _pct(s["strict_precision"]),
                _interval(s),
            )
        )
    widths = [max(len(row[i]) for row in lines) for i in range(len(header))]
    text = [
        f"Round {report['round']}: {report['items']} items, {report['judged_items']} judged, "
        f"{report['judgments']} judgments"
    ]
    text += ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) for row in lines]
    if report["reasons"]:
        text.append("Reasons: " + "; ".join(f"{r}: {c}" for r, c in report["reasons"].items()))
    figures = report["agreement"]
    text.append(
        f"Agreement on {figures['items_with_multiple']} items with 2+ validators: "
        f"{_pct(figures['percent_agreement'])}; Krippendorff's alpha: "
        + ", ".join(f"{label} {_alpha(figures[key])}" for key, label in ALPHA_LABELS)
    )
    return "\n".join(text) + "\n"


def format_csv(report: Mapping[str, Any]) -> str:
    """The report as CSV rows: group, name, counts, rates and the interval bounds."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(
        (
            "group",
            "name",
            "judgments",
            "agree",
            "partial",
            "disagree",
            "precision",
            "strict_precision",
            "ci95_low",
            "ci95_high",
        )
    )
    for group, name, s in report_rows(report):
        ci = s.get("ci95") or (None, None)
        writer.writerow(
            (
                group,
                safe_cell(name),  # sources, categories, annotators, documents: imported text
                s["judgments"],
                s["agree"],
                s["partial"],
                s["disagree"],
                "" if s["precision"] is None else f"{s['precision']:.6f}",
                "" if s["strict_precision"] is None else f"{s['strict_precision']:.6f}",
                "" if ci[0] is None else f"{ci[0]:.6f}",
                "" if ci[1] is None else f"{ci[1]:.6f}",
            )
        )
    return buffer.getvalue()
