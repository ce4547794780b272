"""Benchmark: the annotator page on a long document in headless Chromium.

    python -m bench.long_document [--paragraphs 1000] [--annotations 2000] [--adds 15]
                                  [--repeat 3] [--database-url URL | --postgres]

Seeds a document of 1,000 paragraphs and a session that has reached the last one with
2,000 annotations (a temporary SQLite file; --postgres: a scratch PostgreSQL database;
--database-url: an empty, migrated database of yours), serves the app on 127.0.0.1 and
measures in the browser:
  - open: navigation start until the page is drawn with every highlight (the component's
    `annotator:ready` mark plus two animation frames, so layout and paint are included);
  - add: from clicking Add until its highlight is on screen (next frame), median of --adds.
Each figure is printed with its ratio to baselines measured in the same run: the same page
for a session with 0 annotations, and a static HTML page of the same text. Targets: open
under 1.5 s and add under 100 ms; the machine is noisy, so the ratios are what count.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import threading
import uuid
from datetime import UTC, datetime
from html import escape
from pathlib import Path

from sqlalchemy import insert
from werkzeug.serving import make_server

WORDS = (
    "the ship harbour night letter crew captain storm island village mother brother "
    "promise secret journey winter garden river bridge market soldier king queen "
    "forest castle dream memory silence morning evening stranger friend enemy"
).split()
NAMES = ("Mara", "Tobias", "Zoë", "Łukasz", "Ines", "Bertrand")
OPEN_TARGET_MS = 1500.0
ADD_TARGET_MS = 100.0

READY_JS = """
async () => {
  await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
  return performance.now();
}
"""

# Select a span of the Current Paragraph, choose a category, click Add, and time until the
# next frame after the new highlight is in the DOM.
ADD_JS = """
async ([start, end]) => {
  const paragraph = document.querySelector('.js-current-body [data-paragraph]');
  const node = [...paragraph.childNodes]
    .find((n) => n.nodeType === Node.TEXT_NODE && n.length > end) || paragraph.firstChild;
  const range = document.createRange();
  range.setStart(node, Math.min(start, node.length - 2));
  range.setEnd(node, Math.min(end, node.length - 1));
  const selection = getSelection();
  selection.removeAllRanges();
  selection.addRange(range);
  document.dispatchEvent(new MouseEvent('mouseup', {bubbles: true}));
  await new Promise((resolve) => setTimeout(resolve, 0));
  document.querySelector('.js-category[data-category="ungrammatical"]').click();
  const before = document.querySelectorAll('mark.hl').length;
  const add = document.querySelector('.js-add');
  if (add.disabled) throw new Error('Add is disabled: the selection was not taken');
  const started = performance.now();
  add.click();
  await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
  const elapsed = performance.now() - started;
  const after = document.querySelectorAll('mark.hl').length;
  if (after === before && !paragraph.querySelector('mark.hl')) {
    throw new Error('no highlight appeared');
  }
  return elapsed;
}
"""


def _paragraph(rng: random.Random) -> str:
    sentences = []
    for _ in range(rng.randint(3, 6)):
        words = [rng.choice(WORDS) for _ in range(rng.randint(8, 16))]
        words[0] = rng.choice(NAMES)
        if rng.random() < 0.1:
            words.insert(rng.randint(1, len(words) - 1), "🚢")
        sentences.append(" ".join(words).capitalize() + ".")
    return " ".join(sentences)


def _random_span(rng: random.Random, paragraph_id: int, text: str) -> dict:
    """A span over 1-4 whole words of the text, in code points."""
    starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == " "]
    first = rng.randrange(len(starts) - 1)
    last = min(len(starts) - 1, first + rng.randint(1, 4))
    start, end = starts[first], starts[last] - 1
    return {"paragraph_id": paragraph_id, "start": start, "end": end, "text": text[start:end]}


def seed(app, paragraphs: int, annotations: int, rng: random.Random) -> tuple[str, str, list[str]]:
    """Store the document and two sessions at its last paragraph; (full, empty) tokens, texts."""
    from app.core.extensions import db
    from app.imports.document_formats import DocumentInput
    from app.imports.document_store import import_documents
    from app.models import Annotation, AnnotationSession, Annotator, Document
    from app.taxonomy import current_taxonomy

    texts = [_paragraph(rng) for _ in range(paragraphs)]
    with app.app_context():
        import_documents([DocumentInput("long-doc", "A very long summary", tuple(texts))])
        document = db.session.query(Document).filter_by(external_id="long-doc").one()
        taxonomy = current_taxonomy()
        sessions = []
        for name in ("bench-full", "bench-empty"):
            annotator = Annotator(platform="direct", external_id=name)
            db.session.add(annotator)
            db.session.flush()
            session = AnnotationSession(
                document_id=document.id,
                annotator_id=annotator.id,
                taxonomy_version=taxonomy.version,
                platform="direct",
                position=paragraphs - 1,
                furthest=paragraphs - 1,
            )
            db.session.add(session)
            db.session.flush()
            sessions.append(session)
        categories = list(taxonomy.categories)
        rows = []
        now = datetime.now(UTC)
        for _ in range(annotations):
            category = rng.choice(categories)
            paragraph_id = rng.randrange(paragraphs)
            span = _random_span(rng, paragraph_id, texts[paragraph_id])
            paired = None
            if category.is_paired:
                other = rng.randrange(paragraph_id + 1)
                paired = _random_span(rng, other, texts[other])
            rows.append(
                {
                    "session_id": sessions[0].id,
                    "client_id": str(uuid.uuid4()),
                    "paragraph_id": paragraph_id,
                    "span_start": span["start"],
                    "span_end": span["end"],
                    "span_text": span["text"],
                    "category": category.key,
                    "paired_paragraph_id": paired and paired["paragraph_id"],
                    "paired_start": paired and paired["start"],
                    "paired_end": paired and paired["end"],
                    "paired_text": paired and paired["text"],
                    "comment": rng.choice([None, "unsure", "clearly wrong"]),
                    "created_at": now,
                }
            )
        for batch in range(0, len(rows), 1000):
            db.session.execute(insert(Annotation), rows[batch : batch + 1000])
        tokens = (sessions[0].token, sessions[1].token)
        db.session.commit()
    return tokens[0], tokens[1], texts


def static_page(texts: list[str]) -> str:
    """The same text as a plain HTML page with the app's stylesheet (the static baseline)."""
    body = "\n".join(f'<p class="paragraph">{escape(t)}</p>' for t in texts)
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>static</title>'
        '<link rel="stylesheet" href="/static/css/base.css">'
        '<link rel="stylesheet" href="/static/css/annotator.css"></head>'
        f"<body><main class='page'>{body}</main></body></html>"
    )


