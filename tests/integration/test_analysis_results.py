"""Analysis results in the database (app.jobs, issue 31 point 1), on SQLite and
PostgreSQL: one row per key, claimed once; a new algorithm version never reads an old
value; another server (or a restart) reads what one computed; a job that died is claimed
again by its retry, a few times at most; a skip is computed again only under larger
limits; without Redis the pages' jobs run in a background thread."""

from __future__ import annotations

import json
import re
import time
from datetime import timedelta

import pytest

from app import create_app
from app.adjudication import gamma_cache
from app.core.extensions import db
from app.jobs import queue as analysis_queue
from app.jobs import results
from app.jobs.kinds import Kind
from app.jobs.limits import Limits
from app.models import AnalysisResult, Researcher
from app.research import agreement_figures
from tests.support.adjudication import (
    SECOND_MARKS,
    SECOND_PARAGRAPHS,
    seed_adjudication_document,
    seed_document,
)
from tests.support.apps import (
    app_in_context,
    dispose_engines,
    make_test_config,
    researcher_page,
)
from tests.support.servers import free_port

LIMITS = Limits(60, 1024)
COMPUTED: list[dict] = []


def _square(job: dict, limits: Limits) -> dict:
    COMPUTED.append(job)
    return {"square": job["n"] ** 2}


FIGURE = Kind("test_square", "v1", _square)


@pytest.fixture(autouse=True)
def _quiet(app):
    analysis_queue.wait_for_background()  # no earlier test's job still running
    COMPUTED.clear()


def _row(key: str, kind: Kind = FIGURE) -> AnalysisResult:
    db.session.expire_all()
    return db.session.get(AnalysisResult, (kind.name, key))


def test_two_servers_asking_at_once_insert_one_pending_row_and_one_enqueues(app):
    key = FIGURE.key({"n": 3})
    first = results.request(FIGURE, [key], {}, LIMITS)
    second = results.request(FIGURE, [key], {}, LIMITS)  # read before the first inserted
    assert (first, second) == ([key], [])
    found = results.read(FIGURE, [key])
    assert results.request(FIGURE, [key], found, LIMITS) == []  # pending, within its lease
    assert _row(key).status == "pending" and _row(key).attempts == 0


def test_a_key_is_claimed_once_and_its_value_read_by_everyone(app):
    key = FIGURE.key({"n": 3})
    results.request(FIGURE, [key], {}, LIMITS)
    assert results.claim(FIGURE, key, "job-a", LIMITS)
    assert not results.claim(FIGURE, key, "job-b", LIMITS)  # running under a live claim
    assert not results.store(FIGURE, key, "job-b", {"square": 0}, LIMITS)
    assert results.store(FIGURE, key, "job-a", {"square": 9}, LIMITS)
    assert not results.claim(FIGURE, key, "job-c", LIMITS)  # done
    row = results.read(FIGURE, [key])[key]
    assert (row.status, row.value, row.attempts) == ("done", {"square": 9}, 1)
    assert row.computed_at is not None and results.usable(row, LIMITS)


def test_a_new_algorithm_version_never_reads_an_old_value(app):
    key = FIGURE.key({"n": 3})
    results.request(FIGURE, [key], {}, LIMITS)
    results.claim(FIGURE, key, "job-a", LIMITS)
    results.store(FIGURE, key, "job-a", {"square": 9}, LIMITS)
    changed_rule = Kind(FIGURE.name, "v2", _square)
    assert results.read(changed_rule, [key]) == {}  # even under the same key
    assert changed_rule.key({"n": 3}) != key  # and a new version is a new key anyway
    assert not results.claim(changed_rule, key, "job-b", LIMITS, retake=True)
    assert _row(key).value == {"square": 9}


def test_the_gamma_key_changes_with_the_algorithm(app, monkeypatch):
    units, annotators = (
        [gamma_cache.Unit("a", 0, 5, "x"), gamma_cache.Unit("b", 0, 5, "x")],
        [
            "a",
            "b",
        ],
    )
    before = gamma_cache.content_key(units, annotators)
    monkeypatch.setattr(gamma_cache, "ALGORITHM", gamma_cache.ALGORITHM + "/changed")
    assert gamma_cache.content_key(units, annotators) != before


