"""A whole Prolific study rehearsed on real engines, with faults (issue 31, point 2).

    python -m bench.study_rehearsal [--workers 600] [--arrival-minutes 10]
                                    [--task-minutes 5] [--no-faults] [--seed 31]

nginx (config/nginx/nginx.conf, the docker-compose shape) in front of two gunicorn
servers, Redis (rate limits and the analysis queue), a private PostgreSQL cluster
(bench/postgres_cluster.py: the run restarts it) and the queue worker (`flask
analysis-worker`). --workers simulated Prolific workers arrive as a Poisson process over
--arrival-minutes, each from an address of its own (127.1.x.y: the per-network limits
apply as to real people), and go through the real HTTP flow of the study in
tests/support/study_day.py (consent, before-survey, training, task with model
suggestions and severities, after-survey, Prolific's completion codes per outcome):

    /start -> consent -> before-survey -> training (a share fail it, a share decline
    the consent) -> task page -> suggestions decided, saves paced over --task-minutes,
    a few removed, paragraphs moved, heartbeats -> Submit -> after-survey -> the
    completion page's Return link (the outcome's Prolific code)

Think times are an unhurried person's (REAL_SECONDS, a 25-minute task) divided by the
compression 25 / --task-minutes; a task makes SAVES_PER_TASK saves (every 10 s at 5
minutes). Like the page's retry queue (static/js/lib/sync-queue.mjs), a client retries a
request that got no answer, a 429 or a 5xx, with the same body (the same annotation id);
a person reloads a page that failed the same way.

Faults (unless --no-faults): at 40% of the arrival window one gunicorn server is SIGKILLed
(master and workers) and started again; at 75% PostgreSQL restarts (`pg_ctl restart -m
fast`). A fault window lasts from the fault until the service is back plus GRACE_SECONDS.

Prints progress every 30 s, then: completion codes per outcome against the expected ones,
sessions per worker, quotas, saves lost / duplicated (acknowledged saves against the
database's rows), p50 / p99 per request kind inside and outside the fault windows, and
errors by kind. A researcher reloads the dashboard every 30 s meanwhile (the kind
`dashboard`, outside the target), so the queue worker computes γ as in a real study.
Exits 1 unless everything is exact and every worker request kind's p99 outside the fault
windows is under STEP_P99_TARGET_MS. The run's shape and how to size a deployment from
it: docs/deploying.md ("Sizing a deployment"); figures: bench/README.md.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import math
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import psycopg2
import yaml

from bench.common import create_database, libpq_url
from bench.postgres_cluster import Cluster, private_cluster
from bench.save_load import page_state
from tests.support.nginx import compose_config, start_nginx, stop_nginx
from tests.support.redis import start_redis, stop_redis
from tests.support.rehearsal import (
    KINDS,
    Ledger,
    Request,
    plan_outcomes,
    poisson_arrivals,
    quota_report,
    reconcile,
)
from tests.support.servers import ROOT, free_port, start_gunicorn, stop, worker_pids
from tests.support.study_day import study_day_taxonomy
from tests.support.training import PRACTICE_PARAGRAPHS, practice_record

PARAGRAPHS = 6  # per task document
QUOTA = 3  # study.annotators_per_document of the study_day taxonomy
SAVES_PER_TASK = 30  # every 10 s over a 5-minute task
REMOVES_PER_TASK = 2
SHARES = {"no_consent": 0.03, "failed_training": 0.10}
REAL_TASK_MINUTES = 25  # an unhurried person's task; compression = 25 / --task-minutes
# An unhurried person's seconds on each step page, before compression.
REAL_SECONDS = {"consent": 40, "survey": 30, "training": 150, "feedback": 20, "heartbeat": 60}
RETRYABLE = (0, 429, 502, 503, 504)
RETRY_SECONDS = 120  # a client gives up on a request after this long
IDLE_SECONDS = 15  # a new connection after this long idle (nginx's keepalive_timeout: 20 s)
REQUEST_TIMEOUT = 30
GRACE_SECONDS = 5
STEP_P99_TARGET_MS = 200
STUDY_ID = "rehearsal-study"
SECRET = "study-rehearsal-secret-key-0123456789abcdef"
CODE_LINK = re.compile(r"submissions/complete\?cc=([A-Za-z0-9]+)")
CSRF_FIELD = re.compile(r'name="csrf_token"[^>]*value="([^"]+)"')
WORDS = "the keeper Zoë saw a ship near harbour lights storm letter and north dawn".split()
NAMES = ("Mara", "Jonas", "Elin", "Arvid", "Sofie", "Holm")


class Gave(Exception):
    """A simulated worker gave up: an answer it cannot go on from."""


@dataclass
class Run:
    """What every simulated worker shares: the entry port, the clock and the ledger."""

    port: int
    compression: float
    task_seconds: float
    started: float = field(default_factory=time.monotonic)
    ledger: Ledger = field(default_factory=Ledger)
    faults_failed: list[str] = field(default_factory=list)

    def clock(self) -> float:
        return time.monotonic() - self.started

    def think(self, step: str, rng: random.Random) -> None:
        """An unhurried person's time on `step`, compressed, jittered by +-50%."""
        time.sleep(REAL_SECONDS[step] / self.compression * rng.uniform(0.5, 1.5))