def time_open(page, url: str, repeat: int, expect_marks: bool) -> float:
    """Median ms from navigation start to the drawn page."""
    times = []
    for _ in range(repeat):
        page.goto(url, wait_until="commit")
        if expect_marks:
            page.wait_for_selector("[data-module='annotator'][data-ready='true']", timeout=60000)
        else:
            page.wait_for_load_state("load")
        times.append(page.evaluate(READY_JS))
    return statistics.median(times)


def time_adds(page, url: str, adds: int) -> float:
    """Median ms from Add to its highlight on screen, over `adds` annotations."""
    page.goto(url)
    page.wait_for_selector("[data-module='annotator'][data-ready='true']")
    times = []
    for i in range(adds):
        start = 2 + (i * 7) % 60
        times.append(page.evaluate(ADD_JS, [start, start + 5]))
    # (wait_for_function would need 'unsafe-eval', which the page's CSP forbids)
    page.locator(".js-status").filter(has_text="Saved").wait_for(timeout=60000)
    return statistics.median(times)


def measure(url: str, args: argparse.Namespace) -> dict[str, float]:
    """Seed the database at `url`, serve it, and take every figure in Chromium."""
    from playwright.sync_api import sync_playwright

    from app import create_app
    from tests.conftest import make_test_config
    from tests.e2e.conftest import CHROMIUM_ARGS, SYSTEM_CHROMIUM

    app = create_app(make_test_config(url, RATELIMIT_ENABLED=False))
    print(
        f"seeding {args.paragraphs} paragraphs, {args.annotations} annotations "
        f"({url.split('@')[-1]}) ...",
        flush=True,
    )
    full, empty, texts = seed(app, args.paragraphs, args.annotations, random.Random(args.seed))
    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_port}"
    static_url = f"{base}/bench-static-baseline"
    figures: dict[str, float] = {}
    try:
        with sync_playwright() as playwright:
            launch: dict = {"args": CHROMIUM_ARGS}
            if Path(SYSTEM_CHROMIUM).exists():
                launch["executable_path"] = SYSTEM_CHROMIUM
            browser = playwright.chromium.launch(**launch)
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            # The static baseline is served by the browser itself, on the app's origin.
            html = static_page(texts)
            page.route(static_url, lambda route: route.fulfill(body=html, content_type="text/html"))
            # Warm up caches (modules, fonts) so the first figure is not an outlier.
            time_open(page, f"{base}/s/{empty}", 1, True)
            figures["static"] = time_open(page, static_url, args.repeat, False)
            figures["empty"] = time_open(page, f"{base}/s/{empty}", args.repeat, True)
            figures["full"] = time_open(page, f"{base}/s/{full}", args.repeat, True)
            figures["marks"] = page.locator("mark.hl").count()
            figures["add_empty"] = time_adds(page, f"{base}/s/{empty}", args.adds)
            figures["add_full"] = time_adds(page, f"{base}/s/{full}", args.adds)
            browser.close()
    finally:
        server.shutdown()
        with app.app_context():
            from app.core.extensions import db

            db.engine.dispose()
    return figures