def test_a_retry_of_a_dead_job_claims_again_a_few_times_at_most(app):
    key = FIGURE.key({"n": 4})
    results.request(FIGURE, [key], {}, LIMITS)
    for attempt in range(1, results.MAX_ATTEMPTS + 1):
        assert results.claim(FIGURE, key, "analysis-job", LIMITS), attempt  # RQ's retry
    assert not results.claim(FIGURE, key, "analysis-job", LIMITS)
    # Its last claim outlived the lease: the next page gives up on it (error, not pending
    # for ever) instead of enqueueing it again.
    row = _row(key)
    row.started_at = row.started_at - results.running_lease(LIMITS) - timedelta(seconds=1)
    db.session.commit()
    assert results.request(FIGURE, [key], results.read(FIGURE, [key]), LIMITS) == []
    assert _row(key).status == "error" and "gave up after 3 attempts" in _row(key).error


def test_a_pending_key_whose_job_was_lost_is_asked_for_again_by_one_server(app):
    key = FIGURE.key({"n": 5})
    results.request(FIGURE, [key], {}, LIMITS)
    row = _row(key)
    row.requested_at = row.requested_at - results.PENDING_LEASE - timedelta(seconds=1)
    db.session.commit()
    seen = results.read(FIGURE, [key])  # two servers read the stale row
    assert results.request(FIGURE, [key], seen, LIMITS) == [key]
    assert results.request(FIGURE, [key], seen, LIMITS) == []


def test_a_skip_is_kept_under_the_same_limits_and_retaken_under_larger_ones(app):
    key = FIGURE.key({"n": 6})
    small = Limits(2, 1024)
    results.request(FIGURE, [key], {}, small)
    results.claim(FIGURE, key, "job-a", small)
    results.store(FIGURE, key, "job-a", {"skipped": "time"}, small)
    row = results.read(FIGURE, [key])[key]
    assert (row.status, row.value) == ("skipped", {"skipped": "time", "limits": [2, 1024]})
    assert results.usable(row, small) and results.request(FIGURE, [key], {key: row}, small) == []
    larger = Limits(5, 1024)
    assert not results.usable(row, larger)
    assert results.request(FIGURE, [key], {key: row}, larger) == [key]
    assert _row(key).status == "pending" and _row(key).attempts == 0


def test_a_command_computes_what_is_missing_itself_and_nothing_twice(app):
    key = FIGURE.key({"n": 7})
    first = analysis_queue.compute_now(FIGURE, key, {"n": 7})
    again = analysis_queue.compute_now(FIGURE, key, {"n": 7})
    assert first.value == again.value == {"square": 49}
    assert COMPUTED == [{"n": 7}] and _row(key).attempts == 1


def test_a_computation_that_raises_is_stored_as_an_error_not_retried(app):
    def broken(job, limits):
        raise ValueError("no such figure")

    kind = Kind("test_broken", "v1", broken)
    key = kind.key({"n": 1})
    results.request(kind, [key], {}, LIMITS)
    assert analysis_queue.compute_and_store(kind, key, {"n": 1}, "job-a") == "error"
    row = _row(key, kind)
    assert row.status == "error" and row.error == "ValueError: no such figure"


def test_without_redis_pages_compute_in_the_background_and_another_server_reads_it(
    app, database_uri, researcher
):
    seed_adjudication_document()
    with gamma_cache._runner_lock:  # the background thread waits before its computation
        page = researcher_page(app, researcher.id)
    assert "γ is being computed for 1 document" in page
    assert re.search(r"Analyses waiting: gamma (1 queued|0 queued, 1 running) \(oldest", page)
    assert "Computed in the background by this server" in page
    assert "No analysis worker" not in page  # in-process: no worker to wait for
    analysis_queue.wait_for_background()
    [row] = db.session.scalars(db.select(AnalysisResult)).all()
    assert (row.kind, row.status, row.attempts, row.version) == (
        "gamma",
        "done",
        1,
        gamma_cache.ALGORITHM,
    )
    assert row.approximate is False and row.value["method"] == "exact"
    # Another server on the same database, or this one after a restart: read, not computed.
    other = create_app(make_test_config(database_uri))
    with other.app_context():
        page = researcher_page(other, researcher.id)
        assert "being computed" not in page and "Analyses waiting" not in page
        db.session.remove()
        dispose_engines()
    analysis_queue.wait_for_background()
    db.session.expire_all()
    assert db.session.scalars(db.select(AnalysisResult.attempts)).all() == [1]
    assert db.session.scalar(db.select(db.func.count()).select_from(Researcher)) == 1


