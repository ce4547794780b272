"""The dashboard at scale (issue 31): the documents' table paged, sorted and filtered by
the server, and the study-level figures of a large study read from `analysis_results`,
never computed during the page."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from app.adjudication import gamma_cache
from app.core.extensions import db
from app.crowd.settings import study_settings
from app.jobs import queue as analysis_queue
from app.models import AnalysisResult, AnnotationSession, Document
from app.research import document_table, routes, study_figures
from app.research.dashboard import load_study
from app.taxonomy import current_taxonomy
from tests.support.synthetic_study import seed_study

ROW = re.compile(r'<tr data-document="([^"]+)">')


def rows(html: str) -> list[str]:
    """The external ids of the documents' table's rows, in order."""
    return ROW.findall(html)


def page(client, query: str = "") -> str:
    response = client.get("/research/" + query)
    assert response.status_code == 200, response.status_code
    return response.get_data(as_text=True)


@pytest.fixture
def study(app):
    """120 documents (3 attention checks) x 3 annotators, 2 annotations each: every fifth
    document has one active session."""
    seed_study(120, 3, 2, categories=current_taxonomy().keys, check_documents=3)
    db.session.commit()
    return {
        d.external_id: d
        for d in db.session.scalars(db.select(Document).order_by(Document.external_id))
    }


def statuses() -> dict[str, Counter]:
    found: dict[str, Counter] = {}
    query = db.select(Document.external_id, AnnotationSession.status).join(
        AnnotationSession, AnnotationSession.document_id == Document.id
    )
    for external_id, status in db.session.execute(query):
        found.setdefault(external_id, Counter())[status] += 1
    return found


def test_every_document_is_on_exactly_one_page(researcher_client, study):
    first = page(researcher_client)
    assert len(rows(first)) == document_table.PAGE_SIZE
    assert 'aria-label="Documents pages"' in first
    assert 'aria-current="page"' in first
    seen = []
    for number in (1, 2, 3):
        seen += rows(page(researcher_client, f"?page={number}"))
    assert len(seen) == len(set(seen)) == 120
    assert seen == sorted(study)  # by document id, ascending: the default order
    assert "Documents 101–120 of 120" in page(researcher_client, "?page=3")


def test_sorted_by_a_count_both_ways(researcher_client, study):
    counts = statuses()
    expected = sorted(study, key=lambda e: (-counts[e]["active"], e))
    html = page(researcher_client, "?sort=-active")
    assert rows(html) == expected[:50]
    assert 'aria-sort="descending"' in html
    ascending = page(researcher_client, "?sort=active&page=3")
    assert rows(ascending) == sorted(study, key=lambda e: (counts[e]["active"], e))[100:]
    by_annotations = rows(page(researcher_client, "?sort=-annotations"))
    assert len(by_annotations) == 50 and len(set(by_annotations)) == 50


def test_filters_and_search(researcher_client, study):
    counts = statuses()
    checks = [e for e, d in study.items() if d.gold]
    assert rows(page(researcher_client, "?filter=checks")) == sorted(checks)
    active = sorted(e for e in study if counts[e]["active"])
    assert rows(page(researcher_client, "?filter=in-progress")) == active[:50]
    # Places as the dashboard's Python rule counts them (app.crowd.assignment.claims).
    settings = study_settings()
    whole = load_study(settings)
    quota = settings.annotators_per_document
    regular = [d for d in whole.documents if not d.is_check]
    open_ids = sorted(d.external_id for d in regular if d.occupied < quota)
    full_ids = sorted(d.external_id for d in regular if d.occupied >= quota)
    assert open_ids and full_ids
    assert rows(page(researcher_client, "?filter=open")) == open_ids[:50]
    assert rows(page(researcher_client, "?filter=full")) == full_ids[:50]
    assert "No document matches this filter." in page(researcher_client, "?filter=over-quota")
    assert rows(page(researcher_client, "?q=DOC-0011")) == [
        e for e in sorted(study) if "doc-0011" in e
    ]
    assert rows(page(researcher_client, "?q=%25")) == []  # a LIKE wildcard is a character


@pytest.mark.parametrize(
    "query, note",
    [
        ("?page=abc", "page must be a whole number"),
        ("?page=0", "page must be a whole number"),
        ("?page=-3", "page must be a whole number"),
        ("?page=99999999999", "page must be a whole number"),
        ("?page=9", "there are 3 pages: showing the last"),
        ("?sort=title;drop", "sort must be one of"),
        ("?sort=--places", "sort must be one of"),
        ("?filter=everything", "filter must be one of"),
        ("?q=" + "x" * 201, "the search is at most 200 characters"),
    ],
)
def test_a_bad_parameter_is_ignored_with_a_note(researcher_client, study, query, note):
    html = page(researcher_client, query)
    assert "data-table-note" in html and note in html
    assert rows(html)  # still a table


def test_a_nul_in_the_search_is_a_clear_400(researcher_client, study):
    response = researcher_client.get("/research/?q=a%00b")  # the request guards' answer
    assert response.status_code == 400


def test_links_keep_the_page_address_and_the_switch(researcher_client, study):
    html = page(researcher_client, "?include_flagged=1&q=doc&sort=-places&page=2")
    assert 'href="/research/?include_flagged=1&amp;sort=-places&amp;q=doc"' in html  # page 1
    assert 'href="/research/?include_flagged=1&amp;page=3&amp;sort=-places&amp;q=doc"' in html
    # The sorted column's header flips its direction, back on page 1.
    assert 'href="/research/?include_flagged=1&amp;sort=places&amp;q=doc"' in html


@pytest.fixture
def large(monkeypatch, study):
    """The study counts as large: its study-level figures come from analysis_results.
    The queue's jobs are kept, not run, so that what the page computes shows."""
    monkeypatch.setattr(study_figures, "FIGURES_QUEUED_FROM", 100)
    asked: list = []
    monkeypatch.setattr(analysis_queue, "_in_process", lambda app, jobs: asked.extend(jobs))
    return asked


