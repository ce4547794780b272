"""Export benchmark: `flask export-annotations --format jsonl` against PostgreSQL's own COPY.

    python -m bench.export_bench [--annotations 1000000] [--small 100000]

Seeds a scratch database with N annotations (COPY), then times, in the same run:
  - the export (app.export.write_export, the code behind `flask export-annotations`), in a
    child process that also reports its peak memory (VmHWM);
  - the baseline: psql's `\\copy (SELECT row_to_json(a) FROM annotations a) TO FILE`.
Targets: export <= 3x the baseline; peak memory < 150 MB whatever N. The export is run on
a second, smaller database too (--small annotations) to show that memory stays flat.
Needs TEST_DATABASE_URL (run through scripts/with-postgres.sh).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import Timer, libpq_url, ratio, scratch_database
from bench.seed import seed

TIME_TARGET = 3.0
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
    from app.export import ExportFilter, write_export

    app = create_app({"APP_ENV": "testing", "SQLALCHEMY_DATABASE_URI": os.environ["BENCH_DB"]})
    with app.app_context():
        before_kb = peak_rss_kb()
        started = time.perf_counter()
        with open(output, "w", encoding="utf-8", newline="") as out:
            write_export(out, "jsonl", "annotations", ExportFilter())
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


def measure(annotations: int, tmp: Path, label: str) -> dict[str, float]:
    """Seed a scratch database with `annotations` rows and time both exports."""
    documents = max(1, annotations // 100)
    with scratch_database("falte_bench_export") as url:
        seed(url, documents=documents, annotations=annotations, quiet=True)
        copy_seconds = run_copy(url, tmp / f"{label}-copy.jsonl")
        export = run_export(url, tmp / f"{label}-export.jsonl")
        lines = sum(1 for _ in (tmp / f"{label}-export.jsonl").open(encoding="utf-8"))
    if lines != annotations:
        sys.exit(f"export wrote {lines} lines for {annotations} annotations")
    return {"copy": copy_seconds, **export}


def main(argv: list[str] | None = None) -> None:
    """Seed, export, compare; print the figures and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--annotations", type=int, default=1_000_000)
    parser.add_argument("--small", type=int, help="second size for the memory check (N/10)")
    parser.add_argument("--child-export", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child_export:
        child_export(args.child_export)
        return
    small = args.small or max(1000, args.annotations // 10)
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        results = {}
        for label, size in (("small", small), ("large", args.annotations)):
            print(f"seeding and exporting {size:,} annotations...", file=sys.stderr)
            results[label] = measure(size, tmp, label)
    large, little = results["large"], results["small"]
    print(f"export-annotations jsonl, {args.annotations:,} annotations: {large['seconds']:.2f} s")
    print(f"baseline psql \\copy row_to_json:  {large['copy']:.2f} s")
    speed = large["seconds"] / large["copy"]
    verdict = "OK" if speed <= TIME_TARGET else "OVER TARGET"
    print(f"ratio export / COPY: {ratio(large['seconds'], large['copy'])} (target <= 3x) {verdict}")
    print(
        f"rows per second: export {args.annotations / large['seconds']:,.0f}, "
        f"COPY {args.annotations / large['copy']:,.0f}"
    )
    for label, size in (("small", small), ("large", args.annotations)):
        r = results[label]
        print(
            f"peak memory ({size:,} annotations): {r['peak_kb'] / 1024:.0f} MB "
            f"(app loaded, before the export: {r['before_kb'] / 1024:.0f} MB)"
        )
    growth = large["peak_kb"] / little["peak_kb"]
    flat = "flat" if large["peak_kb"] / 1024 < MEMORY_TARGET_MB else "OVER TARGET"
    print(
        f"peak memory ratio large / small: {growth:.2f}x for "
        f"{args.annotations / small:.0f}x the rows (target < {MEMORY_TARGET_MB} MB: {flat})"
    )


if __name__ == "__main__":
    main()