class Browser:
    """One worker's HTTP/1.1 connection to nginx from its own address; every request is
    recorded in the ledger by kind."""

    def __init__(self, run: Run, address: str) -> None:
        self.run = run
        self.address = address
        self.conn: http.client.HTTPConnection | None = None
        self.last_used = 0.0
        self.headers: dict[str, str] = {}
        self.cookies: dict[str, str] | None = None  # kept only for the researcher

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def once(self, method: str, path: str, kind: str, body=None, form=None):
        """One attempt: (status, headers, data); status 0 when no answer came."""
        if self.conn is None or time.monotonic() - self.last_used > IDLE_SECONDS:
            self.close()
            self.conn = http.client.HTTPConnection(
                "127.0.0.1",
                self.run.port,
                timeout=REQUEST_TIMEOUT,
                source_address=(self.address, 0),
            )
        headers = dict(self.headers)
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        payload = None
        if body is not None:
            payload = json.dumps(body)
            headers["Content-Type"] = "application/json"
        elif form is not None:
            payload = urlencode(form)
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        started = self.run.clock()
        clock = time.perf_counter()
        error = ""
        try:
            self.conn.request(method, path, body=payload, headers=headers)
            response = self.conn.getresponse()
            data = response.read()
            status = response.status
            answer = {k.lower(): v for k, v in response.getheaders()}
            if self.cookies is not None:
                for cookie in response.headers.get_all("Set-Cookie") or ():
                    name, _, value = cookie.split(";", 1)[0].partition("=")
                    self.cookies[name.strip()] = value
            if response.will_close:
                self.close()
        except (OSError, http.client.HTTPException) as exc:
            self.close()
            status, answer, data = 0, {}, b""
            error = type(exc).__name__
        seconds = time.perf_counter() - clock
        self.last_used = time.monotonic()
        if status >= 400:
            error = f"{status} {error_code(data)}".strip()
        self.run.ledger.record(Request(kind, started, seconds, status, error))
        return status, answer, data

    def call(self, method: str, path: str, kind: str, ok: tuple[int, ...], **payload):
        """Send until an answer in `ok`; retry no answer, 429 and 5xx (Retry-After
        honoured, at most 5 s) for RETRY_SECONDS; anything else: the worker gives up."""
        deadline = time.monotonic() + RETRY_SECONDS
        delay = 0.25
        while True:
            status, answer, data = self.once(method, path, kind, **payload)
            if status in ok:
                return status, answer, data
            if status not in RETRYABLE or time.monotonic() > deadline:
                raise Gave(f"{kind}: {method} -> {status} {data[:200]!r}")
            wait = float(answer.get("retry-after", delay)) if status else delay
            time.sleep(min(wait, 5.0))
            delay = min(delay * 2, 4.0)

    def post_form(self, path: str, form: dict[str, str]) -> str:
        """POST a step page's form; where it redirects to."""
        _, answer, _ = self.call("POST", path, "step post", (302, 303), form=form)
        return local(answer.get("location", ""))

    def page(self, path: str, kind: str = "step page") -> tuple[str, bytes]:
        """GET a page, following redirects as a browser does: (its path, its body)."""
        for _ in range(5):
            status, answer, data = self.call("GET", path, kind, (200, 302, 303))
            if status == 200:
                return path, data
            path = local(answer.get("location", ""))
        raise Gave(f"{kind}: too many redirects, the last to {path}")


def error_code(data: bytes) -> str:
    """The error envelope's code, if the body is one."""
    try:
        return json.loads(data)["error"]["code"]
    except (ValueError, KeyError, TypeError):
        return ""


def local(location: str) -> str:
    """A Location header as a path with its query (nginx may make it absolute)."""
    if not location:
        return ""
    parts = urlsplit(location)
    return parts.path + (f"?{parts.query}" if parts.query else "")


