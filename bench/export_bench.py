"""Export benchmark: the JSONL export (CLI and HTTP download) against PostgreSQL's own COPY.

    python -m bench.export_bench [--annotations 1000000] [--small 100000] [--rounds 3]

Seeds a scratch database with N annotations (COPY), then times, in the same run:
  - the CLI export (app/research/downloads.py's EXPORTS["annotations"].write, the code behind
    `flask export-annotations`),
    in a child process that also reports its peak memory (VmHWM);
  - the download: GET /research/export/annotations.jsonl from gunicorn (gunicorn.conf.py,
    one worker) by a logged-in researcher, read to a file; the worker's peak memory;
  - the baseline: psql's `\\copy (SELECT row_to_json(a) FROM annotations a) TO FILE`.
Each is timed in --rounds alternating rounds, medians compared (the machine is shared).
Targets: CLI and download each <= 2x the baseline; peak memory < 150 MB whatever N. Both
run on a second, smaller database too (--small annotations) to show that memory is flat.
Needs TEST_DATABASE_URL (run through scripts/with-postgres.sh).
"""

from __future__ import annotations

import argparse
import http.cookiejar
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from bench.common import Timer, libpq_url, ratio, scratch_database
from bench.seed import seed
from tests.support.servers import free_port, start_gunicorn, stop, worker_pids

TIME_TARGET = 2.0
MEMORY_TARGET_MB = 150


def peak_rss_kb() -> int:
    """This process's peak resident memory in kB (VmHWM: unlike ru_maxrss, reset by exec,
    so the parent's size at fork does not count)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def child_export(output: str) -> None:
    """Run in a child process: export to `output`, print seconds and peak memory as JSON."""
    from app import create_app
    from app.exports.record import ExportFilter
    from app.research.downloads import EXPORTS

    app = create_app({"APP_ENV": "testing", "SQLALCHEMY_DATABASE_URI": os.environ["BENCH_DB"]})
    with app.app_context():
        before_kb = peak_rss_kb()
        started = time.perf_counter()
        with open(output, "w", encoding="utf-8", newline="") as out:
            EXPORTS["annotations"].write(out, "jsonl", ExportFilter())
        seconds = time.perf_counter() - started
    peak_kb = peak_rss_kb()
    print(json.dumps({"seconds": seconds, "peak_kb": peak_kb, "before_kb": before_kb}))


def run_export(url: str, output: Path) -> dict[str, float]:
    """The export in a fresh interpreter; its own timing and memory figures."""
    env = {**os.environ, "BENCH_DB": url}
    done = subprocess.run(
        [sys.executable, "-m", "bench.export_bench", "--child-export", str(output)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def run_copy(url: str, output: Path) -> float:
    """PostgreSQL's own JSON dump of the same table, through psql's \\copy."""
    command = f"\\copy (SELECT row_to_json(a) FROM annotations a) TO '{output}'"
    with Timer() as timer:
        subprocess.run(["psql", libpq_url(url), "-q", "-c", command], check=True)
    return timer.seconds


def _vm_hwm_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def add_researcher(url: str) -> None:
    """The account the download logs in with."""
    from werkzeug.security import generate_password_hash

    from app import create_app
    from app.core.extensions import db
    from app.models import Researcher
    from app.studies import default_study, share

    app = create_app({"APP_ENV": "testing", "SQLALCHEMY_DATABASE_URI": url})
    with app.app_context():
        account = Researcher(email=RESEARCHER, password_hash=generate_password_hash(PASSWORD))
        db.session.add(account)
        db.session.flush()
        share(default_study(), account, "editor")  # as `flask create-researcher` does
        db.engine.dispose()


RESEARCHER, PASSWORD = "bench@example.org", "bench-export-password"


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs) -> None:
        return None


class Downloader:
    """A one-worker gunicorn with a logged-in researcher, downloading the JSONL export."""

    def __init__(self, url: str) -> None:
        port = free_port()
        self.server = start_gunicorn("app:create_app()", url, port, WEB_CONCURRENCY="1")
        (self.worker,) = worker_pids(self.server.pid)
        self.base = f"http://127.0.0.1:{port}"
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()), _NoRedirect()
        )
        form = self.opener.open(f"{self.base}/research/login").read().decode("utf-8")
        token = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', form).group(1)
        body = urllib.parse.urlencode(
            {"csrf_token": token, "email": RESEARCHER, "password": PASSWORD}
        ).encode()
        try:  # not on to the dashboard, whose memory would count in the export's
            self.opener.open(f"{self.base}/research/login", data=body)
        except urllib.error.HTTPError as answer:
            if answer.code != 302:
                raise
        self.before_kb = _vm_hwm_kb(self.worker)

    def download(self, output: Path) -> float:
        """Seconds to read the whole export into `output`, 64 kB at a time."""
        with (
            Timer() as timer,
            self.opener.open(f"{self.base}/research/export/annotations.jsonl") as response,
            output.open("wb") as out,
        ):
            if response.status != 200:
                sys.exit(f"download answered {response.status}")
            shutil.copyfileobj(response, out, 64 * 1024)
        return timer.seconds

    def memory(self) -> dict[str, float]:
        """The worker's peak memory so far, and before its first export."""
        return {"peak_kb": _vm_hwm_kb(self.worker), "before_kb": self.before_kb}

    def close(self) -> None:
        """Stop gunicorn."""
        stop(self.server)


