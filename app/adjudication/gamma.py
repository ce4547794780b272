"""Gamma agreement for spans (Mathet, Widlöcher & Métivier 2015, Computational
Linguistics 41(3), "The Unified and Holistic Method Gamma"), pure Python.

Definitions, as in the paper and in the reference implementation pygamma-agreement
(Titeux & Riad 2021), whose defaults we follow so that figures compare:

- combined dissimilarity of two units u, v:
  d(u, v) = alpha * d_pos + beta * d_cat, with
  d_pos = ((|s_u - s_v| + |e_u - e_v|) / ((e_u - s_u) + (e_v - s_v)))^2 * delta_empty and
  d_cat = delta_empty if the categories differ else 0; a unit against nothing: delta_empty.
- a unitary alignment takes at most one unit per annotator; its disorder is the mean of d
  over all pairs of annotators (a pair with a missing unit costs delta_empty).
- the best alignment partitions all units into unitary alignments with the least total
  disorder; the observed disorder is that total divided by the mean number of units per
  annotator.
- the expected disorder is the mean observed disorder of random continua drawn from the
  data's statistics (pygamma's StatisticalContinuumSampler: normal laws for units per
  annotator, gaps and lengths; categories by frequency), with a fixed seed and count.
- gamma = 1 - observed / expected (1 when the observed disorder is 0).

The best alignment is found exactly: unitary alignments costing more than their number of
units times delta_empty can never be chosen (each unit alone costs delta_empty: section
5.1.1 of the paper), which keeps the candidates local; the rest is an exact set
partition, solved per connected group of units by memoised search (pygamma uses an
integer linear program for the same minimum).

What workers send cannot make it explode (issue 26 point 4):

- identical units of one annotator (same start, end and category) count once
  (`distinct_units`): twenty copies of one span are one unit, not twenty, which made the
  exact search grow exponentially;
- a continuum of more than EXACT_UNIT_LIMIT (500) units is aligned by pygamma-agreement's
  *fast-gamma* (Titeux & Riad 2021, "pygamma-agreement: Gamma γ measure for inter/intra-
  annotator agreement in Python", JOSS 6(62) 2880; documented in its "Performance"
  section): the best alignment of the head window (the WINDOW * annotators units that end
  first, plus every unit within reach of them: d <= annotators * delta_empty) is computed
  exactly, its unitary alignments that end within the head are kept, their units removed,
  and so on until none is left (`windowed_alignment`). The observed and the chance
  continua are aligned the same way. pygamma's authors found it exact on real data and
  close on continua made to defeat it (many overlapping units of one annotator);
- each document's computation runs under ANALYSIS_TIME_LIMIT and ANALYSIS_MEMORY_LIMIT in
  a child process (app.adjudication.gamma_runner); what exceeds them is reported skipped.

Gamma's expected disorder is a Monte-Carlo mean over `samples` random continua: its
standard error (the samples' standard deviation over sqrt(samples)) carries into gamma as
`mc_se` = observed / expected^2 * se(expected) (the delta method), reported beside gamma
because the bootstrap interval over documents leaves that noise out.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from itertools import combinations, pairwise
from statistics import fmean, pstdev, stdev

SEGMENT_PRECISION = 1e-6
# Above this many (distinct) units a continuum is aligned by windows (fast-gamma).
EXACT_UNIT_LIMIT = 500
# Units per annotator in a window's head (pygamma measures one per continuum; the window
# size "doesn't seem to affect precision", its documentation says).
WINDOW = 10
EXACT, WINDOWED = "exact", "windowed"


@dataclass(frozen=True)
class Unit:
    """One annotated segment [start, end) with a category."""

    annotator: str
    start: float
    end: float
    category: str


@dataclass(frozen=True)
class Dissimilarity:
    """The combined categorical dissimilarity (pygamma's defaults: 1, 1, 1)."""

    alpha: float = 1.0
    beta: float = 1.0
    delta_empty: float = 1.0

    def __call__(self, u: Unit, v: Unit) -> float:
        """d(u, v) for two real units."""
        pos = (abs(u.start - v.start) + abs(u.end - v.end)) / (
            (u.end - u.start) + (v.end - v.start)
        )
        cat = 0.0 if u.category == v.category else 1.0
        return self.alpha * pos * pos * self.delta_empty + self.beta * cat * self.delta_empty


@dataclass(frozen=True)
class GammaResult:
    """Gamma with its parts: observed and expected disorder, samples used, the Monte-Carlo
    standard error of gamma (None with one sample), and how continua were aligned."""

    gamma: float
    observed: float
    expected: float
    samples: int
    alignments: int  # unitary alignments in the best alignment
    mc_se: float | None = None
    method: str = EXACT  # EXACT, or WINDOWED for more than EXACT_UNIT_LIMIT units


Alignment = tuple[tuple[Unit, ...], float]  # a unitary alignment's units and its disorder


def distinct_units(units: Iterable[Unit]) -> list[Unit]:
    """The units with identical ones of one annotator (annotator, start, end, category)
    counted once, in their first order."""
    return list(dict.fromkeys(units))


def _by_annotator(units: Iterable[Unit], annotators: Sequence[str] | None) -> list[list[Unit]]:
    grouped: dict[str, list[Unit]] = {name: [] for name in annotators or ()}
    for unit in units:
        grouped.setdefault(unit.annotator, []).append(unit)
    return [sorted(grouped[name], key=lambda u: (u.start, u.end)) for name in sorted(grouped)]


def best_alignment(
    units: Iterable[Unit],
    dissimilarity: Dissimilarity | None = None,
    annotators: Sequence[str] | None = None,
) -> tuple[float, int]:
    """(observed disorder, number of unitary alignments) of the best alignment."""
    units = list(units)
    chosen = optimal_alignments(units, dissimilarity, annotators)
    return _disorder(chosen, len(units), _annotator_count(units, annotators)), len(chosen)


def _annotator_count(units: Sequence[Unit], annotators: Sequence[str] | None) -> int:
    return len({u.annotator for u in units} | set(annotators or ()))


def _disorder(chosen: Sequence[Alignment], size: int, annotators: int) -> float:
    """An alignment's disorder: its unitary alignments' sum over the mean number of units
    per annotator."""
    return sum(disorder for _, disorder in chosen) / (size / annotators)


def optimal_alignments(
    units: Iterable[Unit],
    dissimilarity: Dissimilarity | None = None,
    annotators: Sequence[str] | None = None,
) -> list[Alignment]:
    """The unitary alignments of a best alignment (exact), each with its disorder."""
    d = dissimilarity or Dissimilarity()
    lanes = _by_annotator(units, annotators)
    n = len(lanes)
    if n < 2:
        raise ValueError("Gamma needs at least two annotators.")
    flat = [unit for lane in lanes for unit in lane]
    if not flat:
        raise ValueError("Gamma needs at least one unit.")
    offsets = [0]
    for lane in lanes:
        offsets.append(offsets[-1] + len(lane))
    # Bits in order of position: the partition search then always covers the leftmost
    # unit first, so the units still open form a narrow window and few states recur.
    by_position = sorted(range(len(flat)), key=lambda k: (flat[k].start, flat[k].end, k))
    bit = [0] * len(flat)
    for rank, k in enumerate(by_position):
        bit[k] = rank
    pairs = n * (n - 1) // 2
    empty = d.delta_empty
    budget = n * empty * pairs  # no kept unitary alignment has a larger sum of pair costs
    # Units of two annotators that may share a unitary alignment: a pair costing more than
    # the whole budget never can. Computed once, this keeps the search local.
    near: dict[tuple[int, int, int], dict[int, float]] = {}
    for a, b in combinations(range(n), 2):
        for i, u in enumerate(lanes[a]):
            for j, v in enumerate(lanes[b]):
                cost = d(u, v)
                if cost <= budget:
                    near.setdefault((a, i, b), {})[j] = cost
                    near.setdefault((b, j, a), {})[i] = cost
    candidates: list[tuple[int, float]] = []  # (bitmask of units, disorder)

    def extend(lane: int, chosen: list[tuple[int, int]], total: float) -> None:
        if total > budget:  # pair costs only grow: no completion can be kept
            return
        if lane == n:
            if not chosen:
                return
            disorder = total / pairs
            if disorder <= len(chosen) * empty + 1e-12:
                mask = 0
                for a, i in chosen:
                    mask |= 1 << bit[offsets[a] + i]
                candidates.append((mask, disorder))
            return
        # Pairs with an empty unit: this lane's nothing against every earlier lane, or
        # every empty earlier lane against this lane's unit.
        earlier_empty = lane - len(chosen)
        extend(lane + 1, chosen, total + lane * empty)
        if chosen:
            options = set(near.get((*chosen[0], lane), {}))
            for a, i in chosen[1:]:
                options &= set(near.get((a, i, lane), {}))
        else:
            options = set(range(len(lanes[lane])))
        for j in sorted(options):
            added = earlier_empty * empty + sum(near[(a, i, lane)][j] for a, i in chosen)
            extend(lane + 1, [*chosen, (lane, j)], total + added)

    extend(0, [], 0.0)
    at_bit = [flat[k] for k in by_position]  # the unit of each bit
    return [
        (tuple(at_bit[b] for b in range(len(flat)) if mask >> b & 1), disorder)
        for mask, disorder in _partition(len(flat), candidates)
    ]


def _partition(size: int, candidates: list[tuple[int, float]]) -> list[tuple[int, float]]:
    """The candidates (mask, disorder) covering each unit exactly once with the least total
    disorder."""
    by_unit: list[list[tuple[int, float]]] = [[] for _ in range(size)]
    for mask, disorder in candidates:
        by_unit[(mask & -mask).bit_length() - 1].append((mask, disorder))

    @cache
    def solve(remaining: int) -> tuple[float, int, float]:
        """(least total disorder, the mask that covers the lowest unit, its disorder)."""
        if remaining == 0:
            return 0.0, 0, 0.0
        lowest = (remaining & -remaining).bit_length() - 1
        best = (float("inf"), 0, 0.0)
        for mask, disorder in by_unit[lowest]:
            if mask & remaining == mask:
                rest = solve(remaining & ~mask)[0]
                if disorder + rest < best[0]:
                    best = (disorder + rest, mask, disorder)
        return best

    # Units in different connected groups never share a candidate: solve each on its own.
    parent = list(range(size))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for mask, _ in candidates:
        members = [i for i in range(size) if mask >> i & 1]
        for other in members[1:]:
            parent[root(other)] = root(members[0])
    groups: dict[int, int] = {}
    for i in range(size):
        groups[root(i)] = groups.get(root(i), 0) | 1 << i
    chosen = []
    for group in groups.values():
        remaining = group
        while remaining:
            _, mask, disorder = solve(remaining)
            chosen.append((mask, disorder))
            remaining &= ~mask
    solve.cache_clear()
    return chosen


def windowed_alignment(
    units: Iterable[Unit],
    dissimilarity: Dissimilarity | None = None,
    annotators: Sequence[str] | None = None,
    window: int = WINDOW,
) -> tuple[float, int]:
    """(disorder, number of unitary alignments) of pygamma-agreement's fast alignment
    (module docstring): windows of `window` units per annotator aligned exactly."""
    d = dissimilarity or Dissimilarity()
    units = list(units)
    n = _annotator_count(units, annotators)
    names = sorted({u.annotator for u in units} | set(annotators or ()))
    reachable = n * d.delta_empty
    # A unit starting g after the head's end has d >= alpha * (1 + g / longest)^2 with
    # every head unit: beyond this gap it cannot be reached.
    longest = max((u.end - u.start for u in units), default=0.0)
    gap = (math.sqrt(reachable / (d.alpha * d.delta_empty)) - 1) * longest if d.alpha else math.inf
    remaining = sorted(units, key=lambda u: (u.end, u.start))
    chosen: list[Alignment] = []
    while remaining:
        limit = remaining[min(len(remaining), window * n) - 1].end
        head = [u for u in remaining if u.end <= limit]
        extension = []
        for unit in remaining[len(head) :]:
            if unit.end - longest > limit + gap:
                break  # ends sorted: no later unit starts close enough either
            if any(d(unit, h) <= reachable for h in head):
                extension.append(unit)
        found = optimal_alignments(head + extension, d, names)
        kept = [a for a in found if max(u.end for u in a[0]) <= limit]
        if not kept:  # every alignment reaches past the head: take the first to end
            kept = [min(found, key=lambda a: max(u.end for u in a[0]))]
        chosen += kept
        taken = {u for alignment, _ in kept for u in alignment}
        remaining = [u for u in remaining if u not in taken]
    return _disorder(chosen, len(units), n), len(chosen)


@dataclass(frozen=True)
class _Statistics:
    annotators: tuple[str, ...]
    units_mean: float
    units_std: float
    gap_mean: float
    gap_std: float
    length_mean: float
    length_std: float
    categories: tuple[str, ...]
    weights: tuple[float, ...]


def _statistics(lanes: list[list[Unit]], names: list[str]) -> _Statistics:
    gaps = [0.0]
    for lane in lanes:
        gaps.extend(b.start - a.end for a, b in pairwise(lane))
    gaps.extend(lane[0].start for lane in lanes if lane and lane[0].start > 0)
    lengths = [u.end - u.start for lane in lanes for u in lane]
    counts: dict[str, int] = {}
    for lane in lanes:
        for unit in lane:
            counts[unit.category] = counts.get(unit.category, 0) + 1
    categories = tuple(sorted(counts))
    total = sum(counts.values())
    sizes = [len(lane) for lane in lanes]
    return _Statistics(
        tuple(names),
        fmean(sizes),
        pstdev(sizes),
        fmean(gaps),
        pstdev(gaps),
        fmean(lengths),
        pstdev(lengths),
        categories,
        tuple(counts[c] / total for c in categories),
    )


def _sample(stats: _Statistics, rng: random.Random) -> list[Unit]:
    """One random continuum with the data's statistics (pygamma's statistical sampler)."""
    units: list[Unit] = []
    for name in stats.annotators:
        last = 0.0
        count = abs(int(rng.gauss(stats.units_mean, stats.units_std)))
        if not units:
            count = max(1, count)
        for _ in range(count):
            start = last + rng.gauss(stats.gap_mean, stats.gap_std)
            end = start + abs(rng.gauss(stats.length_mean, stats.length_std))
            while end - start < SEGMENT_PRECISION:
                end = start + abs(rng.gauss(stats.length_mean, stats.length_std))
            category = rng.choices(stats.categories, weights=stats.weights)[0]
            units.append(Unit(name, start, end, category))
            last = end
    return units


def gamma(
    units: Iterable[Unit],
    dissimilarity: Dissimilarity | None = None,
    samples: int = 30,
    seed: int = 0,
    annotators: Iterable[str] = (),
) -> GammaResult:
    """Gamma of one continuum (all annotators' units, identical ones of one annotator
    counted once), chance from `samples` random continua drawn with `seed`. `annotators`
    adds those who marked nothing (they count: each of the others' units is then unmatched
    in their lane). More than EXACT_UNIT_LIMIT units: aligned by windows (fast-gamma)."""
    d = dissimilarity or Dissimilarity()
    units = distinct_units(units)
    names = sorted({u.annotator for u in units} | set(annotators))
    method = WINDOWED if len(units) > EXACT_UNIT_LIMIT else EXACT
    align = windowed_alignment if method == WINDOWED else best_alignment
    observed, count = align(units, d, names)
    lanes = _by_annotator(units, names)
    stats = _statistics(lanes, names)
    rng = random.Random(seed)
    chance = [align(_sample(stats, rng), d, names)[0] for _ in range(samples)]
    expected = fmean(chance)
    value = 1.0 if observed == 0 else 1.0 - observed / expected
    return GammaResult(value, observed, expected, samples, count, _mc_se(observed, chance), method)


def _mc_se(observed: float, chance: Sequence[float]) -> float | None:
    """Gamma's Monte-Carlo standard error (delta method, module docstring)."""
    if len(chance) < 2:
        return None
    if observed == 0:
        return 0.0  # gamma is 1 whatever the samples
    expected = fmean(chance)
    return observed / expected**2 * stdev(chance) / math.sqrt(len(chance))


def pooled_mc_se(errors: Sequence[float | None]) -> float | None:
    """The Monte-Carlo standard error of a mean of documents' gammas (their samples are
    independent): sqrt(sum of squares) / count; None when a document has none."""
    if not errors or any(error is None for error in errors):
        return None
    return math.sqrt(sum(error * error for error in errors if error is not None)) / len(errors)


def linked_pair_f1(first: Iterable[tuple], second: Iterable[tuple]) -> float | None:
    """F1 of linked span pairs between two annotators: a pair (span, paired span, category)
    matches when both spans overlap the other's and the categories are equal. Spans are
    (paragraph_id, start, end). None when neither has a pair."""
    a, b = list(first), list(second)
    if not a and not b:
        return None

    def overlap(x: tuple, y: tuple) -> bool:
        return x[0] == y[0] and x[1] < y[2] and y[1] < x[2]

    def matches(x: tuple, y: tuple) -> bool:
        return x[2] == y[2] and overlap(x[0], y[0]) and overlap(x[1], y[1])

    found_a = sum(any(matches(x, y) for y in b) for x in a)
    found_b = sum(any(matches(y, x) for x in a) for y in b)
    precision = found_a / len(a) if a else 0.0
    recall = found_b / len(b) if b else 0.0
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


def mean_linked_pair_f1(
    linked: Mapping[str, Sequence[tuple]], annotators: Iterable[str]
) -> float | None:
    """One document's linked-pair F1: the mean of `linked_pair_f1` over pairs of
    annotators (pairs where neither has a linked pair are left out; None if all are)."""
    names = sorted(set(annotators))
    scores = [
        linked_pair_f1(linked.get(a, ()), linked.get(b, ())) for a, b in combinations(names, 2)
    ]
    kept = [score for score in scores if score is not None]
    return fmean(kept) if kept else None