def test_a_large_studys_intervals_are_jobs_pages_show_pending_and_commands_compute(
    app, runner, researcher, monkeypatch
):
    monkeypatch.setattr(agreement_figures, "QUEUED_INTERVALS_FROM", 2)
    seed_adjudication_document()
    seed_document("second", SECOND_PARAGRAPHS, SECOND_MARKS)
    report = json.loads(runner.invoke(args=["study-report", "--format", "json"]).stdout)
    f1 = report["agreement"]["mean_pairwise_span_f1"]
    assert f1["ci95"] is not None  # the command computed it (and stored it)
    stored = db.session.scalars(
        db.select(AnalysisResult).filter_by(kind="bootstrap_ci", status="done")
    ).all()
    # Five figures; two with the same values (span F1 with and without categories here)
    # share one row, the key being their content.
    assert len(stored) == 4
    db.session.execute(db.delete(AnalysisResult).where(AnalysisResult.kind == "bootstrap_ci"))
    db.session.commit()
    with gamma_cache._runner_lock:  # hold the background computation back
        page = researcher_page(app, researcher.id)
    row = re.search(r'<tr data-figure="mean_pairwise_span_f1">.*?</tr>', page, re.S).group(0)
    assert '<span class="muted">pending</span>' in row and " to " not in row
    analysis_queue.wait_for_background()
    page = researcher_page(app, researcher.id)
    row = re.search(r'<tr data-figure="mean_pairwise_span_f1">.*?</tr>', page, re.S).group(0)
    low, high = f1["ci95"]  # the page's job and the command's agree
    assert f"{low:.1f}% to {high:.1f}%" in row


def test_the_worker_command_refuses_without_a_queue_and_names_a_silent_one(app, runner):
    refused = runner.invoke(args=["analysis-worker"])
    assert refused.exit_code == 1
    assert "No queue: set QUEUE_URL" in refused.output
    app.config["QUEUE_URL"] = f"redis://:hunter2@127.0.0.1:{free_port()}/0"
    silent = runner.invoke(args=["analysis-worker", "--burst"])
    assert silent.exit_code == 1
    assert "does not answer" in silent.output and "hunter2" not in silent.output


def test_a_row_read_again_shows_what_another_process_stored_meanwhile(app):
    key = FIGURE.key({"n": 8})
    results.request(FIGURE, [key], {}, LIMITS)
    assert results.read(FIGURE, [key])[key].status == "pending"
    with db.engine.begin() as other:  # another process's connection
        other.execute(
            db.update(AnalysisResult)
            .where(AnalysisResult.key == key)
            .values(status="done", value={"square": 64})
        )
    again = results.read(FIGURE, [key])[key]  # a command polling for a worker's result
    assert (again.status, again.value) == ("done", {"square": 64})


def test_the_waiting_line_leaves_out_what_was_abandoned(app):
    needed, abandoned = FIGURE.key({"n": 9}), FIGURE.key({"n": 10})
    results.request(FIGURE, [needed, abandoned], {}, LIMITS)
    row = _row(abandoned)  # its content changed: no page asks for it again
    row.requested_at = row.requested_at - results.PENDING_LEASE - timedelta(seconds=1)
    db.session.commit()
    [line] = results.waiting(LIMITS)
    assert (line.kind, line.pending, line.running) == (FIGURE.name, 1, 0)
    results.claim(FIGURE, needed, "job-a", LIMITS)
    [line] = results.waiting(LIMITS)
    assert (line.pending, line.running) == (0, 1)


def _slow(job: dict, limits: Limits) -> dict:
    time.sleep(0.2)
    COMPUTED.append(job)
    return {"n": job["n"]}


SLOW = Kind("test_slow", "v1", _slow)


def test_a_tests_background_jobs_never_write_into_the_next_tests_database(database_uri):
    """The CI failure of test_figures_given_up_are_said: an earlier test's background
    thread stored results into the next test's database (the same PostgreSQL database,
    emptied between tests) and changed its study's fingerprint. The app fixture's
    teardown drops what waits and waits for what runs."""
    fixture = app_in_context(database_uri)
    first = next(fixture)
    with first.test_request_context():
        analysis_queue.submit(SLOW, {f"k{n}": {"n": n} for n in range(10)})
    assert analysis_queue._local.unfinished_tasks > 0  # in the background thread
    with pytest.raises(StopIteration):
        next(fixture)  # the teardown
    assert analysis_queue._local.unfinished_tasks == 0
    computed = len(COMPUTED)
    time.sleep(0.5)
    assert len(COMPUTED) == computed <= 2  # nothing ran after the teardown
