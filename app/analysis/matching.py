"""Which spans of different annotators are the same error. Pure.

A span is a `Mark`: ``(paragraph, start, end, category, weight)`` in code points, `end`
exclusive, as stored; plain ``(paragraph, start, end, category)`` tuples work too. The
match rule is a callable, so that every analysis uses the study's one rule:

- `iou_match` is the attention-check rule (character intersection over union of the
  primary spans >= 0.5, same paragraph, same category; the Jaccard index of the two sets
  of character positions, Jaccard 1912). It is a local reference implementation, kept
  small so that it can be swapped for the shared rule of the checks.
- A rule must imply "same paragraph and at least one shared character" (IoU >= 0.5 does):
  only such pairs are offered to it, which keeps grouping linear in practice.

`group_matches` joins spans of *different* annotators that match into connected
components: two spans are the same error when a chain of matches links them (three
workers' spans A, B, C with A~B and B~C are one error even if A and C fall below the
threshold), the way multiple-list studies link the records of one individual across
lists before counting (Chao et al. 2001, "The applications of capture-recapture models
to epidemiological data", Statistics in Medicine 20). Each component is one error, found
by the annotators of its spans; two spans of one annotator are never linked directly.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

IOU_THRESHOLD = 0.5


class Mark(NamedTuple):
    """One error unit's primary span, its category and its weight (severity weight, or 1)."""

    paragraph: int
    start: int
    end: int
    category: Hashable
    weight: float = 1.0


SpanLike = Mark | tuple[int, int, int, Hashable]
MatchRule = Callable[[SpanLike, SpanLike], bool]


def iou(a: SpanLike, b: SpanLike) -> float:
    """Character intersection over union of two spans (0.0 in different paragraphs)."""
    if a[0] != b[0]:
        return 0.0
    shared = min(a[2], b[2]) - max(a[1], b[1])
    if shared <= 0:
        return 0.0
    return shared / (max(a[2], b[2]) - min(a[1], b[1]))


def iou_match(a: SpanLike, b: SpanLike) -> bool:
    """The attention-check rule: same paragraph, same category, IoU >= 0.5."""
    return a[3] == b[3] and iou(a, b) >= IOU_THRESHOLD


def _overlapping_pairs(
    first: Sequence[SpanLike], second: Sequence[SpanLike]
) -> list[tuple[int, int]]:
    """Index pairs (i, j) of spans in the same paragraph sharing a character."""
    by_paragraph: dict[int, list[int]] = defaultdict(list)
    for j, span in enumerate(second):
        by_paragraph[span[0]].append(j)
    pairs = []
    for i, a in enumerate(first):
        for j in by_paragraph.get(a[0], ()):
            b = second[j]
            if a[1] < b[2] and b[1] < a[2]:
                pairs.append((i, j))
    return pairs


def matched_flags(
    predicted: Sequence[SpanLike], reference: Sequence[SpanLike], match: MatchRule = iou_match
) -> tuple[list[bool], list[bool]]:
    """Which predicted spans match some reference span, and which reference spans match
    some predicted one (the counts of precision and recall)."""
    found_predicted = [False] * len(predicted)
    found_reference = [False] * len(reference)
    for i, j in _overlapping_pairs(predicted, reference):
        if match(predicted[i], reference[j]):
            found_predicted[i] = found_reference[j] = True
    return found_predicted, found_reference


@dataclass(frozen=True)
class Component:
    """One error: the (annotator, index into that annotator's spans) of its linked spans."""

    members: tuple[tuple[Hashable, int], ...]

    @property
    def annotators(self) -> frozenset:
        """The annotators who found this error (its capture history)."""
        return frozenset(annotator for annotator, _ in self.members)


class _UnionFind:
    def __init__(self, size: int) -> None:
        self.parent = list(range(size))

    def find(self, node: int) -> int:
        while self.parent[node] != node:
            self.parent[node] = self.parent[self.parent[node]]
            node = self.parent[node]
        return node

    def union(self, a: int, b: int) -> None:
        self.parent[self.find(a)] = self.find(b)


def group_matches(
    readings: Mapping[Hashable, Sequence[SpanLike]], match: MatchRule = iou_match
) -> list[Component]:
    """Connected components of matches between the spans of different annotators of one
    document, in the order of their first span; a span matching nothing is an error of
    its own."""
    nodes = [(annotator, i) for annotator, spans in readings.items() for i in range(len(spans))]
    index = {node: k for k, node in enumerate(nodes)}
    links = _UnionFind(len(nodes))
    annotators = list(readings)
    for x, first in enumerate(annotators):
        for second in annotators[x + 1 :]:
            a_spans, b_spans = readings[first], readings[second]
            for i, j in _overlapping_pairs(a_spans, b_spans):
                if match(a_spans[i], b_spans[j]):
                    links.union(index[(first, i)], index[(second, j)])
    groups: dict[int, list[tuple[Hashable, int]]] = {}
    for k, node in enumerate(nodes):
        groups.setdefault(links.find(k), []).append(node)
    return [Component(tuple(members)) for members in groups.values()]


class PairCounts(NamedTuple):
    """Matched and total weights of one annotator's spans against another's (precision:
    predicted_matched / predicted; recall: reference_matched / reference)."""

    predicted_matched: float
    predicted: float
    reference_matched: float
    reference: float


def pair_counts(
    predicted: Sequence[SpanLike],
    reference: Sequence[SpanLike],
    match: MatchRule = iou_match,
    weighted: bool = False,
) -> PairCounts:
    """Counts of precision and recall of `predicted` against `reference` (each span counts
    its `Mark.weight` when `weighted`, else 1)."""
    found_predicted, found_reference = matched_flags(predicted, reference, match)

    def weight(span: SpanLike) -> float:
        return float(span[4]) if weighted and len(span) > 4 else 1.0

    return PairCounts(
        sum(weight(s) for s, hit in zip(predicted, found_predicted, strict=True) if hit),
        sum(weight(s) for s in predicted),
        sum(weight(s) for s, hit in zip(reference, found_reference, strict=True) if hit),
        sum(weight(s) for s in reference),
    )


def f1_score(counts: PairCounts) -> float:
    """F1 (0-1) of one pair: 1.0 when neither marked anything (they agree), 0.0 when only
    one did or nothing matched."""
    if counts.predicted == 0 and counts.reference == 0:
        return 1.0
    if counts.predicted == 0 or counts.reference == 0:
        return 0.0
    precision = counts.predicted_matched / counts.predicted
    recall = counts.reference_matched / counts.reference
    if precision + recall == 0:
        return 0.0
    return 2 * precision * recall / (precision + recall)
