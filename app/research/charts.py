"""Geometry for the dashboard's inline SVG charts, computed here so templates only place shapes.

The CSP forbids inline style attributes, so colours and sizes reach the SVG as
presentation attributes (fill, width, x, y), never as `style="..."`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from app.research.dashboard import DashboardView, DocumentRow
from app.research.pacing import PacingSummary
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
class Chart:
    """What every chart's SVG needs to be accessible (role=img): an id, a title, a text."""

    chart_id: str
    title: str
    description: str = "No data yet."


@dataclass(frozen=True)
class BarChart(Chart):
    """A horizontal bar chart, one labelled bar per row."""

    bars: tuple[Bar, ...] = ()
    width: int = CHART_WIDTH
    bar_height: int = BAR_HEIGHT

    @property
    def height(self) -> int:
        """Total height of the drawing."""
        return max(len(self.bars), 1) * ROW_HEIGHT

    @property
    def track_width(self) -> int:
        """Width of the grey track behind each bar (the full scale)."""
        return self.width - VALUE_GUTTER

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
    return BarChart(chart_id, title, description, bars=bars)


MIX_WIDTH = 160
MIX_HEIGHT = 12


@dataclass(frozen=True)
class Segment:
    """One coloured part of a stacked bar."""

    label: str
    count: int
    color: str
    x: float
    width: float


@dataclass(frozen=True)
class Mix:
    """A single stacked bar: its segments, their text description, and its size."""

    segments: tuple[Segment, ...]
    description: str
    width: float = MIX_WIDTH
    height: int = MIX_HEIGHT


def stacked_bar(items: Sequence[tuple[str, int, str]], width: float = MIX_WIDTH) -> Mix:
    """A single stacked bar of (label, count, colour) items, with its text description."""
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
    return Mix(tuple(segments), description, width)


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


def ago(moment: datetime | None) -> str:
    """How long ago a moment was: '3 min ago'; None -> 'never'."""
    if moment is None:
        return "never"
    return f"{duration(max(0.0, (datetime.now(UTC) - moment).total_seconds()))} ago"


def decimal(value: float | None, digits: int = 2) -> str:
    """A number with fixed digits; None -> '–'."""
    return "–" if value is None else f"{value:.{digits}f}"


def pacing_charts(summary: PacingSummary) -> dict[str, BarChart]:
    """Fatigue: seconds and errors per paragraph by position (app/research/pacing.py)."""
    positions = summary.positions
    seconds = [(f.label, f.seconds, "") for f in positions]
    errors = [(f.label, f.errors, "") for f in positions]
    return {
        "seconds": bar_chart(
            "pace-seconds", "Seconds visible per paragraph, by position", seconds, duration
        ),
        "errors": bar_chart(
            "pace-errors",
            "Errors found per paragraph, by position",
            errors,
            lambda value: f"{value:.2f}",
        ),
    }


def formatters() -> dict[str, Callable]:
    """Template helpers for the research pages."""
    return {
        "percent": percent,
        "duration": duration,
        "decimal": decimal,
        "ago": ago,
        "stacked_bar": stacked_bar,
        "category_items": category_items,
    }


def category_items(counts: Mapping[str, float], taxonomy: Taxonomy) -> list[tuple[str, float, str]]:
    """(name, value, colour) per taxonomy category in file order, then unknown keys."""
    items = [(c.name, counts.get(c.key, 0), c.color) for c in taxonomy.categories]
    known = set(taxonomy.keys)
    items += [(key, value, NEUTRAL) for key, value in sorted(counts.items()) if key not in known]
    return items


def dashboard_charts(study: DashboardView, taxonomy: Taxonomy) -> dict[str, BarChart]:
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


# The validation report's precision chart: one drawing, one group (by source, category,
# annotator, document) under another, each group's caption just above its own bars.
PRECISION_WIDTH = 560
PRECISION_LABEL_WIDTH = 200
PRECISION_ROW = 26
PRECISION_AXIS = 22  # room for the axis labels at the top
CAPTION_HEIGHT = 24  # from a group's top to its first bar; the caption's baseline is in it
CAPTION_GAP = 7  # from the caption's baseline to its first bar
GROUP_GAP = 16  # between one group's last bar and the next group's caption
WHISKER_INSET = 3  # the interval's end marks stop this far inside the bar's height
GRID_OVERHANG = 3  # grid lines reach this far beyond a group's bars
TICK_BASELINE = 11  # baseline of the axis labels
LABEL_CHARS = 28  # a row label longer than this is shortened in the middle (short_labels)


