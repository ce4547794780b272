"""Reading pace from paragraph timings: rushing and fatigue. Pure: plain rows in, figures out.

Definitions (docs/crowd-studies.md, "Time per paragraph"; docs/figures.md, "Reading time
and rushing"):
- A session's *reading speed* is the words of the paragraphs it has timings for divided by
  the minutes those paragraphs were visible (app/annotate/timings.py). Only submitted
  sessions are judged: an unfinished one has not read everything yet.
- A session is *rushing* when its reading speed is above the taxonomy's
  `study.min_words_per_minute`: a worker who really read each paragraph could not have
  gone faster. No setting, no flag.
- *Fatigue*: the mean seconds visible and the mean annotations (errors found) per
  paragraph, by the paragraph's position in its document; positions are grouped into at
  most MAX_GROUPS equal ranges in long documents. A worker's fatigue compares the first
  and the second half of each document they read.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

MAX_GROUPS = 10


@dataclass(frozen=True)
class ParagraphTime:
    """One export row (app/crowd/paragraph_times.py), as the figures need it."""

    session_id: str
    document_id: str
    paragraph_id: int
    seconds: float | None  # seconds visible; None when the paragraph has no timing row
    annotations: int
    words: int


def words_per_minute(words: int, seconds: float) -> float | None:
    """Words per minute; None without any time to divide by."""
    return words * 60.0 / seconds if seconds > 0 else None


def is_rushing(speed: float | None, limit: float | None) -> bool:
    """The rushing rule: faster than `limit` words per minute (no limit: never)."""
    return limit is not None and speed is not None and speed > limit


@dataclass
class Pace:
    """Reading figures of one session or one worker."""

    words: int = 0
    seconds: float = 0.0
    paragraphs: int = 0
    # [first half, second half] of the documents read: (paragraphs, seconds, annotations)
    halves: list[list[float]] = field(default_factory=lambda: [[0, 0.0, 0], [0, 0.0, 0]])

    @property
    def speed(self) -> float | None:
        """Words per minute."""
        return words_per_minute(self.words, self.seconds)

    def add(self, row: ParagraphTime, half: int) -> None:
        """Count one timed paragraph."""
        self.words += row.words
        self.seconds += row.seconds or 0.0
        self.paragraphs += 1
        part = self.halves[half]
        part[0] += 1
        part[1] += row.seconds or 0.0
        part[2] += row.annotations

    def half_means(self, half: int) -> tuple[float | None, float | None]:
        """(mean seconds, mean annotations) per paragraph in the first (0) or second (1) half."""
        count, seconds, annotations = self.halves[half]
        return (seconds / count, annotations / count) if count else (None, None)


@dataclass(frozen=True)
class PositionFigure:
    """Mean seconds and errors per paragraph at one range of positions (1-based label)."""

    label: str
    seconds: float
    errors: float
    paragraphs: int


def position_groups(paragraph_count: int) -> int:
    """How many positions share a group so that a document gives at most MAX_GROUPS."""
    return max(1, math.ceil(paragraph_count / MAX_GROUPS))


def by_position(rows: Iterable[ParagraphTime], longest: int) -> list[PositionFigure]:
    """Fatigue figures over timed paragraphs, grouped by position (see module docstring)."""
    size = position_groups(longest)
    sums: dict[int, list[float]] = defaultdict(lambda: [0, 0.0, 0])
    for row in rows:
        if row.seconds is None:
            continue
        group = sums[row.paragraph_id // size]
        group[0] += 1
        group[1] += row.seconds
        group[2] += row.annotations
    figures = []
    for group, (count, seconds, errors) in sorted(sums.items()):
        first, last = group * size + 1, min((group + 1) * size, longest)
        label = f"Paragraph {first}" if first >= last else f"Paragraphs {first}–{last}"
        figures.append(PositionFigure(label, seconds / count, errors / count, int(count)))
    return figures


@dataclass
class PacingSummary:
    """What the dashboard shows: paces per session and worker, and the fatigue figures."""

    sessions: dict[str, Pace]
    workers: dict[str, Pace]
    positions: list[PositionFigure]
    limit: float | None
    labels: Mapping[str, str] = field(default_factory=dict)  # session id -> worker

    def rushing(self) -> list[tuple[str, str, float]]:
        """(session id, worker, words per minute) of every rushing session, fastest first."""
        found = [
            (sid, self.labels.get(sid, "?"), pace.speed)
            for sid, pace in self.sessions.items()
            if is_rushing(pace.speed, self.limit)
        ]
        return sorted(found, key=lambda item: -(item[2] or 0))


def summarise(
    rows: Iterable[ParagraphTime],
    workers: Mapping[str, str],
    paragraph_counts: Mapping[str, int],
    limit: float | None,
) -> PacingSummary:
    """Paces of submitted sessions' rows; `workers`: session id -> worker label,
    `paragraph_counts`: document id -> paragraphs."""
    timed = [row for row in rows if row.seconds is not None]
    sessions: dict[str, Pace] = defaultdict(Pace)
    by_worker: dict[str, Pace] = defaultdict(Pace)
    for row in timed:
        count = paragraph_counts.get(row.document_id, row.paragraph_id + 1)
        half = 0 if row.paragraph_id < count / 2 else 1
        sessions[row.session_id].add(row, half)
        by_worker[workers.get(row.session_id, "?")].add(row, half)
    longest = max(paragraph_counts.values(), default=1)
    positions = by_position(timed, longest)
    return PacingSummary(dict(sessions), dict(by_worker), positions, limit, dict(workers))