def _lines(path: Path) -> int:
    with path.open("rb") as handle:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 20), b""))


def measure(annotations: int, rounds: int, tmp: Path, label: str) -> dict[str, dict]:
    """Seed a scratch database with `annotations` rows; time COPY, the CLI and the download
    in alternating rounds (medians: the machine is shared) and check their files."""
    documents = max(1, annotations // 100)
    times: dict[str, list[float]] = {"copy": [], "cli": [], "download": []}
    cli_memory: dict[str, float] = {"peak_kb": 0, "before_kb": 0}
    with scratch_database("falte_bench_export") as url:
        seed(url, documents=documents, annotations=annotations, quiet=True)
        add_researcher(url)
        downloader = Downloader(url)
        try:
            for _ in range(rounds):
                times["copy"].append(run_copy(url, tmp / f"{label}-copy.jsonl"))
                cli = run_export(url, tmp / f"{label}-export.jsonl")
                times["cli"].append(cli["seconds"])
                cli_memory = {k: max(cli_memory[k], cli[k]) for k in cli_memory}
                times["download"].append(downloader.download(tmp / f"{label}-download.jsonl"))
            download_memory = downloader.memory()
        finally:
            downloader.close()
    for name in ("export", "download"):
        lines = _lines(tmp / f"{label}-{name}.jsonl")
        if lines != annotations:
            sys.exit(f"{name} wrote {lines} lines for {annotations} annotations")
    export, download = (tmp / f"{label}-{n}.jsonl" for n in ("export", "download"))
    if export.read_bytes() != download.read_bytes():
        sys.exit("the download differs from the CLI export")
    for name in ("copy", "export", "download"):
        (tmp / f"{label}-{name}.jsonl").unlink()
    medians = {name: {"seconds": statistics.median(t), "all": t} for name, t in times.items()}
    medians["cli"] |= cli_memory
    medians["download"] |= download_memory
    return medians


def _seconds(figures: dict) -> str:
    return ", ".join(f"{t:.2f}" for t in figures["all"])


def _round_ratios(figures: dict, baseline: dict) -> str:
    return ", ".join(ratio(t, b) for t, b in zip(figures["all"], baseline["all"], strict=True))


def main(argv: list[str] | None = None) -> int:
    """Seed, export, compare; print the figures and ratios; 1 if a target is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--annotations", type=int, default=1_000_000)
    parser.add_argument("--small", type=int, help="second size for the memory check (N/10)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating timing rounds")
    parser.add_argument("--child-export", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child_export:
        child_export(args.child_export)
        return 0
    small = args.small or max(1000, args.annotations // 10)
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        results = {}
        for label, size in (("small", small), ("large", args.annotations)):
            print(f"seeding and exporting {size:,} annotations...", file=sys.stderr)
            results[label] = measure(size, args.rounds, tmp, label)
    large, little = results["large"], results["small"]
    baseline = large["copy"]["seconds"]
    print(
        f"baseline psql \\copy row_to_json, {args.annotations:,} annotations: {baseline:.2f} s "
        f"(median of {_seconds(large['copy'])})"
    )
    missed = False
    for name, title in (("cli", "export-annotations jsonl (CLI)"), ("download", "HTTP download")):
        seconds = large[name]["seconds"]
        verdict = "OK" if seconds / baseline <= TIME_TARGET else "OVER TARGET"
        missed |= verdict != "OK"
        print(
            f"{title}: {seconds:.2f} s (median of {_seconds(large[name])}), "
            f"{args.annotations / seconds:,.0f} rows/s; ratio to COPY {ratio(seconds, baseline)} "
            f"(rounds {_round_ratios(large[name], large['copy'])}; target <= {TIME_TARGET:g}x) "
            f"{verdict}"
        )
        for label, size in (("small", small), ("large", args.annotations)):
            r = results[label][name]
            print(
                f"  peak memory ({size:,} annotations): {r['peak_kb'] / 1024:.0f} MB "
                f"(app loaded, before the export: {r['before_kb'] / 1024:.0f} MB)"
            )
        peak_mb = large[name]["peak_kb"] / 1024
        flat = "flat" if peak_mb < MEMORY_TARGET_MB else "OVER TARGET"
        missed |= flat != "flat"
        print(
            f"  peak memory ratio large / small: "
            f"{large[name]['peak_kb'] / little[name]['peak_kb']:.2f}x for "
            f"{args.annotations / small:.0f}x the rows (target < {MEMORY_TARGET_MB} MB: {flat})"
        )
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
