"""Zip download benchmark: the memory of the brat and dataset downloads at two sizes.

    python -m bench.zip_bench [--annotations 20000] [--small N/10] [--whole]

Seeds a scratch PostgreSQL database with N annotations (COPY, bench.seed: a document per
100 annotations), then, in a fresh interpreter per download, reads the download as the
route sends it (app/research/downloads.py's EXPORTS["annotations-brat"] and
EXPORTS["dataset"], the zip's pieces as zip_stream writes them) to a file and reports
the memory Python allocates (tracemalloc) in two phases: before the first piece (the
dataset computes the study report for its card there: app.research.study_report, whose
memory grows with the study) and while the zip is written (the peak above what was held
when writing began), the process's peak resident memory (VmHWM: mostly the app itself at
these sizes) and seconds; the zip is opened and checked (zipfile.testzip). The same on a
second database with --small annotations (N/10). Target (issue 31): the resident peak at
N at most 1.2x the one at N/10. The writing peak grows only with what is bounded or
inherent: the rows a query fetches at a time (app.exports.record.BATCH; both sizes must
pass it for a table to show flat) and the zip's central directory, written at its end
(about 1 kB a file: brat has a .txt and .ann per reading). tracemalloc slows the
download down: the seconds are not the download's speed. --whole also measures the
archive built whole (the files as a dict, then zipped in memory: the downloads before
they streamed), for comparison.
Needs TEST_DATABASE_URL (run through scripts/with-postgres.sh).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import tracemalloc
import zipfile
from collections.abc import Iterable
from pathlib import Path

from bench.common import scratch_database
from bench.export_bench import peak_rss_kb
from bench.seed import seed

RATIO_TARGET = 1.2
DOWNLOADS = ("annotations-brat", "dataset")


def child_download(what: str, output: str, whole: bool) -> None:
    """Run in a child process: write the download to `output`; print seconds and memory."""
    from app import create_app
    from app.exports.record import ExportFilter
    from app.research.downloads import EXPORTS
    from app.research.interop_files import brat_files, dataset_files, zip_bytes

    app = create_app({"APP_ENV": "testing", "SQLALCHEMY_DATABASE_URI": os.environ["BENCH_DB"]})
    with app.app_context():
        before_kb = peak_rss_kb()
        tracemalloc.start()
        started = time.perf_counter()
        if whole:
            files = brat_files(ExportFilter()) if what != "dataset" else dataset_files()
            chunks: Iterable = [zip_bytes(files, what)]
        else:  # what the route sends: the study report (dataset) now, the zip as read
            chunks = EXPORTS[what].chunks("zip", ExportFilter())
        held, prepared = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        with open(output, "wb") as out:
            for chunk in chunks:
                out.write(chunk)  # type: ignore[arg-type]
        seconds = time.perf_counter() - started
        writing = tracemalloc.get_traced_memory()[1] - held
    figures = {"peak_kb": peak_rss_kb(), "before_kb": before_kb}
    figures |= {"prepared_kb": prepared / 1024, "writing_kb": writing / 1024}
    print(json.dumps({"seconds": seconds, **figures}))


def run_download(url: str, what: str, output: Path, whole: bool) -> dict[str, float]:
    """The download in a fresh interpreter; its figures, and the zip's members."""
    done = subprocess.run(
        [sys.executable, "-m", "bench.zip_bench", "--child", what, str(output)]
        + (["--whole"] if whole else []),
        env={**os.environ, "BENCH_DB": url},
        check=True,
        capture_output=True,
        text=True,
    )
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    with zipfile.ZipFile(output) as archive:
        if archive.testzip() is not None:
            sys.exit(f"{what}.zip is damaged")
        figures["members"] = len(archive.namelist())
    figures["bytes"] = output.stat().st_size
    output.unlink()
    return figures


def measure(annotations: int, tmp: Path, whole: bool) -> dict[str, dict]:
    """Seed a database with `annotations` rows; each download's figures."""
    results = {}
    with scratch_database("falte_bench_zip") as url:
        seed(url, documents=max(1, annotations // 100), annotations=annotations, quiet=True)
        for what in DOWNLOADS:
            results[what] = run_download(url, what, tmp / f"{what}.zip", whole=False)
            if whole:
                results[f"{what} (whole)"] = run_download(url, what, tmp / "w.zip", whole=True)
    return results


def main(argv: list[str] | None = None) -> int:
    """Seed, download at both sizes, print the figures; 1 if a ratio misses its target."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--annotations", type=int, default=20_000)
    parser.add_argument("--small", type=int, help="the first size (default N/10)")
    parser.add_argument("--whole", action="store_true", help="also the archive built whole")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child_download(*args.child, whole=args.whole)
        return 0
    small = args.small or max(100, args.annotations // 10)
    sizes = {"small": small, "large": args.annotations}
    with tempfile.TemporaryDirectory() as folder:
        results = {}
        for label, size in sizes.items():
            print(f"seeding and downloading {size:,} annotations...", file=sys.stderr)
            results[label] = measure(size, Path(folder), args.whole)
    missed = False
    for name in results["large"]:
        for label, size in sizes.items():
            r = results[label][name]
            print(
                f"{name}.zip, {size:,} annotations: writing {r['writing_kb'] / 1024:.2f} MB "
                f"traced (before it {r['prepared_kb'] / 1024:.1f} MB), resident peak "
                f"{r['peak_kb'] / 1024:.0f} MB (app loaded: {r['before_kb'] / 1024:.0f} MB), "
                f"{r['seconds']:.2f} s, {r['members']:,} files, {r['bytes'] / 1024:,.0f} kB"
            )
        large, little = results["large"][name], results["small"][name]
        writing = large["writing_kb"] / little["writing_kb"]
        prepared = large["prepared_kb"] / little["prepared_kb"]
        resident = large["peak_kb"] / little["peak_kb"]
        streamed = "(whole)" not in name
        verdict = "flat" if resident <= RATIO_TARGET else "OVER TARGET"
        missed |= streamed and verdict != "flat"
        print(
            f"  ratio for {args.annotations / small:.0f}x the rows: resident peak {resident:.2f}x"
            + (f" (target <= {RATIO_TARGET:g}x: {verdict})" if streamed else " (for comparison)")
            + f"; traced: before the first piece {prepared:.2f}x, writing {writing:.2f}x"
        )
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
