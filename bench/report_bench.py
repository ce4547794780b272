"""Report benchmark: the precision report of a round with 100,000 judgments.

    python -m bench.report_bench [--judgments 100000] [--per-item 2]

Seeds a scratch PostgreSQL database (COPY) with a round whose items come from two sources,
several labels, annotators and documents, and K judgments per item; then times
app.validation.report.compute_report (target < 1 s) against a baseline measured in the
same run: a bare `SELECT verdict, count(*) FROM validation_judgments GROUP BY verdict`.
Needs TEST_DATABASE_URL (run through scripts/with-postgres.sh).
"""

from __future__ import annotations

import argparse
import io
import json
import random
import statistics
import sys

import psycopg2

from bench.common import Timer, libpq_url, ratio, scratch_database
from bench.seed import seed

TARGET_SECONDS = 1.0
LABELS = ("new-person", "missing-info", "repetition", "ungrammatical", "abrupt-transition")
REASONS = ("A. Not relevant to span", "B. Answered in the summary", "D. Other")
VERDICTS = ("agree", "partial", "disagree")


def _copy(cursor, table: str, columns: tuple[str, ...], rows) -> None:
    buffer = io.StringIO()
    for row in rows:
        buffer.write("\t".join("\\N" if v is None else str(v) for v in row) + "\n")
    buffer.seek(0)
    cursor.copy_expert(f"COPY {table} ({', '.join(columns)}) FROM STDIN", buffer)


def seed_round(url: str, judgments: int, per_item: int, documents: int) -> None:
    """One round `bench` with judgments // per_item items and `judgments` judgments."""
    rng = random.Random(4)
    items = judgments // per_item
    now = "2026-01-01T00:00:00+00:00"
    settings = json.dumps({"reasons": [*REASONS], "partial_counts_as_valid": True})
    conn = psycopg2.connect(libpq_url(url))
    with conn, conn.cursor() as cur:
        cur.execute(
            "INSERT INTO validation_rounds (id, name, judgments_per_item, settings, seed, "
            "created_at) VALUES (1, 'bench', %s, %s, 1, %s)",
            (per_item, settings, now),
        )
        _copy(
            cur,
            "validation_items",
            (
                "id",
                "round_id",
                "external_id",
                "source",
                "document_id",
                "order_key",
                "labels",
                "paragraph_id",
                "span_start",
                "span_end",
                "span_text",
                "ambiguous",
                "origin_annotator",
            ),
            (
                (
                    n + 1,
                    1,
                    f"item-{n}",
                    "human" if n % 2 else "gpt-4",
                    n % documents + 1,
                    n,
                    json.dumps(rng.sample(LABELS, rng.randint(1, 2))),
                    0,
                    0,
                    5,
                    "words",
                    "f",
                    f"direct:worker-{n % 40}" if n % 2 else None,
                )
                for n in range(items)
            ),
        )

        def judgment_rows():
            for n in range(items):
                for k in range(per_item):
                    verdict = rng.choices(VERDICTS, weights=(5, 2, 3))[0]
                    reasons = [] if verdict == "agree" else [rng.choice(REASONS)]
                    yield (
                        n + 1,
                        f"direct:validator-{(n + k) % 97}-{k}",
                        verdict,
                        json.dumps(reasons),
                        now,
                    )

        _copy(
            cur,
            "validation_judgments",
            ("item_id", "validator", "verdict", "reasons", "created_at"),
            judgment_rows(),
        )
        cur.execute("ANALYZE")
    conn.close()


def main(argv: list[str] | None = None) -> None:
    """Seed, time the report and the baseline, print the figures and the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judgments", type=int, default=100_000)
    parser.add_argument("--per-item", type=int, default=2)
    parser.add_argument("--documents", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)

    from sqlalchemy import text

    from app import create_app
    from app.core.extensions import db
    from app.validation.report import compute_report
    from app.validation.rounds import find_round

    with scratch_database("falte_bench_report") as url:
        print(f"seeding {args.judgments:,} judgments...", file=sys.stderr)
        seed(url, documents=args.documents, annotations=0, quiet=True)
        seed_round(url, args.judgments, args.per_item, args.documents)
        app = create_app({"APP_ENV": "testing", "SQLALCHEMY_DATABASE_URI": url})
        with app.app_context():
            round_ = find_round("bench")
            report_times, baseline_times = [], []
            report = {}
            for _ in range(args.repeat):
                with Timer() as timer:
                    report = compute_report(round_)
                report_times.append(timer.seconds)
                with Timer() as timer:
                    db.session.execute(
                        text("SELECT verdict, count(*) FROM validation_judgments GROUP BY verdict")
                    ).all()
                baseline_times.append(timer.seconds)
            db.session.remove()
            db.engine.dispose()
    first, median = report_times[0], statistics.median(report_times)
    base = statistics.median(baseline_times)
    print(
        f"report of {report['judgments']:,} judgments on {report['items']:,} items "
        f"({report['agreement']['items_with_multiple']:,} with 2+ validators): "
        f"first {first:.3f} s, median {median:.3f} s of {args.repeat} "
        f"(target < {TARGET_SECONDS:.0f} s: {'OK' if first < TARGET_SECONDS else 'OVER TARGET'})"
    )
    print(f"baseline SELECT verdict, count(*) GROUP BY verdict: median {base:.3f} s")
    print(f"ratio report / baseline: {ratio(median, base)}")
    print(f"precision {report['precision']:.4f}, alpha {report['agreement']['krippendorff_alpha']}")


if __name__ == "__main__":
    main()