@dataclass
class Worker:
    """One simulated Prolific worker: the plan, and what the server acknowledged."""

    index: int
    plan: str
    arrival: float
    token: str = ""
    code: str | None = None
    gave_up: str = ""
    finished_at: float | None = None
    saved: set[str] = field(default_factory=set)
    removed: set[str] = field(default_factory=set)
    rejected: set[str] = field(default_factory=set)

    @property
    def address(self) -> str:
        return f"127.1.{self.index // 250}.{self.index % 250 + 1}"

    @property
    def params(self) -> dict[str, str]:
        return {
            "PROLIFIC_PID": f"rehearsal{self.index:015d}",
            "STUDY_ID": STUDY_ID,
            "SESSION_ID": f"submission-{self.index:06d}",
        }

    def run(self, run: Run) -> None:
        browser = Browser(run, self.address)
        rng = random.Random(self.index)
        try:
            self._study(run, browser, rng)
        except Gave as exc:
            self.gave_up = str(exc)
        except Exception as exc:  # a bug of the bench: count it, do not hide it
            where = traceback.extract_tb(exc.__traceback__)[-1]
            self.gave_up = f"bench error: {exc!r} at line {where.lineno}"
        finally:
            browser.close()
            self.finished_at = run.clock()

    def _study(self, run: Run, browser: Browser, rng: random.Random) -> None:
        _, answer, _ = browser.call("GET", f"/start?{urlencode(self.params)}", "open", (302,))
        base = local(answer["location"])
        self.token = base.rsplit("/", 1)[-1]
        _, page = browser.page(base)  # the consent
        csrf = CSRF_FIELD.search(page.decode()).group(1)
        run.think("consent", rng)
        decision = "decline" if self.plan == "no_consent" else "agree"
        where = browser.post_form(f"{base}/consent", {"csrf_token": csrf, "decision": decision})
        if self.plan == "no_consent":
            self.code = end_code(browser, where)
            return
        browser.page(where)  # the before-survey
        run.think("survey", rng)
        where = browser.post_form(f"{base}/survey/before", {"csrf_token": csrf, "q-native": "0"})
        where, page = browser.page(where)
        if where != f"{base}/training":
            raise Gave(f"after the survey: {where}, not the training")
        practice = page_state(page)["practice"]
        browser.headers["X-CSRFToken"] = csrf
        run.think("training", rng)
        if not self._train(run, browser, practice, rng):
            self.code = end_code(browser, f"{base}/end")
            return
        where, page = browser.page(base, "task page")
        if where != base:
            raise Gave(f"the task page: {where}")
        self._task(run, browser, page_state(page), rng)
        _, _, data = browser.call(
            "POST", f"/api/sessions/{self.token}/submit", "submit", (200,), body={}
        )
        after = local(json.loads(data)["redirect_url"])
        browser.page(after)
        run.think("survey", rng)
        where = browser.post_form(after, {"csrf_token": csrf, "q-difficulty": "3"})
        self.code = end_code(browser, where)

    def _train(self, run: Run, browser: Browser, practice: dict, rng: random.Random) -> bool:
        """Check my answers: the right ones (a pass), or nothing until the attempts are
        used up (a fail), reading the feedback between checks. A check retried after a
        lost answer may find it already counted (409): the session's page then says where
        the worker is."""
        answers = [] if self.plan == "failed_training" else practice_answers()
        url = practice["check"]
        for attempt in range(practice["attempts"]):
            if attempt:
                run.think("feedback", rng)
            body = {"document_id": practice["document_id"], "annotations": answers}
            status, _, data = browser.call("POST", url, "step post", (200, 409), body=body)
            if status == 409:
                break
            result = json.loads(data)
            if result["passed"] or result["failed"]:
                break
        return self.plan != "failed_training"

    def _task(self, run: Run, browser: Browser, state: dict, rng: random.Random) -> None:
        api = f"/api/sessions/{self.token}"
        total = state["document"]["total_paragraphs"]
        texts = {p["paragraph_id"]: p["text"] for p in state["document"]["paragraphs"]}
        taxonomy = state["taxonomy"]
        singletons = [c["key"] for c in taxonomy["categories"] if c["type"] == "singleton"]
        allowed = taxonomy.get("category_severities", {})
        every = [s["key"] for s in taxonomy.get("severities", [])]
        actions = SAVES_PER_TASK + REMOVES_PER_TASK + total  # saves, removes, moves
        pause = run.task_seconds / actions
        heartbeat_every = REAL_SECONDS["heartbeat"] / run.compression
        last_beat = time.monotonic()
        made: set[tuple[int, int, int, str]] = set()
        own: list[str] = []

        def act() -> None:
            nonlocal last_beat
            time.sleep(pause * rng.uniform(0.5, 1.5))
            if time.monotonic() - last_beat >= heartbeat_every:
                browser.call("POST", f"{api}/heartbeat", "heartbeat", (204,), body={})
                last_beat = time.monotonic()

        def severity(category: str) -> str | None:
            options = allowed.get(category, every)
            return options[0] if options else None

        def save(body: dict) -> None:
            browser.call("POST", f"{api}/annotations", "save", (200, 201), body=body)
            self.saved.add(body["id"])

        suggestions = self._suggestions(browser, api)
        per_paragraph = [
            SAVES_PER_TASK // total + (p < SAVES_PER_TASK % total) for p in range(total)
        ]
        for paragraph in range(total):
            here = [s for s in suggestions if s["span"]["paragraph_id"] == paragraph]
            for suggestion in [s for s in here if s["decision"] is None]:
                act()
                if rng.random() < 0.5:  # Accept half, Reject the others
                    save(
                        {
                            "id": str(uuid.uuid4()),
                            "category": suggestion["category"],
                            "span": suggestion["span"],
                            "paired_span": suggestion["paired_span"],
                            "comment": suggestion["comment"],
                            "severity": severity(suggestion["category"]),
                            "suggestion_id": suggestion["id"],
                        }
                    )
                else:
                    decision = str(uuid.uuid4())
                    browser.call(
                        "POST", f"{api}/suggestions/{suggestion['id']}/rejection", "suggestions",
                        (200, 201), body={"id": decision},
                    )  # fmt: skip
                    self.rejected.add(decision)
            for _ in range(per_paragraph[paragraph]):
                act()
                category = rng.choice(singletons)
                span = fresh_span(texts[paragraph], paragraph, category, made, rng)
                body = {
                    "id": str(uuid.uuid4()),
                    "category": category,
                    "span": span,
                    "paired_span": None,
                    "comment": None,
                    "severity": severity(category),
                }
                save(body)
                own.append(body["id"])
            if paragraph in (1, 3) and own:
                act()
                victim = own.pop(rng.randrange(len(own)))
                browser.call("DELETE", f"{api}/annotations/{victim}", "remove", (204,))
                self.removed.add(victim)
            if paragraph < total - 1:
                act()
                _, _, data = browser.call(
                    "PUT", f"{api}/position", "move", (200,), body={"paragraph_id": paragraph + 1}
                )
                for revealed in json.loads(data)["paragraphs"]:
                    texts[revealed["paragraph_id"]] = revealed["text"]
                suggestions = self._suggestions(browser, api)  # the page asks after a move
        # Back one paragraph to reread it, as people do before they Submit.
        browser.call("PUT", f"{api}/position", "move", (200,), body={"paragraph_id": total - 2})

    def _suggestions(self, browser: Browser, api: str) -> list[dict]:
        _, _, data = browser.call("GET", f"{api}/suggestions", "suggestions", (200,))
        return json.loads(data)["suggestions"]