def test_a_large_study_page_computes_no_study_figure(researcher_client, monkeypatch, large):
    whole_loads, gamma_runs = [], []
    real_load = routes.load_study

    def load(*args, **kwargs):
        whole_loads.append(kwargs.get("document_ids") is None)
        return real_load(*args, **kwargs)

    monkeypatch.setattr(routes, "load_study", load)
    monkeypatch.setattr(gamma_cache, "compute", lambda *a, **k: gamma_runs.append(1))
    html = page(researcher_client)
    assert whole_loads == [False]  # one page of documents, never the whole study
    assert gamma_runs == []
    assert 'data-figures="pending"' in html
    assert html.count(">pending</span>") >= 4  # the four study figures of the summary
    kinds = Counter(kind.name for kind, _key, _job in large)
    # Gamma asked for the page's rows only: those whose cell says pending.
    pending_cells = html.count('<span class="muted">pending</span></td><td class="num">')
    assert kinds["dashboard_figures"] == 1
    assert 0 < kinds["gamma"] == pending_cells <= document_table.PAGE_SIZE
    rows_pending = db.session.scalars(
        db.select(AnalysisResult.status).where(AnalysisResult.kind == "dashboard_figures")
    ).all()
    assert rows_pending == ["pending"]
    # A second view asks for nothing new: the key is pending already.
    large.clear()
    page(researcher_client)
    assert [k.name for k, _, _ in large if k.name == "dashboard_figures"] == []


def test_a_large_study_shows_the_stored_figures(researcher_client, large, app):
    small_view = page(researcher_client)  # asks for the figures
    assert 'data-figures="pending"' in small_view
    for kind, key, job in [j for j in large if j[0].name == "dashboard_figures"]:
        assert analysis_queue.compute_and_store(kind, key, job, "test-token") == "done"
    html = page(researcher_client)
    assert "data-figures" not in html  # current: neither pending nor stale
    assert 'data-figure="gamma"' in html and "mean BooookScore" in html
    # Rendered by the job, outside any request: the sections' links lead to the study's
    # own downloads (the job used to fail building them).
    assert 'href="/research/studies/default/export/paragraphs.csv"' in html
    # The same figures as a study computed during the page (below the threshold).
    study_figures.FIGURES_QUEUED_FROM = 10**9
    try:
        computed = page(researcher_client)
    finally:
        study_figures.FIGURES_QUEUED_FROM = 100
    summary = re.compile(r'<section class="stats".*?</section>', re.S)
    assert summary.search(html).group(0) == summary.search(computed).group(0)
    # A new submission changes the fingerprint: the stored figures show as stale.
    submit_one_active()
    assert 'data-figures="stale"' in page(researcher_client)


def submit_one_active() -> None:
    session = db.session.scalars(
        db.select(AnnotationSession).where(AnnotationSession.status == "active")
    ).first()
    session.status, session.submitted_at = "submitted", session.last_seen_at
    db.session.commit()


def test_one_computation_at_a_time(researcher_client, large):
    page(researcher_client)
    submit_one_active()  # a new fingerprint while the first computation waits
    large.clear()
    page(researcher_client)
    assert [k for k, _, _ in large if k.name == "dashboard_figures"] == []
    keys = db.session.scalars(
        db.select(AnalysisResult.key).where(AnalysisResult.kind == "dashboard_figures")
    ).all()
    assert len(keys) == 1


def test_figures_given_up_are_said(researcher_client, large):
    page(researcher_client)
    db.session.execute(  # the worker gave it up over the time limit
        db.update(AnalysisResult)
        .where(AnalysisResult.kind == "dashboard_figures")
        .values(status="skipped", value={"skipped": "time", "limits": [60, 1024]})
    )
    db.session.commit()
    html = page(researcher_client)
    assert 'data-figures="skipped"' in html and "ANALYSIS_TIME_LIMIT" in html
