"""Save/load benchmark: concurrent simulated annotators through the real JSON API, served by
gunicorn on PostgreSQL, against a bare-Flask baseline under the same load.

    python -m bench.save_load [--annotators 50] [--adds 40] [--rounds 5] [--paced 200]
                              [--paced-seconds 20] [--capacity 200,400,600,800,1000,1200]
                              [--capacity-runs 3] [--direct]

Each simulated annotator does what the annotator page does in a browser: opens its link
(the redirect, then the page, whose bootstrap carries the session state), adds --adds
annotations while moving through the paragraphs, removes a few, goes back one paragraph
and submits. The baseline serves
one bare view that inserts the same rows with psycopg2 (bench/baseline_app.py), with the
same gunicorn settings, and gets the same number of requests from the same clients.
Both servers sit behind nginx with the project's own configuration (config/nginx, the
docker-compose shape: one upstream connection per request), as every deployed shape runs
them; --direct sends the clients' keep-alive connections straight to gunicorn instead,
where each round's 50 connections split between the two workers once for the whole round
(one worker's clients then wait about twice as long as the other's: the spread of the
clients' median latencies, printed per round, shows it).
Each round also says how many of its slowest 1% began in its first OPENING_SECONDS, when
every client opens at once (the app's 50 opens and 50 pages), and the p99 of the requests
begun after that.
Afterwards the database is checked: every acknowledged save stored exactly once.
Then a paced run: --paced annotators each saving about once every 2 s; and the paced
capacity: the same pace for each population of --capacity in turn (--capacity-runs runs
of --paced-seconds each) until one's median p99 reaches 100 ms, reporting the largest
population that stayed under it. Paced figures leave out each client's first save (the
one that opens its connection): they are the steady state.
"""

from __future__ import annotations

import argparse
import html
import http.client
import itertools
import json
import os
import random
import re
import statistics
import sys
import tempfile
import threading
import time
import uuid
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

import psycopg2

from bench.baseline_app import create_table
from bench.common import libpq_url, scratch_database
from tests.support.nginx import access_log, compose_config, start_nginx, stop_nginx
from tests.support.servers import free_port, start_gunicorn, stop, worker_pids
from tests.support.worker_api import body, quote

ROOT = Path(__file__).resolve().parent.parent
CATEGORIES = ("new-person", "missing-info", "abrupt-transition", "ungrammatical")
PARAGRAPHS = 12