RESEARCHER = ("rehearsal@example.org", "rehearsal-password-0123")
DASHBOARD_SECONDS = 30  # a researcher reloading the dashboard while the study runs


def researcher(run: Run, stop_event: threading.Event) -> None:
    """A researcher who logs in and reloads the dashboard every DASHBOARD_SECONDS: its
    pages ask for γ of the documents annotated so far, which the queue worker computes
    (pages never compute). Recorded as the kind `dashboard` (no step target)."""
    browser = Browser(run, "127.2.0.1")
    browser.cookies = {}
    try:
        _, page = browser.page("/research/login", "dashboard")
        csrf = CSRF_FIELD.search(page.decode()).group(1)
        email, password = RESEARCHER
        form = {"email": email, "password": password, "csrf_token": csrf}
        browser.call("POST", "/research/login", "dashboard", (302, 303), form=form)
        while not stop_event.is_set():
            browser.page("/research/", "dashboard")
            stop_event.wait(DASHBOARD_SECONDS)
        browser.page("/research/", "dashboard")  # once more when every worker is done
    except (Gave, AttributeError) as exc:  # AttributeError: no CSRF field on the login page
        print(f"[{run.clock():5.0f} s] the researcher gave up: {exc!r}", flush=True)
    finally:
        browser.close()


def practice_answers() -> list[dict]:
    """The practice text's two errors, marked as the gold has them (a pass)."""
    record = practice_record()
    answers = []
    for gold in record["gold"]:
        text = PRACTICE_PARAGRAPHS[gold["paragraph_id"]]
        paired = gold.get("paired_span")
        answers.append(
            {
                "id": str(uuid.uuid4()),
                "category": gold["category"],
                "span": {
                    "paragraph_id": gold["paragraph_id"],
                    "start": gold["start"],
                    "end": gold["end"],
                    "text": text[gold["start"] : gold["end"]],
                },
                "paired_span": paired
                and {
                    **paired,
                    "text": PRACTICE_PARAGRAPHS[paired["paragraph_id"]][
                        paired["start"] : paired["end"]
                    ],
                },
                "comment": None,
                "severity": "major",
            }
        )
    return answers


