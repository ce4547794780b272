"""The analysis queue's settings and kinds (app.jobs), without Redis or a database:
which URL is the queue, how a rediss:// URL connects, job timeouts, keys and versions."""

from __future__ import annotations

import multiprocessing
import ssl
import time

import pytest
import redis
from rq.timeouts import JobTimeoutException, UnixSignalDeathPenalty

from app.adjudication.gamma_cache import ALGORITHM, GAMMA
from app.jobs.kinds import KINDS, Kind, register
from app.jobs.limits import Limits
from app.jobs.queue import connection, job_id, job_timeout, queue_url, under_limits


def _nothing(job, limits):
    return {}


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ({}, None),  # make run: no Redis anywhere, in-process
        ({"RATELIMIT_STORAGE_URI": "memory://"}, None),
        ({"RATELIMIT_STORAGE_URI": "redis://cache:6379/0"}, "redis://cache:6379/0"),
        (
            {"RATELIMIT_STORAGE_URI": "rediss://:pw@h.example:6380?ssl_cert_reqs=none"},
            "rediss://:pw@h.example:6380?ssl_cert_reqs=none",
        ),
        (
            {"QUEUE_URL": "redis://q:6379/2", "RATELIMIT_STORAGE_URI": "redis://r/0"},
            "redis://q:6379/2",
        ),
        ({"QUEUE_URL": "inprocess", "RATELIMIT_STORAGE_URI": "redis://r/0"}, None),
    ],
)
def test_the_queue_is_queue_url_else_the_rate_limits_redis(config, expected):
    assert queue_url(config) == expected


def test_a_rediss_url_connects_as_the_rate_limits_do_with_herokus_certificate_setting():
    client = connection("rediss://:secret@redis.example:6380/0?ssl_cert_reqs=none")
    kwargs = client.connection_pool.connection_kwargs
    assert client.connection_pool.connection_class is redis.SSLConnection
    assert kwargs["ssl_cert_reqs"] in ("none", ssl.CERT_NONE)
    assert (kwargs["host"], kwargs["port"], kwargs["password"]) == ("redis.example", 6380, "secret")
    assert kwargs["socket_timeout"] == 2  # a page never waits long for the queue
    worker = connection("rediss://:secret@redis.example:6380/0?ssl_cert_reqs=none", worker=True)
    assert worker.connection_pool.connection_kwargs.get("socket_timeout") is None


def test_job_timeouts_follow_the_time_limit():
    limited = Kind("self-limited", "v1", _nothing, limited=True)
    plain = Kind("plain", "v1", _nothing)
    assert job_timeout(plain, Limits(60, 1024)) == 60
    assert job_timeout(limited, Limits(60, 1024)) == 180  # the child's limit and a margin
    assert job_timeout(plain, Limits(0, 0)) == -1  # no limit
    assert job_id(plain, "ab" * 32) == f"analysis-plain-{'ab' * 32}"


def test_a_key_changes_with_content_parameters_and_version():
    one = Kind("figure", "v1", _nothing)
    assert one.key({"a": 1}, {"n": 2}) == one.key({"a": 1}, {"n": 2})
    assert one.key({"a": 1}, {"n": 2}) != one.key({"a": 2}, {"n": 2})
    assert one.key({"a": 1}, {"n": 2}) != one.key({"a": 1}, {"n": 3})
    assert one.key({"a": 1}) != Kind("figure", "v2", _nothing).key({"a": 1})


def test_registering_is_one_line_and_a_name_is_registered_once():
    kind = register("test_kind_once", "v1", _nothing)
    try:
        assert KINDS["test_kind_once"] is kind
        assert register("test_kind_once", "v1", _nothing) == kind  # a module imported again
        with pytest.raises(ValueError, match="registered twice"):
            register("test_kind_once", "v2", _nothing)
        with pytest.raises(ValueError, match="at most 40"):
            register("no spaces allowed", "v1", _nothing)
    finally:
        KINDS.pop("test_kind_once")


def test_the_gamma_kind_is_registered_with_its_algorithm_version():
    assert KINDS["gamma"] is GAMMA and GAMMA.version == ALGORITHM and GAMMA.limited


def _allocates(job, limits):
    block = bytearray(job["megabytes"] * 1024 * 1024)  # more than the limit allows
    return {"size": len(block)}


def _sleeps(job, limits):
    time.sleep(job["seconds"])
    return {"slept": job["seconds"]}


def _in_a_work_horse(kind: Kind, job: dict, limits: Limits, answers) -> None:
    # As RQ's work horse runs a job: a forked process, RQ's timeout around the job.
    with UnixSignalDeathPenalty(job_timeout(kind, limits), JobTimeoutException):
        answers.put(under_limits(kind, job, limits))


def _run_forked(kind: Kind, job: dict, limits: Limits) -> dict:
    context = multiprocessing.get_context("fork")
    answers = context.Queue()
    process = context.Process(target=_in_a_work_horse, args=(kind, job, limits, answers))
    process.start()
    try:
        return answers.get(timeout=30)
    finally:
        process.join(30)


def test_in_the_work_horse_a_kind_runs_under_the_memory_limit():
    kind = Kind("test_memory", "v1", _allocates)
    assert _run_forked(kind, {"megabytes": 2048}, Limits(30, 300)) == {"skipped": "memory"}
    assert _run_forked(kind, {"megabytes": 16}, Limits(30, 0)) == {"size": 16 * 1024 * 1024}


def test_in_the_work_horse_a_kind_runs_under_the_time_limit():
    kind = Kind("test_time", "v1", _sleeps)
    started = time.monotonic()
    assert _run_forked(kind, {"seconds": 20}, Limits(1, 0)) == {"skipped": "time"}
    assert time.monotonic() - started < 10
    assert _run_forked(kind, {"seconds": 0.1}, Limits(5, 0)) == {"slept": 0.1}
