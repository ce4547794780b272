"""Pure adjudication rules: group annotators' spans into candidates, and merge them.

A *mark* is one live annotation of a submitted session. Marks of the same category whose
spans overlap (transitively: A overlaps B, B overlaps C) form one *candidate*; for paired
categories both spans must overlap (the error span and the paired span). Each candidate has
a stable key derived from the annotation ids it groups, so a decision made on it is found
again on reload. Severities (taxonomy `severities:`) are decided like categories: Accept
and a union Merge take the severity most marks gave (ties: the heavier), an annotator's
boundary takes theirs, and a Merge or an own span may name one. Nothing here touches
Flask or the database.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.rules.spans import Span, SpanError

DECISIONS = ("accept", "reject", "merge", "own")


@dataclass(frozen=True)
class Mark:
    """One annotator's span as the adjudicator sees it."""

    annotation_id: int
    annotator: str
    category: str | None  # None: an imported error without a label
    span: Span
    paired_span: Span | None = None
    comment: str | None = None
    unit_id: int | None = None  # the error unit (app.rules.metrics); None: the mark's own
    severity: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The page's JSON form."""
        return {
            "annotation_id": self.annotation_id,
            "annotator": self.annotator,
            "category": self.category,
            "span": self.span.to_dict(),
            "paired_span": self.paired_span.to_dict() if self.paired_span else None,
            "comment": self.comment,
            "severity": self.severity,
        }