def fresh_span(text: str, paragraph: int, category: str, made: set, rng: random.Random) -> dict:
    """A span of a few characters that starts and ends on a letter, never marked before
    with this category (the API refuses an exact duplicate under a new id)."""
    while True:
        start = rng.randrange(0, len(text) - 12)
        end = start + rng.randint(4, 10)
        key = (paragraph, start, end, category)
        if not text[start].isspace() and not text[end - 1].isspace() and key not in made:
            made.add(key)
            return {"paragraph_id": paragraph, "start": start, "end": end, "text": text[start:end]}


def end_code(browser: Browser, path: str) -> str | None:
    """Follow an end page (the completion page, or the early end) and read the code of
    its Return link (Prolific's `cc=`)."""
    _, page = browser.page(path)
    match = CODE_LINK.search(page.decode())
    return match.group(1) if match else None


# --- the study's data ----------------------------------------------------------------


def write_study(folder: Path, documents: int, rng: random.Random) -> tuple[Path, Path, Path]:
    """The study_day taxonomy (consent, surveys, training, severities, suggestions shown,
    codes per outcome), `documents` task texts and two suggestions on each."""
    taxonomy = study_day_taxonomy(folder)
    records, suggestions = [practice_record()], []
    for d in range(documents):
        paragraphs = [
            " ".join(
                f"{rng.choice(NAMES)} {' '.join(rng.choices(WORDS, k=rng.randint(6, 12)))}."
                for _ in range(3)
            )
            for _ in range(PARAGRAPHS)
        ]
        external_id = f"task-{d + 1:04d}"
        records.append({"id": external_id, "title": f"Task {d + 1}", "paragraphs": paragraphs})
        for n, paragraph in enumerate((0, 2)):
            sentence = paragraphs[paragraph].split(". ")[0].rstrip(".") + "."
            suggestions.append(
                {
                    "id": f"{external_id}-s{n}",
                    "document_id": external_id,
                    "category": "missing-info",
                    "span": {"text": sentence, "paragraph_id": paragraph},
                    "question": "What is missing here?",
                }
            )
    documents_path = folder / "documents.jsonl"
    documents_path.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    suggestions_path = folder / "suggestions.jsonl"
    suggestions_path.write_text("".join(json.dumps(s) + "\n" for s in suggestions), "utf-8")
    return taxonomy, documents_path, suggestions_path


def seed(url: str, taxonomy: Path, documents: Path, suggestions: Path) -> None:
    """Import the texts and suggestions, and create the researcher, with the real
    commands."""
    env = {**os.environ, "APP_ENV": "development", "DATABASE_URL": url}
    env |= {"TAXONOMY_PATH": str(taxonomy), "SECRET_KEY": SECRET}
    for command, given in (
        (["import-documents", str(documents)], None),
        (["import-suggestions", str(suggestions), "--source", "model", "--format", "jsonl"], None),
        (["create-researcher", RESEARCHER[0], "--password-stdin"], RESEARCHER[1] + "\n"),
    ):
        result = subprocess.run(
            [sys.executable, "-m", "flask", "--app", "app", *command],
            cwd=ROOT, env=env, input=given, capture_output=True, text=True, check=False,
        )  # fmt: skip
        if result.returncode != 0:
            raise RuntimeError(f"flask {command[0]} failed:\n{result.stdout}{result.stderr}")


def expected_codes(taxonomy: Path) -> dict[str, str]:
    """The study's Prolific code per outcome, as the taxonomy names them."""
    study = yaml.safe_load(taxonomy.read_text("utf-8"))["study"]
    return {outcome: str(code) for outcome, code in study["completion"].items()}


# --- servers and faults --------------------------------------------------------------


@dataclass
class Stack:
    """The processes of the deployment."""

    url: str
    taxonomy: Path
    redis_url: str
    ports: list[int]
    servers: list[subprocess.Popen] = field(default_factory=list)
    cluster: Cluster | None = None

    def server_env(self) -> dict[str, str]:
        return {
            "TAXONOMY_PATH": str(self.taxonomy),
            "SECRET_KEY": SECRET,
            "RATELIMIT_STORAGE_URI": self.redis_url,
            "TRUSTED_PROXIES": "1",  # nginx's X-Forwarded-For names the worker's address
            "WEB_CONCURRENCY": os.environ.get("WEB_CONCURRENCY", "1"),
        }

    def start_server(self, index: int) -> subprocess.Popen:
        return start_gunicorn("app:create_app()", self.url, self.ports[index], **self.server_env())