@dataclass
class Stats:
    """Latencies (seconds) and errors collected by all clients of one run."""

    latencies: list[float] = field(default_factory=list)
    starts: list[float] = field(default_factory=list)  # when each began (perf_counter)
    errors: list[str] = field(default_factory=list)
    by_kind: dict[str, list[float]] = field(default_factory=dict)
    by_client: dict[int, list[float]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(
        self,
        seconds: float,
        error: str | None = None,
        kind: str = "",
        client: int = 0,
        started: float | None = None,
    ) -> None:
        with self.lock:
            self.latencies.append(seconds)
            self.starts.append(time.perf_counter() - seconds if started is None else started)
            self.by_kind.setdefault(kind, []).append(seconds)
            self.by_client.setdefault(client, []).append(seconds)
            if error:
                self.errors.append(error)

    def percentile(self, p: float) -> float:
        return percentile(self.latencies, p)


def percentile(values: list[float], p: float) -> float:
    """The p-th percentile (nearest rank) of values; NaN when empty."""
    data = sorted(values)
    return data[min(len(data) - 1, int(p / 100 * len(data)))] if data else float("nan")


_CLIENT_KEYS = itertools.count()


class Client:
    """One keep-alive HTTP connection that records every request's latency."""

    def __init__(self, port: int, stats: Stats) -> None:
        self.port = port
        self.stats = stats
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.headers: dict[str, str] = {}
        self.key = next(_CLIENT_KEYS)  # one per connection's client, for the spread

    def close(self) -> None:
        """Close the connection (each run's client closes its own at the end)."""
        self.conn.close()

    def request(self, method: str, path: str, body=None, expect=(200, 201, 204)):
        payload = json.dumps(body) if body is not None else None
        headers = dict(self.headers)
        if payload is not None:
            headers["Content-Type"] = "application/json"
        started = time.perf_counter()
        error = None
        try:
            self.conn.request(method, path, body=payload, headers=headers)
            response = self.conn.getresponse()
            data = response.read()
            status = response.status
            if status not in expect:
                error = f"{method} {path} -> {status} {data[:200]!r}"
        except (OSError, http.client.HTTPException) as exc:
            self.conn.close()
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            status, data, response, error = 0, b"", None, f"{method} {path}: {exc}"
        self.stats.record(
            time.perf_counter() - started, error, request_kind(method, path), self.key, started
        )
        return status, data, response


def request_kind(method: str, path: str) -> str:
    """The kind of request, for the latency breakdown."""
    if path.startswith("/annotate/"):
        return "open"
    if path.startswith("/s/"):
        return "page"
    if method == "DELETE":
        return "remove"
    last = path.rstrip("/").rsplit("/", 1)[-1]
    kinds = {"annotations": "save", "save": "save", "position": "move", "submit": "submit"}
    return kinds.get(last, "state" if method == "GET" else last)


@dataclass
class Outcome:
    """What one simulated annotator had acknowledged by the server."""

    token: str = ""
    added: set[str] = field(default_factory=set)
    removed: set[str] = field(default_factory=set)
    submitted: bool = False


def page_state(page: bytes) -> dict | None:
    """The session state the annotator page carries for its JavaScript (data-bootstrap):
    the browser starts from it and never asks GET /api/sessions/<token> on load."""
    match = re.search(rb"data-bootstrap='([^']*)'", page)
    return json.loads(html.unescape(match.group(1).decode())) if match else None


def annotator_run(port: int, stats: Stats, name: str, adds: int) -> Outcome:
    """Open a session, add, move, remove, go back, submit: the worker's real sequence."""
    with closing(Client(port, stats)) as client:
        return _annotator_sequence(client, name, adds)


def _annotator_sequence(client: Client, name: str, adds: int) -> Outcome:
    outcome = Outcome()
    status, _, response = client.request(
        "GET", f"/annotate/bench-doc?annotator={name}", expect=(302,)
    )
    if status != 302:
        return outcome
    location = response.getheader("Location")
    token = location.rstrip("/").rsplit("/", 1)[-1]
    outcome.token = token
    status, page, _ = client.request("GET", f"/s/{token}")
    state = page_state(page)
    if state is None:
        client.stats.record(0, f"no session state on /s/{token}")
        return outcome
    client.headers["X-CSRFToken"] = state["csrf_token"]
    texts = {p["paragraph_id"]: p["text"] for p in state["document"]["paragraphs"]}
    furthest = 0
    rng = random.Random(name)
    base = f"/api/sessions/{token}"
    made: set[tuple[int, int, int, str]] = set()
    for k in range(adds):
        target = k * PARAGRAPHS // adds
        while furthest < target:
            status, data, _ = client.request(
                "PUT", f"{base}/position", {"paragraph_id": furthest + 1}
            )
            if status != 200:
                return outcome
            furthest += 1
            for paragraph in json.loads(data)["paragraphs"]:
                texts[paragraph["paragraph_id"]] = paragraph["text"]
        text = texts[target]
        start = rng.randrange(0, len(text) - 12)
        end = start + rng.randint(4, 10)
        category = rng.choice(CATEGORIES)
        # Never the same annotation twice (the API refuses a duplicate under a new id).
        while (
            not text[start:end].strip()
            or text[start].isspace()
            or text[end - 1].isspace()
            or (target, start, end, category) in made
        ):
            start = rng.randrange(0, len(text) - 12)
            end = start + rng.randint(4, 10)
        made.add((target, start, end, category))
        annotation_id = str(uuid.uuid4())
        data = body(id=annotation_id, category=category, span=quote(target, text, start, end))
        status, _, _ = client.request("POST", f"{base}/annotations", data)
        if status in (200, 201):
            outcome.added.add(annotation_id)
    for annotation_id in sorted(outcome.added)[:3]:
        status, _, _ = client.request("DELETE", f"{base}/annotations/{annotation_id}")
        if status == 204:
            outcome.removed.add(annotation_id)
    while furthest < PARAGRAPHS - 1:
        client.request("PUT", f"{base}/position", {"paragraph_id": furthest + 1})
        furthest += 1
    client.request("PUT", f"{base}/position", {"paragraph_id": furthest - 1})
    status, _, _ = client.request("POST", f"{base}/submit", {})
    outcome.submitted = status == 200
    return outcome


def baseline_run(port: int, stats: Stats, index: int, requests: int) -> None:
    """The same number of requests, each a bare insert."""
    with closing(Client(port, stats)) as client:
        for k in range(requests):
            body = {
                "id": str(uuid.uuid4()),
                "category": "ungrammatical",
                "span": {"paragraph_id": k % PARAGRAPHS, "start": 0, "end": 5, "text": "Hello"},
                "comment": None,
            }
            client.request("POST", "/save", body)


def run_threads(target, count: int, *args) -> tuple[list, float]:
    """Run target(i, *args) in `count` threads; return results and wall time."""
    results: list = [None] * count

    def work(i: int) -> None:
        results[i] = target(i, *args)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(count)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results, time.perf_counter() - started


def seed_document(database_url: str) -> None:
    """One document of PARAGRAPHS paragraphs, imported through the real importer."""
    from app import create_app
    from app.core.extensions import db
    from app.imports.document_formats import DocumentInput
    from app.imports.document_store import import_documents

    rng = random.Random(7)
    words = "the keeper Zoë saw a ship 🚢 near harbour lights storm letter".split()
    paragraphs = tuple(
        " ".join(rng.choice(words) for _ in range(60)).capitalize() + "." for _ in range(PARAGRAPHS)
    )
    app = create_app({"APP_ENV": "testing", "SQLALCHEMY_DATABASE_URI": database_url})
    with app.app_context():
        import_documents([DocumentInput("bench-doc", "Bench", paragraphs)])
        db.engine.dispose()


def verify(database_url: str, outcomes: list[Outcome]) -> tuple[int, int, int]:
    """(lost, duplicated, wrongly live) against what the server acknowledged."""
    conn = psycopg2.connect(libpq_url(database_url))
    lost = duplicated = wrong = 0
    with conn, conn.cursor() as cur:
        cur.execute(
            "SELECT s.token, a.client_id, count(*), bool_and(a.deleted_at IS NOT NULL)"
            " FROM annotations a JOIN annotation_sessions s ON s.id = a.session_id"
            " GROUP BY s.token, a.client_id"
        )
        stored = {(token, cid): (n, deleted) for token, cid, n, deleted in cur.fetchall()}
    conn.close()
    for outcome in outcomes:
        for cid in outcome.added:
            row = stored.get((outcome.token, cid))
            if row is None:
                lost += 1
                continue
            duplicated += row[0] - 1
            wrong += int(row[1] != (cid in outcome.removed))
    return lost, duplicated, wrong


_USED_SPANS: dict[str, set[tuple[int, int]]] = {}


def _new_span(rng: random.Random, text: str, used: set[tuple[int, int]]) -> tuple[int, int]:
    """A span of 4-12 characters, not blank at either end, that this session has not saved
    (start and end): the capacity runs save a few hundred times on one paragraph."""
    while True:
        if len(used) >= len(text) * 2:
            used.clear()  # a run too long for the paragraph: later saves may be 422s
        start = rng.randrange(0, len(text) - 12)
        end = start + rng.randint(4, 12)
        if not text[start].isspace() and not text[end - 1].isspace() and (start, end) not in used:
            used.add((start, end))
            return start, end


def paced_run(index: int, port: int, stats: Stats, seconds: float, tokens: list) -> None:
    """Save about once every 2 s (jittered) for `seconds`. Each client's first save, which
    opens its connection (every client within the first 2 s: a storm of new connections
    that real arrivals spread over minutes), is not counted: the figures are the steady
    state."""
    with closing(Client(port, Stats())) as client:
        token, csrf, text = tokens[index]
        client.headers["X-CSRFToken"] = csrf
        # The spans this session saved, in this run and the earlier ones on it (the capacity
        # runs reuse the sessions): a duplicate under a new id would be refused (422).
        used = _USED_SPANS.setdefault(token, set())
        rng = random.Random(f"{index}-{len(used)}")
        deadline = time.monotonic() + seconds
        time.sleep(rng.uniform(0, 2))
        while time.monotonic() < deadline:
            start, end = _new_span(rng, text, used)
            data = body(span=quote(0, text, start, end))
            client.request("POST", f"/api/sessions/{token}/annotations", data)
            client.stats = stats  # counted from the second save on
            time.sleep(rng.uniform(1.5, 2.5))


def open_sessions(port: int, count: int, first: int = 0, openers: int = 10) -> list:
    """Open paced sessions first .. first + count - 1 (`openers` at a time); return
    (token, csrf, first paragraph) for each."""
    stats = Stats()

    def open_some(worker: int) -> list:
        client = Client(port, stats)
        out = []
        for i in range(first + worker, first + count, openers):
            _, _, response = client.request(
                "GET", f"/annotate/bench-doc?annotator=paced-{i}", expect=(302,)
            )
            token = response.getheader("Location").rsplit("/", 1)[-1]
            _, page, _ = client.request("GET", f"/s/{token}")
            state = page_state(page)
            out.append((token, state["csrf_token"], state["document"]["paragraphs"][0]["text"]))
        client.conn.close()
        return out

    opened, _ = run_threads(open_some, openers)
    return [session for some in opened for session in some]


PACED_P99_TARGET_MS = 100
CAPACITY_TARGET = 600  # annotators on 2 cores (issue 15)


def paced_capacity(port: int, populations: list[int], seconds: float, runs: int) -> int:
    """Run the paced load for each population in turn, `runs` times each, until one's
    median p99 reaches the target (or a run has errors); the largest population whose
    median p99 stayed under it (0 if none did). The median, as for the rounds: one run's
    p99 on the shared machine swings with its neighbours' load."""
    tokens: list = []
    largest = 0
    for population in populations:
        if population > len(tokens):
            tokens += open_sessions(port, population - len(tokens), first=10_000 + len(tokens))
        p99s, errors = [], 0
        for run in range(runs):
            stats = Stats()
            _, wall = run_threads(paced_run, population, port, stats, seconds, tokens)
            figures = describe(f"paced {population} #{run + 1}", stats, wall)
            p99s.append(figures["p99"])
            errors += figures["errors"]
        median = statistics.median(p99s)
        print(f"{'':15}paced {population}: median p99 {median:.1f} ms")
        if median >= PACED_P99_TARGET_MS or errors:
            break
        largest = population
    return largest


WARM_UP_CLIENTS = 50  # the measured concurrency
WARM_UP_ADDS = 10


def warm_up(app_port: int, base_port: int) -> None:
    """Before timing, run the measured sequences themselves on both servers (the app's
    whole annotator sequence, the baseline's inserts, the same number of requests), so
    that every worker has imported, compiled its templates and statements, and opened
    its database connections (whose first queries load PostgreSQL's catalog caches)."""
    requests = requests_per_annotator(WARM_UP_ADDS)
    run_threads(
        lambda i: annotator_run(app_port, Stats(), f"warm-{i}", WARM_UP_ADDS), WARM_UP_CLIENTS
    )
    run_threads(lambda i: baseline_run(base_port, Stats(), i, requests), WARM_UP_CLIENTS)


# A round's opening: its clients all start at once (the app's: 50 opens and 50 pages, each
# a few times a save's CPU, in the same instant).
OPENING_SECONDS = 0.5


def opening(stats: Stats) -> tuple[int, int, float]:
    """(how many of the slowest 1% began in the run's first OPENING_SECONDS, how many the
    slowest 1% are, p99 in ms of the requests begun after that opening)."""
    first = min(stats.starts)
    threshold = stats.percentile(99)
    slowest = [s for s, x in zip(stats.starts, stats.latencies, strict=True) if x >= threshold]
    later = [
        x
        for s, x in zip(stats.starts, stats.latencies, strict=True)
        if s - first >= OPENING_SECONDS
    ]
    early = sum(1 for s in slowest if s - first < OPENING_SECONDS)
    return early, len(slowest), percentile(later, 99) * 1000


def describe(name: str, stats: Stats, seconds: float, cpu: dict | None = None) -> dict:
    """Print one run's line and return its figures."""
    figures = {
        **(cpu or {}),
        "requests": len(stats.latencies),
        "throughput": len(stats.latencies) / seconds,
        "p50": stats.percentile(50) * 1000,
        "p95": stats.percentile(95) * 1000,
        "p99": stats.percentile(99) * 1000,
        "errors": len(stats.errors),
    }
    print(
        f"{name:<14} {figures['requests']:>7} req  {figures['throughput']:>8.1f} req/s  "
        f"p50 {figures['p50']:6.1f} ms  p95 {figures['p95']:6.1f} ms  "
        f"p99 {figures['p99']:6.1f} ms  errors {figures['errors']}"
    )
    if cpu:
        print(
            f"{'':15}CPU per request: server {cpu['server_cpu']:.2f} ms, "
            f"PostgreSQL {cpu['database_cpu']:.2f} ms, load generator {cpu['client_cpu']:.2f} ms;"
            f" cores busy {cpu['cores_busy']:.2f} of {os.cpu_count()}"
        )
    if len(stats.by_kind) > 1:
        print(
            "               "
            + "; ".join(
                f"{kind} p50 {statistics.median(v) * 1000:.0f} p99 {percentile(v, 99) * 1000:.0f}"
                for kind, v in sorted(stats.by_kind.items())
            )
        )
    if len(stats.by_client) > 1:
        medians = sorted(statistics.median(v) * 1000 for v in stats.by_client.values())
        print(
            f"{'':15}clients' median latency: lowest {medians[0]:.0f} ms, "
            f"median {statistics.median(medians):.0f} ms, highest {medians[-1]:.0f} ms"
        )
    if cpu and stats.latencies:  # a round's load (the paced runs have no opening)
        early, slowest, figures["p99_after_opening"] = opening(stats)
        print(
            f"{'':15}slowest 1%: {early} of {slowest} began in the first {OPENING_SECONDS} s;"
            f" p99 of the requests begun after it {figures['p99_after_opening']:.1f} ms"
        )
    for error in stats.errors[:5]:
        print(f"           {error}")
    return figures


@dataclass
class Round:
    """One round: the app's load, then the baseline's (or the other way round)."""

    app: dict
    baseline: dict
    outcomes: list[Outcome]
    latencies: tuple[list[float], list[float]] = ([], [])  # app's, baseline's (seconds)

    @property
    def throughput_ratio(self) -> float:
        return self.app["throughput"] / self.baseline["throughput"]

    @property
    def p99_ratio(self) -> float:
        return self.app["p99"] / self.baseline["p99"]

    @property
    def p99_after_opening_ratio(self) -> float:
        return self.app["p99_after_opening"] / self.baseline["p99_after_opening"]


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time of these processes so far (Linux /proc; 0 elsewhere)."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 0.0


def postgres_pids() -> list[int]:
    """The PostgreSQL server processes (all of them: the loads run one at a time)."""
    pids = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if (entry / "comm").read_text().strip() == "postgres":
                pids.append(int(entry.name))
        except OSError:
            continue
    return pids


@dataclass
class CpuMeter:
    """CPU per request spent by one server (gunicorn, and nginx in front of it) and by
    PostgreSQL during a load."""

    master_pids: list[int]
    figures: dict[str, float] = field(default_factory=dict)

    def measure(self, load) -> float:
        """Run load() -> (seconds, requests); keep ms of CPU per request; return seconds."""
        server = [pid for master in self.master_pids for pid in (master, *worker_pids(master))]
        database = postgres_pids()
        before = cpu_seconds(server), cpu_seconds(database), time.process_time()
        seconds, requests = load()
        after = cpu_seconds(server), cpu_seconds(database), time.process_time()
        per_request = 1000 / max(requests, 1)
        self.figures = {
            "server_cpu": (after[0] - before[0]) * per_request,
            "database_cpu": (after[1] - before[1]) * per_request,
            "client_cpu": (after[2] - before[2]) * per_request,
            # CPU of all three over wall time: 2.0 is both cores busy.
            "cores_busy": sum(a - b for a, b in zip(after, before, strict=True)) / seconds,
        }
        return seconds


def load_round(number: int, app: CpuMeter, base: CpuMeter, ports: tuple[int, int], args) -> Round:
    """The app's annotators, and the baseline with as many requests per client; the
    order alternates between rounds so that drift on a shared machine hits both alike."""
    app_stats, base_stats = Stats(), Stats()
    outcomes: list[Outcome] = []
    app_port, base_port = ports

    def run_app() -> float:
        def load():
            results, seconds = run_threads(
                lambda i: annotator_run(app_port, app_stats, f"r{number}-{i}", args.adds),
                args.annotators,
            )
            outcomes.extend(results)
            return seconds, len(app_stats.latencies)

        return app.measure(load)

    def run_baseline(per_client: int) -> float:
        def load():
            _, seconds = run_threads(
                lambda i: baseline_run(base_port, base_stats, i, per_client), args.annotators
            )
            return seconds, len(base_stats.latencies)

        return base.measure(load)

    # The baseline sends what the app's clients sent: a known count per annotator.
    per_client = requests_per_annotator(args.adds)
    if number % 2 == 0:
        app_seconds = run_app()
        base_seconds = run_baseline(per_client)
    else:
        base_seconds = run_baseline(per_client)
        app_seconds = run_app()
    label = f"round {number + 1}"
    return Round(
        describe(f"{label} app", app_stats, app_seconds, app.figures),
        describe(f"{label} base", base_stats, base_seconds, base.figures),
        outcomes,
        (app_stats.latencies, base_stats.latencies),
    )


def requests_per_annotator(adds: int) -> int:
    """Requests one simulated annotator sends (see annotator_run)."""
    opening = 2  # /annotate redirect, page (with the session state)
    moves = PARAGRAPHS - 1 + 1  # read on to the last paragraph, then one back
    return opening + moves + adds + min(3, adds) + 1  # + removes + submit


def main(argv: list[str] | None = None) -> int:
    """Run both loads in alternating rounds, verify the database, print the median
    ratios; exit 1 if a target is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--annotators", type=int, default=50)
    parser.add_argument("--adds", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=5, help="alternating app/baseline rounds")
    parser.add_argument("--paced", type=int, default=200)
    parser.add_argument("--paced-seconds", type=float, default=20)
    parser.add_argument(
        "--capacity",
        type=lambda text: [int(n) for n in text.split(",")],
        default=[200, 400, 600, 800, 1000, 1200],
        help="paced populations to try in turn, comma-separated (stops at the first whose "
        f"median p99 reaches {PACED_P99_TARGET_MS} ms)",
    )
    parser.add_argument(
        "--capacity-runs", type=int, default=3, help="runs of each paced population (median)"
    )
    parser.add_argument(
        "--direct",
        action="store_true",
        help="clients connect straight to gunicorn (no nginx in front: not a deployed shape)",
    )
    args = parser.parse_args(argv)
    print(
        f"save_load: {args.annotators} annotators x {args.adds} adds, {args.rounds} rounds; "
        f"gunicorn per gunicorn.conf.py (WEB_CONCURRENCY={os.environ.get('WEB_CONCURRENCY', '2')}"
        f"), {'no proxy' if args.direct else 'nginx in front (config/nginx)'}, PostgreSQL; "
        f"{os.cpu_count()} cores"
    )
    with scratch_database("falte_bench_save") as url, tempfile.TemporaryDirectory() as folder:
        seed_document(url)
        create_table(libpq_url(url))
        gunicorn_ports = free_port(), free_port()
        servers = [
            # Every simulated worker opens from 127.0.0.1: far above one address's limit.
            # Behind nginx, the client's address is the last X-Forwarded-For entry.
            start_gunicorn(
                "app:create_app()",
                url,
                gunicorn_ports[0],
                FLASK_OPEN_RATE_LIMIT="100000 per minute",
                TRUSTED_PROXIES="0" if args.direct else "1",
            ),
            start_gunicorn("bench.baseline_app:app", url, gunicorn_ports[1]),
        ]
        fronts: list = []
        try:
            ports = gunicorn_ports
            if not args.direct:
                ports = free_port(), free_port()
                for name, port, upstream in zip(
                    ("app", "baseline"), ports, gunicorn_ports, strict=True
                ):
                    prefix = Path(folder) / name
                    config = compose_config(prefix, port, [f"127.0.0.1:{upstream}"])
                    fronts.append(start_nginx(prefix, config, port))
            app_port = ports[0]
            warm_up(*ports)
            meters = tuple(
                CpuMeter([server.pid] + ([fronts[k].pid] if fronts else []))
                for k, server in enumerate(servers)
            )
            rounds = [load_round(n, *meters, ports, args) for n in range(args.rounds)]
            outcomes = [o for r in rounds for o in r.outcomes]
            lost, duplicated, wrong = verify(url, outcomes)
            paced_stats = Stats()
            tokens = open_sessions(app_port, args.paced)
            _, paced_seconds = run_threads(
                paced_run, args.paced, app_port, paced_stats, args.paced_seconds, tokens
            )
            capacity = paced_capacity(
                app_port, args.capacity, args.paced_seconds, args.capacity_runs
            )
        finally:
            for name, front in zip(("app", "baseline"), fronts, strict=False):
                logged = len(access_log(front).splitlines())
                print(f"nginx in front of the {name} logged {logged} requests")
                stop_nginx(front)
            for server in servers:
                stop(server)
    paced_fig = describe("paced", paced_stats, paced_seconds)
    submitted = sum(o.submitted for o in outcomes)
    acknowledged = sum(len(o.added) for o in outcomes)
    print(
        f"acknowledged saves {acknowledged}, lost {lost}, duplicated {duplicated}, "
        f"removal state wrong {wrong}, sessions submitted {submitted}/{len(outcomes)}"
    )
    throughput_ratio = statistics.median(r.throughput_ratio for r in rounds)
    p99_ratio = statistics.median(r.p99_ratio for r in rounds)
    errors = sum(r.app["errors"] for r in rounds)
    print(
        "per round: throughput ratio "
        + ", ".join(f"{r.throughput_ratio:.2f}" for r in rounds)
        + "; p99 ratio "
        + ", ".join(f"{r.p99_ratio:.2f}x" for r in rounds)
    )
    pooled = [percentile([x for r in rounds for x in r.latencies[k]], 99) * 1000 for k in (0, 1)]
    print(
        f"p99 of all rounds' requests together: app {pooled[0]:.1f} ms, baseline "
        f"{pooled[1]:.1f} ms ({pooled[0] / pooled[1]:.2f}x; for information: the target is "
        "judged on the median of the rounds' ratios)"
    )
    print(
        f"p99 ratio of the requests begun after each round's first {OPENING_SECONDS} s: "
        + ", ".join(f"{r.p99_after_opening_ratio:.2f}x" for r in rounds)
        + f" (median {statistics.median(r.p99_after_opening_ratio for r in rounds):.2f}x; "
        "for information: the app's rounds open with 50 opens and 50 pages at once)"
    )
    app_cpu = statistics.median(r.app["server_cpu"] + r.app["database_cpu"] for r in rounds)
    base_cpu = statistics.median(
        r.baseline["server_cpu"] + r.baseline["database_cpu"] for r in rounds
    )
    print(
        f"CPU per request (server + PostgreSQL, median): app {app_cpu:.2f} ms, "
        f"baseline {base_cpu:.2f} ms ({app_cpu / base_cpu:.1f}x)"
    )
    print(
        f"median throughput ratio app/baseline {throughput_ratio:.2f} (target >= 0.50); "
        f"median p99 ratio {p99_ratio:.2f}x (target <= 2.00); "
        f"paced p99 {paced_fig['p99']:.1f} ms (target < {PACED_P99_TARGET_MS} ms); "
        f"median paced save {paced_fig['p50']:.1f} ms"
    )
    print(
        f"paced capacity: {capacity} annotators saving every ~2 s with p99 under "
        f"{PACED_P99_TARGET_MS} ms (target >= {CAPACITY_TARGET}; tried {args.capacity})"
    )
    met = (
        throughput_ratio >= 0.5
        and p99_ratio <= 2
        and errors == 0
        and lost == 0
        and duplicated == 0
        and wrong == 0
        and paced_fig["p99"] < PACED_P99_TARGET_MS
        and capacity >= min(CAPACITY_TARGET, max(args.capacity))
    )
    print("targets met" if met else "TARGETS NOT MET")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
