"""Geometry for the dashboard's inline SVG charts, computed here so templates only place shapes.

The CSP forbids inline style attributes, so colours and sizes reach the SVG as
presentation attributes (fill, width, x, y), never as `style="..."`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.research.dashboard import DocumentRow, Study
    from app.taxonomy import Taxonomy

CHART_WIDTH = 640
VALUE_GUTTER = 90  # room right of the longest bar for its value
ROW_HEIGHT = 44
BAR_HEIGHT = 16
LABEL_BASELINE = 14
BAR_TOP = 20
NEUTRAL = "#9aa5b1"


@dataclass(frozen=True)
class Bar:
    """One labelled horizontal bar."""

    label: str
    value: float
    display: str
    color: str
    y: int
    width: float

    @property
    def label_y(self) -> int:
        """Baseline of the label above the bar."""
        return self.y + LABEL_BASELINE

    @property
    def bar_y(self) -> int:
        """Top of the bar."""
        return self.y + BAR_TOP

    @property
    def value_x(self) -> float:
        """Where the value text starts, just right of the bar."""
        return self.width + 6

    @property
    def value_y(self) -> int:
        """Baseline of the value text, centred on the bar."""
        return self.y + BAR_TOP + BAR_HEIGHT - 3


@dataclass(frozen=True)
class BarChart:
    """A horizontal bar chart: title and description make it accessible (role=img)."""

    chart_id: str
    title: str
    description: str
    bars: tuple[Bar, ...]
    width: int = CHART_WIDTH
    bar_height: int = BAR_HEIGHT

    @property
    def height(self) -> int:
        """Total height of the drawing."""
        return max(len(self.bars), 1) * ROW_HEIGHT

    @property
    def is_empty(self) -> bool:
        """True when no bar has a value above zero."""
        return not any(bar.value > 0 for bar in self.bars)


def bar_chart(
    chart_id: str,
    title: str,
    items: Sequence[tuple[str, float, str]],
    fmt: Callable[[float], str] = lambda value: f"{value:g}",
) -> BarChart:
    """A chart of (label, value, colour) items, bars scaled to the largest value."""
    top = max((value for _, value, _ in items), default=0.0)
    span = CHART_WIDTH - VALUE_GUTTER
    bars = tuple(
        Bar(
            label=label,
            value=value,
            display=fmt(value),
            color=color or NEUTRAL,
            y=index * ROW_HEIGHT,
            width=round(span * value / top, 1) if top > 0 else 0.0,
        )
        for index, (label, value, color) in enumerate(items)
    )
    description = "; ".join(f"{bar.label}: {bar.display}" for bar in bars) or "No data yet."
    return BarChart(chart_id, title, description, bars)


@dataclass(frozen=True)
class Segment:
    """One coloured part of a stacked bar."""

    label: str
    count: int
    color: str
    x: float
    width: float


def stacked_bar(
    items: Sequence[tuple[str, int, str]], width: float = 160
) -> tuple[tuple[Segment, ...], str]:
    """Segments of a single stacked bar of (label, count, colour) and its text description."""
    total = sum(count for _, count, _ in items)
    segments: list[Segment] = []
    x = 0.0
    for label, count, color in items:
        if count <= 0 or total == 0:
            continue
        part = round(width * count / total, 2)
        segments.append(Segment(label, count, color or NEUTRAL, round(x, 2), part))
        x += part
    description = ", ".join(f"{s.label}: {s.count}" for s in segments) or "no annotations"
    return tuple(segments), description


def percent(value: float | None, digits: int = 1) -> str:
    """0.1234 -> '12.3%'; None -> '–'."""
    return "–" if value is None else f"{value * 100:.{digits}f}%"


def duration(seconds: float | None) -> str:
    """Seconds as '1 h 05 min', '12 min' or '40 s'."""
    if seconds is None:
        return "–"
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    minutes = seconds // 60
    if minutes < 60:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60:02d} min"


def decimal(value: float | None, digits: int = 2) -> str:
    """A number with fixed digits; None -> '–'."""
    return "–" if value is None else f"{value:.{digits}f}"


def formatters() -> dict[str, Callable]:
    """Template helpers for the research pages."""
    return {
        "percent": percent,
        "duration": duration,
        "decimal": decimal,
        "stacked_bar": stacked_bar,
        "category_items": category_items,
    }


def category_items(counts: Mapping[str, float], taxonomy: Taxonomy) -> list[tuple[str, float, str]]:
    """(name, value, colour) per taxonomy category in file order, then unknown keys."""
    items = [(c.name, counts.get(c.key, 0), c.color) for c in taxonomy.categories]
    known = set(taxonomy.keys)
    items += [(key, value, NEUTRAL) for key, value in sorted(counts.items()) if key not in known]
    return items


def dashboard_charts(study: Study, taxonomy: Taxonomy) -> dict[str, BarChart]:
    """The dashboard's charts: category distribution and errors per sentence."""
    return {
        "categories": bar_chart(
            "chart-categories",
            "Annotations per error category (all sessions)",
            category_items(study.categories, taxonomy),
        ),
        "rates": bar_chart(
            "chart-rates",
            "Errors per sentence by category (submitted sessions)",
            category_items(study.errors_per_sentence, taxonomy),
            fmt=lambda value: percent(value, 2),
        ),
    }


def document_charts(document: DocumentRow, taxonomy: Taxonomy) -> BarChart:
    """One document's category distribution."""
    return bar_chart(
        "chart-document-categories",
        f"Annotations per error category in {document.external_id}",
        category_items(document.categories, taxonomy),
    )