def kill_server(stack: Stack, run: Run, index: int) -> None:
    """SIGKILL one gunicorn server, master and workers at once, then start it again."""
    window = run.ledger.open_window(run.clock())
    process = stack.servers[index]
    for pid in [*worker_pids(process.pid), process.pid]:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    stop(process)
    print(f"[{run.clock():5.0f} s] fault: gunicorn server {index + 1} SIGKILLed", flush=True)
    stack.servers[index] = stack.start_server(index)
    print(f"[{run.clock():5.0f} s] fault: gunicorn server {index + 1} serving again", flush=True)
    run.ledger.close_window(window, run.clock() + GRACE_SECONDS)


def restart_postgres(stack: Stack, run: Run) -> None:
    window = run.ledger.open_window(run.clock())
    print(f"[{run.clock():5.0f} s] fault: PostgreSQL restarting", flush=True)
    stack.cluster.restart()
    print(f"[{run.clock():5.0f} s] fault: PostgreSQL accepting connections", flush=True)
    run.ledger.close_window(window, run.clock() + GRACE_SECONDS)


# --- the run -------------------------------------------------------------------------


def progress(run: Run, workers: list[Worker], stop_event: threading.Event) -> None:
    """Every 30 s: arrivals, workers busy and done by outcome, requests and the last
    30 s's p99."""
    while not stop_event.wait(30):
        now = run.clock()
        arrived = sum(w.arrival <= now for w in workers)
        done = Counter(w.plan for w in workers if w.finished_at is not None and not w.gave_up)
        gave_up = sum(bool(w.gave_up) for w in workers)
        recent = [r for r in run.ledger.since(now - 30) if not r.error]
        p99 = sorted(r.seconds for r in recent)[int(0.99 * len(recent))] * 1000 if recent else 0
        errors = sum(1 for r in run.ledger.since(now - 30) if r.error)
        busy = arrived - sum(done.values()) - gave_up
        print(
            f"[{now:5.0f} s] arrived {arrived}/{len(workers)}, busy {busy}, done "
            f"{dict(done)}, gave up {gave_up}; last 30 s: {len(recent)} requests "
            f"({len(recent) / 30:.1f}/s), p99 {p99:.0f} ms, errors {errors}",
            flush=True,
        )


def simulate(run: Run, workers: list[Worker], stack: Stack, faults: bool) -> None:
    """Start each worker's thread at its arrival, the faults at their times; wait for
    every worker."""
    threading.stack_size(512 * 1024)
    arrival_seconds = max(w.arrival for w in workers)
    plan = []
    if faults:
        plan = [
            (0.40 * arrival_seconds, lambda: kill_server(stack, run, 1)),
            (0.75 * arrival_seconds, lambda: restart_postgres(stack, run)),
        ]

    def strike(at: float, fault) -> None:
        time.sleep(max(0.0, at - run.clock()))
        try:
            fault()
        except Exception as exc:  # a server that did not come back: the run is not valid
            run.faults_failed.append(repr(exc))
            print(f"[{run.clock():5.0f} s] the fault failed: {exc!r}", flush=True)

    fault_threads = [threading.Thread(target=strike, args=step) for step in plan]
    for thread in fault_threads:
        thread.start()
    stop_event = threading.Event()
    reporter = threading.Thread(target=progress, args=(run, workers, stop_event), daemon=True)
    reporter.start()
    watcher = threading.Thread(target=researcher, args=(run, stop_event), daemon=True)
    watcher.start()
    threads = []
    for worker in workers:
        time.sleep(max(0.0, worker.arrival - run.clock()))
        thread = threading.Thread(target=worker.run, args=(run,), daemon=True)
        thread.start()
        threads.append(thread)
    for thread in fault_threads + threads:
        thread.join()
    stop_event.set()
    watcher.join()