@dataclass(frozen=True)
class Proposal:
    """A resulting gold span: what accept or merge produce."""

    category: str
    span: Span
    paired_span: Span | None = None
    severity: str | None = None  # None: the taxonomy has no severities, or no mark had one

    def to_dict(self) -> dict[str, Any]:
        """The stored and wire form."""
        return {
            "category": self.category,
            "span": self.span.to_dict(),
            "paired_span": self.paired_span.to_dict() if self.paired_span else None,
            "severity": self.severity,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Proposal:
        """Inverse of to_dict (data already validated; decisions stored before severities
        have none)."""
        paired = data.get("paired_span")
        return cls(
            category=data["category"],
            span=Span(**data["span"]),
            paired_span=Span(**paired) if paired else None,
            severity=data.get("severity"),
        )


@dataclass(frozen=True)
class Candidate:
    """Overlapping marks of one category by one or more annotators."""

    key: str
    category: str
    paragraph_id: int
    marks: tuple[Mark, ...] = field(default_factory=tuple)

    @property
    def annotators(self) -> list[str]:
        """Who marked it, sorted, each once."""
        return sorted({mark.annotator for mark in self.marks})

    @property
    def is_paired(self) -> bool:
        """True when its marks carry a second span."""
        return any(mark.paired_span is not None for mark in self.marks)

    def to_dict(self, weights: Mapping[str, float] | None = None) -> dict[str, Any]:
        """The page's JSON form, with the proposal that Accept would store (`weights`:
        severity key -> weight, to break ties between severities)."""
        return {
            "key": self.key,
            "category": self.category,
            "paragraph_id": self.paragraph_id,
            "annotators": self.annotators,
            "marks": [mark.to_dict() for mark in self.marks],
            "proposal": accepted(self, weights).to_dict(),
            "union": merged(self, "union", weights=weights).to_dict(),
        }


def _overlap(a: Span, b: Span) -> bool:
    return a.paragraph_id == b.paragraph_id and a.start < b.end and b.start < a.end


def _linked(a: Mark, b: Mark) -> bool:
    if a.category != b.category or not _overlap(a.span, b.span):
        return False
    if a.paired_span is None or b.paired_span is None:
        return a.paired_span is None and b.paired_span is None
    return _overlap(a.paired_span, b.paired_span)


def candidate_key(marks: Iterable[Mark]) -> str:
    """A stable key for a group: a hash of its annotation ids, sorted."""
    ids = ",".join(str(i) for i in sorted(mark.annotation_id for mark in marks))
    return "c-" + hashlib.sha256(ids.encode("ascii")).hexdigest()[:16]


def group_candidates(marks: Iterable[Mark]) -> list[Candidate]:
    """Connected groups of linked marks, ordered by paragraph, start, end, category."""
    items = sorted(
        marks, key=lambda m: (m.span.paragraph_id, m.span.start, m.span.end, m.annotation_id)
    )
    parent = list(range(len(items)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    # Sorted by start, a mark can only overlap marks that start before its end: a sweep
    # keeps the comparisons near-linear on real documents (few marks per paragraph).
    for i, mark in enumerate(items):
        for j in range(i + 1, len(items)):
            other = items[j]
            if (
                other.span.paragraph_id != mark.span.paragraph_id
                or other.span.start >= mark.span.end
            ):
                break
            if _linked(mark, other):
                parent[root(j)] = root(i)
    groups: dict[int, list[Mark]] = {}
    for i, mark in enumerate(items):
        groups.setdefault(root(i), []).append(mark)
    candidates = [
        Candidate(candidate_key(group), group[0].category, group[0].span.paragraph_id, tuple(group))
        for group in groups.values()
    ]
    candidates.sort(key=_candidate_order)
    return candidates


def _candidate_order(candidate: Candidate) -> tuple:
    first = candidate.marks[0].span
    return (candidate.paragraph_id, first.start, first.end, candidate.category, candidate.key)


def _most_marked(spans: Sequence[Span]) -> Span:
    """The span most annotators marked exactly; ties go to the earliest, then shortest."""
    counts = Counter((s.paragraph_id, s.start, s.end) for s in spans)
    by_place = {(s.paragraph_id, s.start, s.end): s for s in spans}
    best = min(counts, key=lambda place: (-counts[place], place[1], place[2] - place[1]))
    return by_place[best]


def _union(spans: Sequence[Span], texts: Mapping[int, str] | None) -> Span:
    """The smallest span covering all of `spans` (one paragraph), its text from `texts`."""
    paragraph_id = spans[0].paragraph_id
    start = min(s.start for s in spans)
    end = max(s.end for s in spans)
    if texts is not None and paragraph_id in texts:
        text = texts[paragraph_id][start:end]
    else:
        text = _stitched(spans, start, end)
    return Span(paragraph_id, start, end, text)


def _stitched(spans: Sequence[Span], start: int, end: int) -> str:
    """Rebuild paragraph[start:end] from overlapping span texts (they cover it whole)."""
    chars: dict[int, str] = {}
    for span in spans:
        for offset, char in enumerate(span.text):
            chars[span.start + offset] = char
    return "".join(chars.get(i, "") for i in range(start, end))


def most_given_severity(
    marks: Sequence[Mark], weights: Mapping[str, float] | None = None
) -> str | None:
    """The severity most of the marks gave (marks without one do not count); ties go to
    the heavier (by `weights`), then to the first given. None when no mark has one."""
    given = [mark.severity for mark in marks if mark.severity is not None]
    if not given:
        return None
    counts = Counter(given)
    weight = weights or {}
    return max(counts, key=lambda key: (counts[key], weight.get(key, 0.0), -given.index(key)))


def accepted(candidate: Candidate, weights: Mapping[str, float] | None = None) -> Proposal:
    """What Accept stores: the span (and paired span) most annotators marked, with the
    severity most of them gave."""
    span = _most_marked([m.span for m in candidate.marks])
    paired_spans = [m.paired_span for m in candidate.marks if m.paired_span is not None]
    paired = _most_marked(paired_spans) if paired_spans else None
    return Proposal(candidate.category, span, paired, most_given_severity(candidate.marks, weights))


def merged(
    candidate: Candidate,
    boundary: str,
    category: str | None = None,
    texts: Mapping[int, str] | None = None,
    severity: str | None = None,
    weights: Mapping[str, float] | None = None,
) -> Proposal:
    """What Merge stores: `boundary` "union" (covering every mark) or an annotator's label
    (that annotator's span), with `category` (default: the candidate's) and `severity`
    (default: the one most marks gave for a union, the annotator's own for theirs).

    Raises SpanError when the boundary names nobody who marked the candidate.
    """
    marks = candidate.marks
    if boundary == "union":
        span = _union([m.span for m in marks], texts)
        paired_spans = [m.paired_span for m in marks if m.paired_span is not None]
        paired = _union(paired_spans, texts) if paired_spans else None
        given = most_given_severity(marks, weights)
    else:
        chosen = [m for m in marks if m.annotator == boundary]
        if not chosen:
            raise SpanError(
                "unknown_boundary",
                "boundary",
                f"{boundary!r} did not mark this candidate; choose union or one of: "
                f"{', '.join(candidate.annotators)}.",
            )
        span, paired, given = chosen[0].span, chosen[0].paired_span, chosen[0].severity
    return Proposal(category or candidate.category, span, paired, severity or given)