@dataclass(frozen=True)
class PrecisionRow:
    """One bar: precision with its 95% interval, in SVG coordinates."""

    label: str
    y: float
    width: float
    ci_low: float
    ci_high: float
    display: str
    name: str = ""  # the whole name, when the label is shortened (the label's tooltip)

    @property
    def text_y(self) -> float:
        """Baseline of the row's label and value."""
        return self.y + BAR_HEIGHT - 4

    @property
    def mid_y(self) -> float:
        """Vertical centre of the bar (for the interval whisker)."""
        return self.y + BAR_HEIGHT / 2

    @property
    def whisker_top(self) -> float:
        """Top of the interval's end marks."""
        return self.y + WHISKER_INSET

    @property
    def whisker_bottom(self) -> float:
        """Bottom of the interval's end marks."""
        return self.y + BAR_HEIGHT - WHISKER_INSET


@dataclass(frozen=True)
class PrecisionGroup:
    """One group of bars with its caption above them."""

    key: str
    caption: str
    caption_y: float
    top: float  # top of the first bar
    bottom: float  # bottom of the last bar
    rows: tuple[PrecisionRow, ...]

    @property
    def grid_top(self) -> float:
        """Top of the group's grid lines, just above its first bar."""
        return self.top - GRID_OVERHANG

    @property
    def grid_bottom(self) -> float:
        """Bottom of the group's grid lines, just below its last bar."""
        return self.bottom + GRID_OVERHANG


@dataclass(frozen=True)
class PrecisionChart(Chart):
    """Precision per group, scaled 0-100%, every group in one drawing."""

    groups: tuple[PrecisionGroup, ...] = ()
    plot_width: float = 0.0
    height: float = PRECISION_AXIS
    ticks: tuple[tuple[float, str], ...] = ()
    width: int = PRECISION_WIDTH
    left: int = PRECISION_LABEL_WIDTH
    bar_height: int = BAR_HEIGHT
    tick_y: int = TICK_BASELINE

    @property
    def value_x(self) -> float:
        """Where each row's value text starts, right of the full-scale track."""
        return self.plot_width + 6


def short_label(name: str, limit: int, tail: int) -> str:
    """`name` in at most `limit` characters: its start, "…", and its last `tail`."""
    if len(name) <= limit:
        return name
    return f"{name[: limit - 1 - tail]}…{name[-tail:]}"


def short_labels(names: Sequence[str], limit: int = LABEL_CHARS) -> list[str]:
    """Labels for chart rows: a name longer than `limit` loses its middle, not its end,
    since ids that share a prefix differ at the end ("prolific:60aa…9c2f1e"); while two
    labels still read the same, more of the end is kept, and as a last resort the whole
    names are shown."""
    distinct = len(set(names))
    for tail in range((limit - 1) // 2, limit - 1):
        labels = [short_label(name, limit, tail) for name in names]
        if len(set(labels)) == distinct:
            return labels
    return list(names)


def precision_chart(
    chart_id: str, title: str, groups: Sequence[tuple[str, str, Mapping[str, Mapping]]]
) -> PrecisionChart:
    """Bars of precision with Wilson-interval whiskers for (key, caption, {name: stats}) groups
    of a validation report (app.validation.report), each caption above its own bars."""
    plot = PRECISION_WIDTH - PRECISION_LABEL_WIDTH - 70
    built: list[PrecisionGroup] = []
    described: list[str] = []
    cursor = float(PRECISION_AXIS)
    for key, caption, stats_by_name in groups:
        if not stats_by_name:
            continue
        top = cursor + CAPTION_HEIGHT
        rows = []
        parts = []
        labels = short_labels(list(stats_by_name))
        for index, (name, stats) in enumerate(stats_by_name.items()):
            precision = stats["precision"] or 0.0
            low, high = stats["ci95"] or (precision, precision)
            display = f"{100 * precision:.0f}% (n={stats['judgments']})"
            rows.append(
                PrecisionRow(
                    label=labels[index],
                    y=top + index * PRECISION_ROW,
                    width=round(plot * precision, 1),
                    ci_low=round(plot * low, 1),
                    ci_high=round(plot * high, 1),
                    display=display,
                    name=name,
                )
            )
            parts.append(f"{name} {display}, 95% interval {percent(low)}–{percent(high)}")
        bottom = rows[-1].y + BAR_HEIGHT
        built.append(PrecisionGroup(key, caption, top - CAPTION_GAP, top, bottom, tuple(rows)))
        described.append(f"{caption}: " + "; ".join(parts))
        cursor = bottom + GROUP_GAP
    ticks = tuple((round(plot * t / 4, 1), f"{25 * t}%") for t in range(5))
    description = ". ".join(described) or "No judgments yet."
    height = cursor - GROUP_GAP + 4 if built else PRECISION_AXIS
    return PrecisionChart(
        chart_id,
        title,
        description,
        groups=tuple(built),
        plot_width=plot,
        height=height,
        ticks=ticks,
    )