def wait_for_analyses(url: str, seconds: float) -> None:
    """Wait until the queue worker has computed what the dashboard asked for (no row
    pending or running), at most `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        conn = psycopg2.connect(libpq_url(url))
        try:
            with conn, conn.cursor() as cur:
                cur.execute(
                    "SELECT count(*) FROM analysis_results WHERE status IN ('pending', 'running')"
                )
                if cur.fetchone()[0] == 0:
                    return
        finally:
            conn.close()
        time.sleep(1)


def read_database(url: str) -> dict:
    """What the database holds at the end: sessions, annotations, rejections."""
    conn = psycopg2.connect(libpq_url(url))
    try:
        with conn, conn.cursor() as cur:
            cur.execute(
                "SELECT s.token, d.external_id, s.status, s.outcome, a.external_id"
                " FROM annotation_sessions s JOIN documents d ON d.id = s.document_id"
                " JOIN annotators a ON a.id = s.annotator_id"
            )
            sessions = cur.fetchall()
            cur.execute(
                "SELECT s.token, a.client_id, a.deleted_at IS NOT NULL FROM annotations a"
                " JOIN annotation_sessions s ON s.id = a.session_id"
            )
            annotations = cur.fetchall()
            cur.execute(
                "SELECT s.token, r.client_id, r.withdrawn_at IS NOT NULL"
                " FROM suggestion_rejections r JOIN annotation_sessions s ON s.id = r.session_id"
            )
            rejections = cur.fetchall()
            cur.execute("SELECT status, count(*) FROM analysis_results GROUP BY status")
            analyses = dict(cur.fetchall())
    finally:
        conn.close()
    return {
        "sessions": sessions,
        "annotations": annotations,
        "rejections": rejections,
        "analyses": analyses,
    }


def busy_at(workers: list[Worker], moment: float) -> int:
    """Workers who had arrived and not yet finished at `moment` (run seconds)."""
    return sum(
        w.arrival <= moment and (w.finished_at is None or w.finished_at > moment) for w in workers
    )


def report(run: Run, workers: list[Worker], stored: dict, codes: dict[str, str]) -> bool:
    """Print the figures; True when every target is met."""
    exact = True
    print("\ncompletion codes per outcome (expected: the taxonomy's study.completion):")
    for outcome in ("completed", "failed_training", "no_consent"):
        planned = [w for w in workers if w.plan == outcome]
        right = sum(w.code == codes[outcome] for w in planned)
        wrong = Counter(w.code for w in planned if w.code != codes[outcome])
        exact &= right == len(planned)
        print(
            f"  {outcome:<16} expected {len(planned):4} x {codes[outcome]}, got {right:4}"
            + (f"; other codes {dict(wrong)}" if wrong else "")
        )
    by_token = {row[0]: row for row in stored["sessions"]}
    outcome_wrong = sum(
        1 for w in workers if w.token not in by_token or by_token[w.token][3] != w.plan
    )
    per_worker = Counter(row[4] for row in stored["sessions"])
    extra_sessions = sum(n - 1 for n in per_worker.values())
    exact &= outcome_wrong == 0 and extra_sessions == 0 and len(per_worker) == len(workers)
    print(
        f"sessions: {len(stored['sessions'])} for {len(workers)} workers ({extra_sessions} "
        f"beyond one per worker); stored outcome not the planned one: {outcome_wrong}"
    )
    held = Counter(row[1] for row in stored["sessions"] if row[2] != "abandoned")
    documents = {row[1] for row in stored["sessions"]}
    over, spread = quota_report({d: held.get(d, 0) for d in documents}, QUOTA)
    exact &= not over
    print(
        f"quotas: {len(over)} documents over {QUOTA} places{' ' + str(over[:5]) if over else ''};"
        f" documents by places held at the end {dict(sorted(spread.items()))}"
    )
    saves = reconcile(
        {w.token: w.saved for w in workers},
        {w.token: w.removed for w in workers},
        stored["annotations"],
    )
    rejections = reconcile({w.token: w.rejected for w in workers}, {}, stored["rejections"])
    exact &= not (saves.lost or saves.duplicated or saves.removal_wrong)
    exact &= not (rejections.lost or rejections.duplicated)
    print(
        f"saves: acknowledged {saves.acknowledged}, lost {saves.lost}, duplicated "
        f"{saves.duplicated}, stored but never acknowledged {saves.unacknowledged}, "
        f"removed state wrong {saves.removal_wrong}; suggestion rejections: acknowledged "
        f"{rejections.acknowledged}, lost {rejections.lost}, duplicated {rejections.duplicated}"
    )
    gave_up = [w for w in workers if w.gave_up]
    exact &= not gave_up and not run.faults_failed
    print(f"workers who gave up: {len(gave_up)}; faults that failed: {run.faults_failed or 0}")
    for worker in gave_up[:5]:
        print(f"  worker {worker.index} ({worker.plan}): {worker.gave_up}")
    print(f"analysis results (γ the dashboard asked for): {stored['analyses'] or 'none'}")
    print("\nlatency per request kind, ms (answered requests; windows:", end=" ")
    print(", ".join(f"{a:.0f}-{b:.0f} s" for a, b in run.ledger.windows) or "none", end=")\n")
    columns = f"{'p50':>6} {'p99':>6}"
    print(f"  {'kind':<12} {'outside: n':>11} {columns}   {'inside: n':>10} {columns}")
    figures = run.ledger.figures()
    fast = True
    for kind in [k for k in KINDS if k in figures] + sorted(set(figures) - set(KINDS)):
        (n_out, p50_out, p99_out), (n_in, p50_in, p99_in) = (
            figures[kind]["outside"],
            figures[kind]["inside"],
        )
        fast &= not n_out or p99_out < STEP_P99_TARGET_MS or kind not in KINDS
        print(
            f"  {kind:<12} {n_out:>11} {p50_out:>6.0f} {p99_out:>6.0f}   "
            f"{n_in:>10} {p50_in:>6.0f} {p99_in:>6.0f}".replace("nan", "  - ")
        )
    slowest = sorted(
        (r for r in run.ledger.requests if run.ledger.inside(r)), key=lambda r: -r.seconds
    )[:5]
    if slowest:
        print(
            "slowest inside the windows: "
            + ", ".join(
                f"{r.kind} at {r.started:.1f} s: {r.seconds * 1000:.0f} ms" for r in slowest
            )
        )
    started = [r.started for r in run.ledger.requests]
    busiest = max(Counter(int(t // 30) for t in started).values(), default=0) / 30
    peak = max((busy_at(workers, t) for t in started[::50]), default=0)
    print(
        f"requests: {len(started)} in {run.clock():.0f} s; busiest 30 s: {busiest:.1f} "
        f"requests/s; most workers in the study at once: {peak}"
    )
    errors = run.ledger.errors_by_kind()
    print(f"errors by kind: {sum(errors.values())}")
    for (kind, where, error), count in sorted(errors.items()):
        print(f"  {kind:<12} {where:<8} {error:<30} {count}")
    print(
        f"\ntarget: every code, session, quota and save exact: {'yes' if exact else 'NO'}; "
        f"p99 < {STEP_P99_TARGET_MS} ms per kind outside the fault windows: "
        f"{'yes' if fast else 'NO'}"
    )
    return exact and fast


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--workers", type=int, default=600, help="simulated Prolific workers")
    parser.add_argument(
        "--arrival-minutes", type=float, default=10, help="the Poisson arrivals' window"
    )
    parser.add_argument(
        "--task-minutes", type=float, default=5, help="a task's length (compressed)"
    )
    parser.add_argument("--no-faults", action="store_true", help="no server kill, no restart")
    parser.add_argument(
        "--seed", type=int, default=31, help="arrivals, outcomes and texts; same seed, same plan"
    )
    args = parser.parse_args(argv)
    if not 1 <= args.workers <= 250 * 250:
        parser.error("--workers: 1 to 62500")
    rng = random.Random(args.seed)
    documents = math.ceil(args.workers / QUOTA)
    arrivals = poisson_arrivals(args.workers, args.arrival_minutes * 60, rng)
    plans = plan_outcomes(args.workers, SHARES, rng)
    workers = [
        Worker(i, plan, at) for i, (plan, at) in enumerate(zip(plans, arrivals, strict=True))
    ]
    compression = REAL_TASK_MINUTES / args.task_minutes
    print(
        f"study_rehearsal: {args.workers} workers over {args.arrival_minutes:g} min (Poisson), "
        f"tasks of {args.task_minutes:g} min (compression {compression:.1f}x), {documents} "
        f"documents x {QUOTA} places, faults {'off' if args.no_faults else 'on'}; "
        f"{os.cpu_count()} cores",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="falte-rehearsal-") as folder:
        folder = Path(folder)
        taxonomy, documents_path, suggestions_path = write_study(folder, documents, rng)
        codes = expected_codes(taxonomy)
        with private_cluster(free_port(), {"max_connections": "200"}) as cluster:
            url = create_database("falte_rehearsal", cluster.admin_url)
            seed(url, taxonomy, documents_path, suggestions_path)
            redis_port = free_port()
            redis_server = start_redis(redis_port)
            stack = Stack(
                url, taxonomy, f"redis://127.0.0.1:{redis_port}/0", [free_port(), free_port()]
            )
            stack.cluster = cluster
            queue_worker = nginx = None
            try:
                stack.servers = [stack.start_server(0), stack.start_server(1)]
                queue_worker = subprocess.Popen(
                    [sys.executable, "-m", "flask", "--app", "app", "analysis-worker"],
                    cwd=ROOT,
                    env={
                        **os.environ,
                        **stack.server_env(),
                        "APP_ENV": "development",
                        "DATABASE_URL": url,
                        "QUEUE_URL": stack.redis_url,
                    },
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
                port = free_port()
                upstreams = [f"127.0.0.1:{p}" for p in stack.ports]
                nginx = start_nginx(folder, compose_config(folder, port, upstreams), port)
                run = Run(port, compression, args.task_minutes * 60)
                simulate(run, workers, stack, faults=not args.no_faults)
                print(f"[{run.clock():5.0f} s] every worker done", flush=True)
                wait_for_analyses(url, 60)
                stored = read_database(url)
            finally:
                if nginx is not None:
                    stop_nginx(nginx)
                for server in stack.servers:
                    stop(server)
                if queue_worker is not None:
                    stop(queue_worker)
                stop_redis(redis_server)
    met = report(run, workers, stored, codes)
    print("targets met" if met else "TARGETS NOT MET")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
