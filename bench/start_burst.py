"""Start-burst benchmark: a study's link published at once, GET /start served by gunicorn on
PostgreSQL, against a bare-Flask baseline under the same load.

    python -m bench.start_burst [--arrivals 800] [--seconds 10] [--in-flight 100]
                                [--documents 100] [--quota 3] [--rounds 3]

Each round sends --arrivals GET /start requests at Poisson-distributed times over
--seconds (at most --in-flight at once; an arrival that finds them all busy waits for one
and is counted late). Every arrival is a new Prolific worker: its own PROLIFIC_PID and
SESSION_ID (the study's STUDY_ID, as Prolific sends it), its own connection and its own
X-Forwarded-For address (the app runs with TRUSTED_PROXIES=1, as behind nginx, and an
open-rate limit of OPEN_RATE_LIMIT="100000 per minute", so that the burst measures
assignment and not the limiter). There are --documents documents of --quota places: the
first documents x quota arrivals get a document (302 to their page), the others "No tasks
left" (200). The baseline (bench/baseline_app.py) serves GET /start as one INSERT and a
redirect, with the same gunicorn settings, and gets the same arrival times. Rounds
alternate app and baseline; the study is emptied between rounds.

After every app round the database is checked: no document has more sessions than the
quota, and every 302 is a session of its own. Latency is measured from sending the
request (connect included) to the end of the answer. Targets: p99 < 200 ms, 0 documents
over quota, 0 errors. The figures to compare across runs are the ratios to the baseline:
this machine is shared, so the load average is printed too.
"""

from __future__ import annotations

import argparse
import http.client
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import psycopg2

from bench.baseline_app import create_table
from bench.common import libpq_url, scratch_database
from bench.save_load import CpuMeter, percentile
from tests.support.assignment import taxonomy_with
from tests.support.servers import free_port, start_gunicorn, stop

STUDY_ID = "bench-study"
WARM_UP = 40
P99_TARGET_MS = 200


@dataclass
class Burst:
    """What one round's arrivals got: latencies (seconds) per status, errors, late starts."""

    latencies: dict[int, list[float]] = field(default_factory=dict)
    locations: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    late: int = 0
    seconds: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, status: int, seconds: float, location: str | None, error: str | None):
        with self.lock:
            self.latencies.setdefault(status, []).append(seconds)
            if location:
                self.locations.append(location)
            if error:
                self.errors.append(error)

    @property
    def all(self) -> list[float]:
        return [value for values in self.latencies.values() for value in values]

    def figures(self) -> dict[str, float]:
        values = self.all
        return {
            "requests": len(values),
            "throughput": len(values) / self.seconds if self.seconds else 0.0,
            "p50": percentile(values, 50) * 1000,
            "p99": percentile(values, 99) * 1000,
        }


def arrival_times(count: int, seconds: float, seed: int) -> list[float]:
    """Poisson arrivals: exponential gaps at count / seconds per second, from 0."""
    rng = random.Random(seed)
    rate = count / seconds
    times, moment = [], 0.0
    for _ in range(count):
        times.append(moment)
        moment += rng.expovariate(rate)
    return times


def worker_path(index: int, tag: str) -> str:
    """The study link as Prolific fills it in for one worker."""
    return (
        f"/start?PROLIFIC_PID={tag}{index:06d}&STUDY_ID={STUDY_ID}"
        f"&SESSION_ID={tag}-session-{index:06d}"
    )


def forwarded_for(index: int) -> str:
    """A distinct client address per arrival (10.0.0.0/8)."""
    return f"10.{index // 65536 % 256}.{index // 256 % 256}.{index % 256}"


