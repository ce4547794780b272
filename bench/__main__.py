"""`make bench`: every benchmark in turn, each printing its figures and ratios.

    python -m bench [--quick] [--only NAME ...]

--quick runs smaller sizes (for a smoke run); the figures in docs/performance.md come from
the full sizes. Exits non-zero when a benchmark reports a missed target or fails.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time

BENCHMARKS: dict[str, tuple[list[str], list[str]]] = {
    # name: (full-size arguments, --quick arguments)
    "save_load": (
        [],
        [
            "--annotators",
            "10",
            "--adds",
            "10",
            "--rounds",
            "1",
            "--paced",
            "20",
            "--paced-seconds",
            "5",
            "--capacity",
            "20,40",
        ],
    ),
    "long_document": ([], ["--paragraphs", "200", "--annotations", "400", "--adds", "5"]),
    "export_bench": ([], ["--annotations", "100000", "--small", "10000"]),
    "zip_bench": ([], ["--annotations", "2000", "--small", "200"]),
    "report_bench": ([], ["--judgments", "10000"]),
    "dashboard_bench": ([], ["--documents", "100"]),
    "start_burst": (
        [],
        ["--arrivals", "200", "--seconds", "5", "--documents", "20", "--rounds", "1"],
    ),
    # A whole study with faults: 600 workers over 10 minutes, about 17 minutes a run.
    "study_rehearsal": (
        [],
        ["--workers", "40", "--arrival-minutes", "2", "--task-minutes", "1"],
    ),
}


def main(argv: list[str] | None = None) -> int:
    """Run the selected benchmarks; return 1 if any missed its target or crashed."""
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    parser.add_argument("--only", nargs="*", choices=sorted(BENCHMARKS), help="run only these")
    args = parser.parse_args(argv)
    failed = []
    for name in args.only or BENCHMARKS:
        full, quick = BENCHMARKS[name]
        bench_args = quick if args.quick else full
        print(f"\n=== bench.{name} {' '.join(bench_args)}", flush=True)
        started = time.perf_counter()
        try:
            status = importlib.import_module(f"bench.{name}").main(bench_args)
        except SystemExit as exc:
            status = exc.code
        except Exception as exc:
            print(f"bench.{name} crashed: {exc!r}")
            status = 1
        print(f"=== bench.{name}: {time.perf_counter() - started:.0f} s, exit {status or 0}")
        if status:
            failed.append(name)
    if failed:
        print(f"\nmissed targets or failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
