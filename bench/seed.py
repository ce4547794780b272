"""Bulk seeding with COPY: documents, paragraphs, annotators, sessions and annotations.

    python -m bench.seed --documents 1000 --annotations 90000 [--database-url URL]

Without --database-url it seeds a scratch database (kept, its URL printed). Used by the
other benchmarks through `seed()`.
"""

from __future__ import annotations

import argparse
import io
import json
import random
import secrets
import sys
import time

import psycopg2

from bench.common import create_database, libpq_url

WORDS = [
    "the",
    "ship",
    "Zoë",
    "harbour",
    "lighthouse",
    "storm",
    "keeper",
    "letter",
    "🚢",
    "Łukasz",
    "found",
    "night",
    "train",
    "orchard",
    "dispute",
    "village",
    "council",
    "signal",
    "bell",
    "winter",
    "river",
]


def _paragraph(rng: random.Random, sentences: int = 3) -> str:
    parts = []
    for _ in range(sentences):
        words = [rng.choice(WORDS) for _ in range(rng.randint(8, 16))]
        parts.append(" ".join(words).capitalize() + ".")
    return " ".join(parts)


def _copy(cursor, table: str, columns: tuple[str, ...], rows) -> None:
    buffer = io.StringIO()
    for row in rows:
        buffer.write("\t".join(_escape(value) for value in row) + "\n")
    buffer.seek(0)
    cursor.copy_expert(f"COPY {table} ({', '.join(columns)}) FROM STDIN", buffer)


def _gold(text: str) -> str:
    """A gold span on the first word of the document's first paragraph (JSON)."""
    return json.dumps(
        [{"paragraph_id": 0, "start": 0, "end": text.index(" "), "category": "new-person"}]
    )


def _escape(value) -> str:
    if value is None:
        return "\\N"
    if isinstance(value, bool):
        return "t" if value else "f"
    return (str(value).replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")).replace(
        "\r", "\\r"
    )


def seed(
    database_url: str,
    *,
    documents: int,
    paragraphs: int = 10,
    annotators_per_document: int = 3,
    annotations: int = 0,
    seed_value: int = 1,
    quiet: bool = False,
    workers: int | None = None,
    check_documents: int = 0,
) -> dict[str, int]:
    """Fill an empty, migrated PostgreSQL database; return the row counts. `workers`:
    how many annotators share the sessions (default: one per place of a document);
    `check_documents`: the first ones carry a gold span (attention checks)."""
    workers = workers or annotators_per_document
    rng = random.Random(seed_value)
    started = time.perf_counter()
    conn = psycopg2.connect(libpq_url(database_url))
    now = "2026-01-01T00:00:00+00:00"
    texts = [_paragraph(rng) for _ in range(50)]
    with conn, conn.cursor() as cur:
        # Every row belongs to a study (issue 30): the default one, made if the database
        # has none yet (a fresh migration makes it).
        cur.execute(
            "INSERT INTO studies (slug, title, kind, status, settings, created_at, updated_at)"
            " VALUES ('default', 'Default study', 'annotation', 'open', '{}', %s, %s)"
            " ON CONFLICT (slug) DO NOTHING",
            (now, now),
        )
        cur.execute("SELECT id FROM studies WHERE slug = 'default'")
        study_id = cur.fetchone()[0]
        _copy(
            cur,
            "documents",
            (
                "study_id",
                "id",
                "external_id",
                "title",
                "meta",
                "entities",
                "content_hash",
                "paragraph_count",
                "gold",
                "created_at",
                "updated_at",
            ),
            (
                (
                    study_id,
                    d,
                    f"doc-{d}",
                    f"Document {d}",
                    "{}",
                    "[]",
                    f"{d:064x}",
                    paragraphs,
                    _gold(texts[(d * 7) % len(texts)]) if d <= check_documents else None,
                    now,
                    now,
                )
                for d in range(1, documents + 1)
            ),
        )
        _copy(
            cur,
            "paragraphs",
            ("document_id", "position", "text"),
            (
                (d, p, texts[(d * 7 + p) % len(texts)])
                for d in range(1, documents + 1)
                for p in range(paragraphs)
            ),
        )
        total_sessions = documents * annotators_per_document
        _copy(
            cur,
            "annotators",
            ("id", "platform", "external_id", "created_at"),
            ((a, "direct", f"worker-{a}", now) for a in range(1, workers + 1)),
        )
        _copy(
            cur,
            "annotation_sessions",
            (
                "study_id",
                "id",
                "token",
                "document_id",
                "annotator_id",
                "status",
                "position",
                "furthest",
                "taxonomy_version",
                "platform",
                "platform_params",
                "completion_code",
                "is_attention_check",
                "started_at",
                "last_seen_at",
                "submitted_at",
            ),
            (
                (
                    study_id,
                    s + 1,
                    secrets.token_urlsafe(24),
                    s // annotators_per_document + 1,
                    s % workers + 1,
                    "submitted",
                    paragraphs - 1,
                    paragraphs - 1,
                    "bench",
                    "direct",
                    "{}",
                    secrets.token_hex(13),
                    s // annotators_per_document < check_documents,
                    now,
                    now,
                    now,
                )
                for s in range(total_sessions)
            ),
        )

        def annotation_rows():
            for n in range(annotations):
                session = n % total_sessions + 1
                document = (session - 1) // annotators_per_document + 1
                position = rng.randrange(paragraphs)
                text = texts[(document * 7 + position) % len(texts)]
                start = rng.randrange(0, len(text) - 12)
                end = start + rng.randint(3, 11)
                yield (
                    session,
                    f"{n:08x}-0000-4000-8000-{n:012x}",
                    position,
                    start,
                    end,
                    text[start:end],
                    rng.choice(
                        ("new-person", "missing-info", "ungrammatical", "abrupt-transition")
                    ),
                    None,
                    None,
                    None,
                    None,
                    None,
                    now,
                    None,
                )

        _copy(
            cur,
            "annotations",
            (
                "session_id",
                "client_id",
                "paragraph_id",
                "span_start",
                "span_end",
                "span_text",
                "category",
                "paired_paragraph_id",
                "paired_start",
                "paired_end",
                "paired_text",
                "comment",
                "created_at",
                "deleted_at",
            ),
            annotation_rows(),
        )
        for table in ("documents", "annotators", "annotation_sessions"):
            cur.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                f"(SELECT COALESCE(MAX(id), 1) FROM {table}))"
            )
        cur.execute("ANALYZE")
    conn.close()
    counts = {
        "documents": documents,
        "paragraphs": documents * paragraphs,
        "sessions": documents * annotators_per_document,
        "annotations": annotations,
    }
    if not quiet:
        print(f"seeded {counts} in {time.perf_counter() - started:.1f}s", file=sys.stderr)
    return counts


def main(argv: list[str] | None = None) -> None:
    """Command line: seed a database for manual benchmarking."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=100)
    parser.add_argument("--paragraphs", type=int, default=10)
    parser.add_argument("--annotators-per-document", type=int, default=3)
    parser.add_argument("--annotations", type=int, default=10_000)
    parser.add_argument("--database-url", help="an empty, migrated PostgreSQL database")
    args = parser.parse_args(argv)
    url = args.database_url or create_database("falte_seed")  # kept: the user asked for it
    seed(
        url,
        documents=args.documents,
        paragraphs=args.paragraphs,
        annotators_per_document=args.annotators_per_document,
        annotations=args.annotations,
    )
    print(url)


if __name__ == "__main__":
    main()