def arrive(port: int, burst: Burst, index: int, tag: str) -> None:
    """One worker's GET /start on a connection of its own."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    started = time.perf_counter()
    status, location, error = 0, None, None
    try:
        conn.request(
            "GET", worker_path(index, tag), headers={"X-Forwarded-For": forwarded_for(index)}
        )
        response = conn.getresponse()
        body = response.read()
        status, location = response.status, response.getheader("Location")
        if status not in (200, 302):
            error = f"#{index} -> {status} {body[:200]!r}"
    except (OSError, http.client.HTTPException) as exc:
        error = f"#{index}: {exc!r}"
    finally:
        conn.close()
    burst.record(status, time.perf_counter() - started, location, error)


def run_burst(port: int, times: list[float], in_flight: int, tag: str) -> Burst:
    """Send one arrival at each of `times` (seconds from now), at most `in_flight` at once."""
    burst = Burst()
    slots = threading.BoundedSemaphore(in_flight)

    def one(index: int) -> None:
        try:
            arrive(port, burst, index, tag)
        finally:
            slots.release()

    with ThreadPoolExecutor(max_workers=in_flight) as pool:
        began = time.perf_counter()
        for index, moment in enumerate(times):
            delay = began + moment - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            if not slots.acquire(blocking=False):
                burst.late += 1
                slots.acquire()
            pool.submit(one, index)
    burst.seconds = time.perf_counter() - began
    return burst


def seed_documents(database_url: str, count: int) -> None:
    """`count` documents of 6 paragraphs, imported through the real importer."""
    from app import create_app
    from app.core.extensions import db
    from app.imports.document_formats import DocumentInput
    from app.imports.document_store import import_documents

    rng = random.Random(11)
    words = "the keeper saw a ship near the harbour lights in the storm with a letter".split()

    def paragraph() -> str:
        return " ".join(rng.choice(words) for _ in range(50)).capitalize() + "."

    app = create_app({"APP_ENV": "testing", "SQLALCHEMY_DATABASE_URI": database_url})
    with app.app_context():
        import_documents(
            [
                DocumentInput(
                    f"burst-{n:04d}", f"Document {n}", tuple(paragraph() for _ in range(6))
                )
                for n in range(count)
            ]
        )
        db.engine.dispose()


def empty_study(database_url: str) -> None:
    """Forget every session and worker (between rounds: each round is a fresh study)."""
    conn = psycopg2.connect(libpq_url(database_url))
    with conn, conn.cursor() as cur:
        cur.execute(
            "TRUNCATE annotations, annotation_sessions, annotators RESTART IDENTITY CASCADE"
        )
        cur.execute("TRUNCATE bench_baseline_start")
    conn.close()


def check_quota(database_url: str, quota: int, burst: Burst) -> tuple[int, list[str]]:
    """(sessions stored, problems): documents over the quota, 302s without a session."""
    conn = psycopg2.connect(libpq_url(database_url))
    with conn, conn.cursor() as cur:
        cur.execute(
            "SELECT d.external_id, count(s.id) FROM documents d"
            " LEFT JOIN annotation_sessions s ON s.document_id = d.id"
            " GROUP BY d.external_id HAVING count(s.id) > %s ORDER BY d.external_id",
            (quota,),
        )
        over = [f"{external_id}: {count} sessions" for external_id, count in cur.fetchall()]
        cur.execute("SELECT token FROM annotation_sessions")
        tokens = {token for (token,) in cur.fetchall()}
    conn.close()
    problems = [f"over quota ({quota}): {line}" for line in over]
    given = [location.rsplit("/", 1)[-1] for location in burst.locations]
    if len(set(given)) != len(given) or not set(given) <= tokens:
        problems.append(f"{len(given)} redirects for {len(tokens)} stored sessions")
    return len(tokens), problems


def describe(name: str, burst: Burst, cpu: dict[str, float]) -> dict[str, float]:
    """Print one round's line and return its figures."""
    figures = {**burst.figures(), **cpu}
    by_status = "; ".join(
        f"{status or 'failed'}: {len(values)} (p50 {percentile(values, 50) * 1000:.0f} ms, "
        f"p99 {percentile(values, 99) * 1000:.0f} ms)"
        for status, values in sorted(burst.latencies.items())
    )
    print(
        f"{name:<14} {figures['requests']:>5} req  {figures['throughput']:6.1f} req/s  "
        f"p50 {figures['p50']:6.1f} ms  p99 {figures['p99']:6.1f} ms  late {burst.late}  "
        f"errors {len(burst.errors)}  cores busy {cpu.get('cores_busy', 0):.2f}"
    )
    print(f"{'':15}{by_status}")
    if cpu:
        print(
            f"{'':15}CPU per request: server {cpu['server_cpu']:.2f} ms, "
            f"PostgreSQL {cpu['database_cpu']:.2f} ms"
        )
    for error in burst.errors[:5]:
        print(f"{'':15}{error}")
    return figures


def warm_up(port: int, tag: str) -> None:
    """Every gunicorn worker imports, compiles and connects before the measured rounds."""
    run_burst(port, arrival_times(WARM_UP, 2.0, seed=99), 10, tag)


