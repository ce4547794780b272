"""Worker data cannot stall the analyses (issue 26 point 4), and gamma's Monte-Carlo error
is reported (issue 28 point 8), through `flask study-report` and `flask agreement --gamma`
on SQLite and PostgreSQL.

The attack: two fake workers each saved 20 identical annotations and submitted (the save
API now refuses that, so the rows are written directly here, as from before the fix), and
gamma's exact alignment exploded. Identical units of one annotator now count once; a
document whose gamma still breaks ANALYSIS_TIME_LIMIT is reported in
`agreement.gamma.skipped` instead of holding the command."""

from __future__ import annotations

import json
import re
import time

import pytest

from app.jobs import queue as analysis_queue
from tests.support.adjudication import seed_document

PARAGRAPHS = [
    "Anna met Bob at the old mill by the river, and nobody knew who Bob was at all then.",
    "Then Anna met Bob again at the mill. It rained all day and all night at the mill.",
]
FAKES = ("fake-1", "fake-2")


def _marks(copies: int) -> list[tuple]:
    """Each fake worker's spans, every one `copies` times."""
    spans = {
        "fake-1": [("new-person", (0, 9, 12)), ("ungrammatical", (1, 37, 52))],
        "fake-2": [("new-person", (0, 5, 12)), ("missing-info", (1, 0, 4))],
    }
    return [
        (name, category, span, None, None)
        for name, marks in spans.items()
        for category, span in marks
        for _ in range(copies)
    ]


def _hostile() -> list[tuple]:
    """Many overlapping, slightly shifted spans (no two identical): an exact alignment
    that grows without bound."""
    return [(name, "new-person", (0, i, i + 40), None, None) for name in FAKES for i in range(40)]


@pytest.fixture
def cache(app):
    """The app, no analysis job of an earlier test still running."""
    analysis_queue.wait_for_background()  # the previous test's jobs are done
    return app


def _json(runner, *args: str) -> dict:
    result = runner.invoke(args=[*args, "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout[result.stdout.index("{") :])


@pytest.mark.timeout(120)
def test_twenty_identical_annotations_per_worker_count_once(cache, runner):
    seed_document("copied", PARAGRAPHS, _marks(20), annotators=FAKES)
    seed_document("once", PARAGRAPHS, _marks(1), annotators=FAKES)
    started = time.monotonic()
    report = _json(runner, "study-report")
    assert time.monotonic() - started < 60
    gammas = {row["document_id"]: row["gamma"] for row in report["documents"]}
    assert gammas["copied"] is not None and gammas["copied"] == gammas["once"]
    figure = report["agreement"]["gamma"]
    assert figure["skipped"] == [] and figure["documents"] == 2
    assert figure["mc_se"] > 0 and "100 random continua" in figure["unit"]
    rows = _json(runner, "agreement", "--gamma")["documents"]
    assert [row["gamma"] for row in rows] == [gammas["copied"], gammas["once"]]


@pytest.mark.timeout(120)
def test_a_document_over_the_time_limit_is_reported_skipped(cache, runner):
    cache.config["ANALYSIS_TIME_LIMIT"] = 2
    seed_document("hostile", PARAGRAPHS, _hostile(), annotators=FAKES)
    seed_document("fine", PARAGRAPHS, _marks(1), annotators=FAKES)
    started = time.monotonic()
    report = _json(runner, "study-report")
    assert time.monotonic() - started < 60  # the limit, not the computation, decided
    figure = report["agreement"]["gamma"]
    assert figure["skipped"] == ["hostile"]
    assert figure["documents"] == 1 and figure["value"] is not None
    gammas = {row["document_id"]: row["gamma"] for row in report["documents"]}
    assert gammas["hostile"] is None and gammas["fine"] is not None
    table = runner.invoke(args=["study-report"]).stdout
    assert "skipped (over the analysis limits): hostile" in table
    assert re.search(r"gamma: [0-9.-]+ .*\(Monte-Carlo SE [0-9.]+\)", table)
    csv_text = runner.invoke(args=["study-report", "--format", "csv"]).stdout
    assert "agreement_skipped,gamma,,,hostile" in csv_text
    assert re.search(r"agreement_mc_se,gamma,,,[0-9.]+", csv_text)
    # The skip is remembered: the agreement command reports it at once, from the cache.
    started = time.monotonic()
    agreement = _json(runner, "agreement", "--gamma")
    assert time.monotonic() - started < 10
    assert agreement["agreement"]["gamma"]["skipped"] == ["hostile"]
    assert agreement["agreement"]["gamma"]["mc_se"] > 0
    table = runner.invoke(args=["agreement", "--gamma"]).output
    assert "skipped (over the analysis limits): hostile" in table
    # A larger limit computes it again (and skips it again, here, at 3 s).
    cache.config["ANALYSIS_TIME_LIMIT"] = 3
    started = time.monotonic()
    assert _json(runner, "agreement", "--gamma")["agreement"]["gamma"]["skipped"] == ["hostile"]
    assert time.monotonic() - started >= 3


def test_gamma_samples_is_a_setting(cache, runner):
    cache.config["GAMMA_SAMPLES"] = 20
    seed_document("once", PARAGRAPHS, _marks(1), annotators=FAKES)
    report = _json(runner, "agreement", "--gamma")
    assert report["samples"] == 20
    assert "chance from 20 seeded samples" in report["agreement"]["gamma"]["unit"]
    figure = _json(runner, "study-report")["agreement"]["gamma"]
    assert "20 random continua" in figure["unit"] and figure["mc_se"] > 0
