"""The study rehearsal's bookkeeping (bench/study_rehearsal.py), kept free of servers and
here, beside the other helpers the benchmarks share with the tests, so that
tests/unit/test_rehearsal_bookkeeping.py can check it (tests never import bench/): the
arrival schedule, the workers' planned outcomes, latencies inside and outside the fault
windows, and the reconciliation of acknowledged saves with the database."""

from __future__ import annotations

import random
import threading
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

OUTCOMES = ("completed", "failed_training", "no_consent")
# The worker's request kinds, in the order they are printed; each has the p99 target.
KINDS = (
    "open",
    "step page",
    "step post",
    "task page",
    "suggestions",
    "save",
    "remove",
    "move",
    "heartbeat",
    "submit",
)


def percentile(values: list[float], p: float) -> float:
    """The p-th percentile (nearest rank) of values; NaN when empty (as bench.save_load's)."""
    data = sorted(values)
    return data[min(len(data) - 1, int(p / 100 * len(data)))] if data else float("nan")


def poisson_arrivals(count: int, seconds: float, rng: random.Random) -> list[float]:
    """Arrival times (seconds from the start) of `count` workers arriving as a Poisson
    process over `seconds`: a homogeneous Poisson process conditioned on `count` arrivals
    in [0, seconds) places them as the order statistics of `count` uniform draws (so the
    gaps are exponential with mean seconds / count, and some arrivals bunch up)."""
    return sorted(rng.uniform(0, seconds) for _ in range(count))


def plan_outcomes(count: int, shares: dict[str, float], rng: random.Random) -> list[str]:
    """Each worker's planned outcome: round(count x share) workers for each outcome of
    `shares` (declining the consent, failing the training), the rest `completed`,
    shuffled. Exact counts, so the expected completion codes are exact too."""
    planned: list[str] = []
    for outcome, share in shares.items():
        planned += [outcome] * round(count * share)
    if len(planned) > count:
        raise ValueError(f"shares {shares} add up to more than every worker")
    planned += ["completed"] * (count - len(planned))
    rng.shuffle(planned)
    return planned


@dataclass
class Request:
    """One HTTP request as a client saw it: when it started (seconds from the run's
    start), how long it took, its kind and status (0: no answer), an error if any."""

    kind: str
    started: float
    seconds: float
    status: int
    error: str = ""


@dataclass
class Ledger:
    """Every request of the run, and the fault windows (start, end) in run seconds. A
    request is *inside* a window when it started in it or was still waiting when it
    opened (the fault's own victims)."""

    requests: list[Request] = field(default_factory=list)
    windows: list[tuple[float, float]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, request: Request) -> None:
        with self.lock:
            self.requests.append(request)

    def open_window(self, start: float) -> int:
        """Start a fault window (its end is unknown until the service is back)."""
        with self.lock:
            self.windows.append((start, float("inf")))
            return len(self.windows) - 1

    def close_window(self, index: int, end: float) -> None:
        with self.lock:
            self.windows[index] = (self.windows[index][0], end)

    def inside(self, request: Request) -> bool:
        finished = request.started + request.seconds
        return any(start <= finished and request.started <= end for start, end in self.windows)

    def figures(self) -> dict[str, dict[str, tuple[int, float, float]]]:
        """{kind: {"outside" | "inside": (requests, p50 ms, p99 ms)}}, answered requests
        only (an error's latency is in errors_by_kind instead)."""
        split: dict[str, dict[str, list[float]]] = {}
        with self.lock:
            requests = list(self.requests)
        for request in requests:
            if request.error:
                continue
            where = "inside" if self.inside(request) else "outside"
            split.setdefault(request.kind, {"outside": [], "inside": []})[where].append(
                request.seconds
            )
        return {
            kind: {
                where: (len(values), percentile(values, 50) * 1000, percentile(values, 99) * 1000)
                for where, values in parts.items()
            }
            for kind, parts in split.items()
        }

    def errors_by_kind(self) -> Counter[tuple[str, str, str]]:
        """(request kind, "inside" | "outside", error) -> count."""
        with self.lock:
            requests = list(self.requests)
        return Counter(
            (r.kind, "inside" if self.inside(r) else "outside", r.error)
            for r in requests
            if r.error
        )

    def since(self, moment: float) -> list[Request]:
        with self.lock:
            return [r for r in self.requests if r.started >= moment]


@dataclass(frozen=True)
class Reconciliation:
    """Acknowledged saves against the stored rows: `lost` acknowledged and not stored,
    `duplicated` stored more than once (rows beyond the first of a session and client
    id), `unacknowledged` stored but never acknowledged (a client gave up on it),
    `removal_wrong` stored with the wrong removed state (acknowledged removes not
    soft-deleted, or the other way round)."""

    acknowledged: int
    lost: int
    duplicated: int
    unacknowledged: int
    removal_wrong: int


def reconcile(
    acknowledged: dict[str, set[str]],
    removed: dict[str, set[str]],
    stored: Iterable[tuple[str, str, bool]],
) -> Reconciliation:
    """`acknowledged` and `removed`: per session token, the client ids the server
    acknowledged saving and removing; `stored`: (token, client id, deleted) rows read
    from the database at the end."""
    rows: Counter[tuple[str, str]] = Counter()
    deleted: dict[tuple[str, str], bool] = {}
    for token, client_id, is_deleted in stored:
        rows[token, client_id] += 1
        deleted[token, client_id] = is_deleted
    expected = {(token, cid) for token, ids in acknowledged.items() for cid in ids}
    lost = sum(1 for key in expected if key not in rows)
    duplicated = sum(n - 1 for n in rows.values())
    unacknowledged = sum(1 for key in rows if key not in expected)
    removal_wrong = sum(
        1
        for key in expected
        if key in rows and deleted[key] != (key[1] in removed.get(key[0], set()))
    )
    return Reconciliation(len(expected), lost, duplicated, unacknowledged, removal_wrong)


def quota_report(counts: dict[str, int], quota: int) -> tuple[list[str], Counter[int]]:
    """The documents holding more than `quota` places (should be none), and how many
    documents hold each count: {places: documents}."""
    over = sorted(document for document, n in counts.items() if n > quota)
    return over, Counter(counts.values())