def main(argv: list[str] | None = None) -> int:
    """Seed, serve, measure in Chromium, print; exit 1 when a target is missed."""
    from tests.conftest import migrate_database

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--paragraphs", type=int, default=1000)
    parser.add_argument("--annotations", type=int, default=2000)
    parser.add_argument("--adds", type=int, default=15)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--database-url", help="an empty, migrated database to use")
    where.add_argument(
        "--postgres",
        action="store_true",
        help="a scratch PostgreSQL database (needs TEST_DATABASE_URL, e.g. via "
        "scripts/with-postgres.sh)",
    )
    args = parser.parse_args(argv)

    if args.database_url:
        figures = measure(args.database_url, args)
    elif args.postgres:
        from bench.common import scratch_database

        with scratch_database("falte_bench_long") as url:
            figures = measure(url, args)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            url = f"sqlite:///{Path(tmp) / 'bench.sqlite3'}"
            migrate_database(url)
            figures = measure(url, args)

    n = args.annotations
    print(f"static HTML of the same text:        {figures['static']:8.1f} ms")
    print(f"annotator page, 0 annotations:       {figures['empty']:8.1f} ms")
    print(f"annotator page, {n} annotations:    {figures['full']:8.1f} ms", end="")
    print(f"  ({figures['marks']:.0f} highlight segments)")
    print(f"  ratio to the 0-annotation page:    {figures['full'] / figures['empty']:8.2f} x")
    print(f"  ratio to static HTML:              {figures['full'] / figures['static']:8.2f} x")
    print(f"Add -> highlight, 0 annotations:     {figures['add_empty']:8.1f} ms")
    print(f"Add -> highlight, {n} annotations:  {figures['add_full']:8.1f} ms")
    print(
        f"  ratio:                             {figures['add_full'] / figures['add_empty']:8.2f} x"
    )
    ok = figures["full"] < OPEN_TARGET_MS and figures["add_full"] < ADD_TARGET_MS
    print(
        f"targets: open < {OPEN_TARGET_MS:.0f} ms, add < {ADD_TARGET_MS:.0f} ms: "
        + ("met" if ok else "MISSED")
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