def main(argv: list[str] | None = None) -> int:
    """Alternate app and baseline bursts, check the quota, print the medians and ratios;
    exit 1 if a target is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arrivals", type=int, default=800)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--in-flight", type=int, default=100)
    parser.add_argument("--documents", type=int, default=100)
    parser.add_argument("--quota", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    load = os.getloadavg()
    print(
        f"start_burst: {args.arrivals} arrivals over {args.seconds:g} s (Poisson, at most "
        f"{args.in_flight} in flight), {args.documents} documents x {args.quota} places, "
        f"{args.rounds} rounds; gunicorn per gunicorn.conf.py (WEB_CONCURRENCY="
        f"{os.environ.get('WEB_CONCURRENCY', '2')}), PostgreSQL; {os.cpu_count()} cores, "
        f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}"
    )
    rounds: list[tuple[dict, dict]] = []
    problems: list[str] = []
    with tempfile.TemporaryDirectory() as folder, scratch_database("falte_bench_start") as url:
        taxonomy = taxonomy_with(
            Path(folder), annotators_per_document=args.quota, attention_check_share=0.0
        )
        seed_documents(url, args.documents)
        create_table(libpq_url(url))
        app_port, base_port = free_port(), free_port()
        app_env = {
            "TAXONOMY_PATH": taxonomy,
            "TRUSTED_PROXIES": "1",
            "OPEN_RATE_LIMIT": "100000 per minute",
        }
        servers = [
            start_gunicorn("app:create_app()", url, app_port, **app_env),
            start_gunicorn("bench.baseline_app:app", url, base_port),
        ]
        try:
            warm_up(app_port, "warm")
            warm_up(base_port, "warm")
            meters = CpuMeter(servers[0].pid), CpuMeter(servers[1].pid)
            for number in range(args.rounds):
                empty_study(url)
                times = arrival_times(args.arrivals, args.seconds, seed=number)
                tag = f"r{number}-"
                bursts: dict[str, Burst] = {}

                def measure(name: str, port: int, meter: CpuMeter) -> None:
                    def burst_load():
                        bursts[name] = run_burst(port, times, args.in_flight, tag)  # noqa: B023
                        return bursts[name].seconds, len(bursts[name].all)  # noqa: B023

                    meter.measure(burst_load)

                order = [("app", app_port, meters[0]), ("base", base_port, meters[1])]
                for name, port, meter in order if number % 2 == 0 else order[::-1]:
                    measure(name, port, meter)
                stored, found = check_quota(url, args.quota, bursts["app"])
                problems.extend(f"round {number + 1}: {p}" for p in found)
                app_figures = describe(f"round {number + 1} app", bursts["app"], meters[0].figures)
                base_figures = describe(
                    f"round {number + 1} base", bursts["base"], meters[1].figures
                )
                print(
                    f"{'':15}sessions stored {stored} (places {args.documents * args.quota}), "
                    f"documents over quota: {len([p for p in found if 'over quota' in p])}"
                )
                app_figures["errors"] = len(bursts["app"].errors)
                rounds.append((app_figures, base_figures))
        finally:
            for server in servers:
                stop(server)
    app_p99 = statistics.median(a["p99"] for a, _ in rounds)
    base_p99 = statistics.median(b["p99"] for _, b in rounds)
    p99_ratio = statistics.median(a["p99"] / b["p99"] for a, b in rounds)
    throughput_ratio = statistics.median(a["throughput"] / b["throughput"] for a, b in rounds)
    errors = sum(a["errors"] for a, _ in rounds)
    load = os.getloadavg()
    print(
        f"median app p50 {statistics.median(a['p50'] for a, _ in rounds):.1f} ms, "
        f"p99 {app_p99:.1f} ms (target < {P99_TARGET_MS} ms); baseline p99 {base_p99:.1f} ms; "
        f"median p99 ratio {p99_ratio:.2f}x, throughput ratio {throughput_ratio:.2f}; "
        f"load average after {load[0]:.1f}"
    )
    for problem in problems:
        print(f"QUOTA: {problem}")
    print(f"documents over quota: {sum('over quota' in p for p in problems)}; errors {errors}")
    met = app_p99 < P99_TARGET_MS and not problems and errors == 0
    print("targets met" if met else "TARGETS NOT MET")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
