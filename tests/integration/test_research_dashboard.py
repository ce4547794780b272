"""The researcher console's pages: figures on a hand-checked study, constant query count,
study links, taxonomy preview."""

from __future__ import annotations

from datetime import timedelta

import pytest

from app.core.extensions import db
from app.crowd.settings import study_settings
from app.models import Annotation, AnnotationSession, Document, utcnow
from app.research.dashboard import load_study
from app.taxonomy import current_taxonomy
from tests.support.apps import log_in_directly
from tests.support.flagged import PARAGRAPHS, document
from tests.support.rows import add_span, direct_annotator
from tests.support.synthetic_study import count_statements, seed_study
from tests.support.taxonomies import taxonomy_variant

# Sentences: p0 = "Anna met Bob." (0-13) + "They talked." (14-26); p1 = "Then it rained." (0-15)


def add_session(document: Document, worker: str, status: str, spans=(), **fields):
    session = AnnotationSession(
        document_id=document.id,
        annotator_id=direct_annotator(worker).id,
        status=status,
        furthest=len(PARAGRAPHS) - 1 if status == "submitted" else 0,
        position=0,
        taxonomy_version="test",
        platform="direct",
        **fields,
    )
    db.session.add(session)
    db.session.flush()
    for index, (paragraph_id, start, end, category) in enumerate(spans):
        text = PARAGRAPHS[paragraph_id][start:end]
        client_id = f"00000000-0000-4000-8000-{session.id:06d}{index:06d}"
        add_span(session.id, paragraph_id, start, text, category, client_id=client_id)
    db.session.flush()
    return session


@pytest.fixture
def small_study(app):
    """One document read by two workers, one attention check, one stale active session."""
    doc = document("doc-a")
    # Worker A marks "Anna" (sentence 0) and "rained" (sentence 2).
    add_session(doc, "a", "submitted", [(0, 0, 4, "new-person"), (1, 8, 14, "missing-info")])
    # Worker B marks "Bob" (sentence 0) and "talked" (sentence 1); plus a removed one.
    b = add_session(doc, "b", "submitted", [(0, 9, 12, "new-person"), (0, 19, 25, "repetition")])
    add_span(b.id, 1, 0, "Then", "ungrammatical", deleted_at=utcnow())
    add_session(doc, "c", "active", last_seen_at=utcnow() - timedelta(days=1))
    check = document(
        "check-1", gold=[{"paragraph_id": 0, "start": 0, "end": 4, "category": "new-person"}]
    )
    add_session(check, "a", "submitted", is_attention_check=True, spans=[(1, 0, 4, "new-person")])
    add_session(check, "b", "submitted", is_attention_check=True, spans=[(0, 1, 4, "missing-info")])
    db.session.commit()
    return doc


def test_load_study_figures_by_hand(app, small_study):
    # Both workers are flagged by check-1: the figures count them only when asked.
    assert load_study(study_settings()).by_id[small_study.id].coherence is None
    study = load_study(study_settings(), include_flagged=True)
    doc = study.by_id[small_study.id]
    assert len(doc.sentences) == 3
    assert doc.count("submitted") == 2
    assert doc.count("abandoned") == 1  # stale active shows as abandoned
    assert doc.count("active") == 0
    # A labels [1, 0, 1], B labels [1, 1, 0]: scores 1/3 and 1/3.
    assert doc.coherence == pytest.approx(1 / 3)
    # units (no error, error): s0 (0,2), s1 (1,1), s2 (1,1): o11 = 2, o01 = o10 = 2,
    # o00 = 0; n = 6, n0 = 2, n1 = 4. D_o = 4/6, D_e = 2*2*4/(6*5) = 16/30
    # -> alpha = 1 - (4/6)/(16/30) = 1 - 120/96 = -0.25 (they disagree more than chance)
    assert doc.alpha == pytest.approx(-0.25)
    # A's spans: "Anna" doesn't overlap "Bob"/"talked"; "rained" neither -> F1 = 0
    assert doc.f1 == 0.0
    # Removed annotations count nowhere.
    assert doc.categories == {"new-person": 2, "missing-info": 1, "repetition": 1}
    # Errors per sentence over submitted sessions of doc-a: the check document is left out.
    assert study.submitted_sentences == 3 * 2
    assert study.errors_per_sentence["new-person"] == pytest.approx(2 / 6)
    assert study.excluded == ["check-1"]
    annotators = {row.label: row for row in study.annotators}
    # Worker a missed the gold span (annotated paragraph 1); b's span "nna" shares 3 of
    # the 4 characters the two cover (intersection over union 0.75: located) but has
    # another category.
    assert annotators["direct:a"].gold.recall_any == 0.0
    assert annotators["direct:a"].flagged
    assert annotators["direct:b"].gold.recall_any == 1.0
    assert annotators["direct:b"].gold.recall_category == 0.0
    assert annotators["direct:b"].gold.precision == 0.0
    assert annotators["direct:b"].flagged
    assert study.annotators[0].label == "direct:a"  # flagged workers first


def test_study_figures_leave_attention_checks_out_and_count_error_units(app, small_study):
    # Both workers agree perfectly on a second check: its F1 (1.0) and its sentences
    # would move every pooled figure if checks were counted.
    check = document(
        "check-2", gold=[{"paragraph_id": 1, "start": 0, "end": 4, "category": "new-person"}]
    )
    for worker in ("a", "b"):
        add_session(check, worker, "submitted", [(1, 0, 4, "new-person")], is_attention_check=True)
    # A span over "Bob. They" covers sentences 0 and 1: one error unit of the document's 3
    # sentences (the release's Scorer.get_score; footnote 12 merged sentences before).
    doc = document("doc-long")
    add_session(doc, "d", "submitted", [(0, 9, 18, "new-person")])
    db.session.commit()
    study = load_study(study_settings(), include_flagged=True)  # a and b are flagged
    assert study.by_id[doc.id].coherence == pytest.approx(2 / 3)
    assert study.by_id[doc.id].error_sentences == 1
    assert study.by_id[check.id].f1 == 1.0  # the check's own row keeps its figure
    assert study.mean_f1 == 0.0  # doc-a only (doc-long has one reader)
    assert study.pooled_alpha == pytest.approx(study.by_id[small_study.id].alpha)
    assert study.submitted_sentences == 3 * 2 + 3
    assert study.errors_per_sentence["new-person"] == pytest.approx(3 / 9)
    assert study.mean_coherence == pytest.approx((1 / 3 + 2 / 3) / 2)
    assert study.excluded == ["check-1", "check-2"]
    annotators = {row.label: row for row in study.annotators}
    gold = annotators["direct:a"].gold  # missed check-1, found check-2 with its one span
    assert (gold.total, gold.found_same_category, gold.annotations, gold.unmatched) == (2, 1, 2, 1)


def test_dashboard_page_shows_the_study(researcher_client, small_study):
    # Both workers are flagged: the page leaves them out and offers to count them.
    default = researcher_client.get("/research/").get_data(as_text=True)
    assert "2 workers left out of every figure" in default
    assert "direct:a (below the attention-check threshold)" in default
    assert 'href="/research/?include_flagged=1">Count flagged workers</a>' in default
    assert "33.3%" not in default
    response = researcher_client.get("/research/?include_flagged=1")
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    assert "Every figure on this page counts the 2 workers otherwise left out" in html
    assert 'href="/research/">Leave flagged workers out</a>' in html
    assert "doc-a" in html and "check-1" in html
    assert "33.3%" in html  # BooookScore of doc-a
    assert "Attention checks (1) are left out of every study figure" in html
    assert "-0.25" in html  # its alpha
    assert "below threshold" in html
    assert 'role="img"' in html and '<title id="chart-categories-title">' in html
    assert "style=" not in html  # the CSP forbids inline styles
    assert "<script>" not in html


def test_document_page(researcher_client, small_study):
    response = researcher_client.get(f"/research/documents/{small_study.external_id}")
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    assert "direct:a" in html and "direct:b" in html
    assert "chart-document-categories" in html
    assert researcher_client.get("/research/documents/999999").status_code == 404
    # The URL names the document by its external id, as every URL does, not by its key.
    assert researcher_client.get(f"/research/documents/{small_study.id}").status_code == 404


def test_dashboard_text_is_escaped(researcher_client, app):
    doc = document("<script>alert(1)</script>")
    add_session(doc, "<b>worker</b>", "submitted", [(0, 0, 4, "new-person")])
    db.session.commit()
    html = researcher_client.get("/research/").get_data(as_text=True)
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<b>worker</b>" not in html


def test_dashboard_query_count_does_not_grow_with_data(researcher_client, app):
    keys = current_taxonomy().keys
    seed_study(2, 3, 4, categories=keys, check_documents=1, tag="small-")
    researcher_client.get("/research/")  # warm-up: templates compiled
    db.session.remove()  # the tests share the request's session: start each one empty
    with count_statements() as small:
        assert researcher_client.get("/research/").status_code == 200
    seed_study(18, 3, 6, categories=keys, check_documents=2, tag="more-", seed=3)
    db.session.remove()
    with count_statements() as large:
        assert researcher_client.get("/research/").status_code == 200
    assert len(small) == len(large), (small, large)
    # The study's row (app.studies), its counts (three aggregates:
    # app.research.document_table), the workers left out (app.crowd.checks.flagged), the
    # table's page (two), the study's six, the identity conflicts (app.crowd.submissions),
    # the stored gamma of every document (one SELECT: app.jobs.results.read) and what the
    # analysis queue has waiting (app.jobs.results.waiting): one query each.
    assert len(large) <= 16, "\n".join(s[:90] for s in large)
    db.session.remove()
    with count_statements() as document_page:
        assert researcher_client.get("/research/documents/small-doc-00001").status_code == 200
    assert len(document_page) <= 8  # the study's row, as above


def test_empty_study_renders(researcher_client):
    response = researcher_client.get("/research/")
    assert response.status_code == 200
    assert "No documents yet" in response.get_data(as_text=True)


# --- study links ---------------------------------------------------------------------------


def test_study_links_page(researcher_client):
    response = researcher_client.get(
        "/research/study", environ_overrides={"wsgi.url_scheme": "https"}
    )
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    prolific = (
        "https://localhost/start?PROLIFIC_PID={{%PROLIFIC_PID%}}"
        "&amp;STUDY_ID={{%STUDY_ID%}}&amp;SESSION_ID={{%SESSION_ID%}}"
    )
    assert prolific in html
    assert "&lt;ExternalURL&gt;https://localhost/start&lt;/ExternalURL&gt;" in html
    assert "ExternalQuestion.xsd" in html
    assert "assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE" in html
    assert "https://app.prolific.com/submissions/complete?cc={code}" in html
    # A Copy button for each link to paste into a platform (Prolific URL, MTurk XML, HIT
    # preview); the completion addresses are a table of each outcome's (nothing to paste).
    assert html.count("js-copy ") + html.count('js-copy"') >= 3
    assert 'data-module="research"' in html
    assert "served over plain HTTP" not in html


def test_study_links_warn_on_http_and_show_config_overrides(app, researcher_client):
    app.config["COMPLETION_URL"] = "https://example.org/done?code={code}"
    app.config["ABANDON_AFTER_MINUTES"] = 45
    html = researcher_client.get("/research/study").get_data(as_text=True)
    assert "served over plain HTTP" in html
    assert "https://example.org/done?code={code}" in html
    assert "45 minutes" in html
    settings = study_settings()
    assert settings.completion_url_source == "config"
    assert settings.abandon_after_minutes == 45


# --- taxonomy preview ----------------------------------------------------------------------


def test_taxonomy_preview_and_file_checks(app, researcher, tmp_path):
    path = taxonomy_variant(tmp_path)
    app.config["TAXONOMY_PATH"] = str(path)
    client = app.test_client()
    log_in_directly(client, researcher)

    html = client.get("/research/taxonomy").get_data(as_text=True)
    assert "is valid and is the version running" in html
    assert "New person not introduced" in html
    assert 'fill="#eedd88"' in html
    assert "<strong>one paragraph at a" in html  # instructions rendered from Markdown

    path.write_text(path.read_text().replace("Repetition", "Repeated text"), encoding="utf-8")
    html = client.get("/research/taxonomy").get_data(as_text=True)
    assert "differs from the running version; restart to apply" in html

    path.write_text("title: Broken\ncategories: []\n", encoding="utf-8")
    response = client.get("/research/taxonomy")
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    assert "problem" in html and "instructions" in html
    assert "taxonomy.yaml:" in html

    path.unlink()
    html = client.get("/research/taxonomy").get_data(as_text=True)
    assert "problem" in html


def test_memoised_figures_follow_changes_to_submitted_spans(app, small_study):
    before = load_study(study_settings(), include_flagged=True).by_id[small_study.id]
    assert before.coherence == pytest.approx(1 / 3)
    # Remove worker B's "talked" annotation behind the app's back: B now labels [1, 0, 0].
    talked = db.session.scalars(db.select(Annotation).filter_by(span_text="talked")).one()
    talked.deleted_at = utcnow()
    db.session.commit()
    after = load_study(study_settings(), include_flagged=True).by_id[small_study.id]
    assert after.coherence == pytest.approx((1 / 3 + 2 / 3) / 2)
    assert after.categories["repetition"] == 0


def test_dashboard_shows_claimed_and_released_places_and_documents_over_quota(
    researcher_client, app
):
    now = utcnow()
    full, spare = document("doc-full"), document("doc-spare")
    loaded = now - timedelta(hours=1)
    # doc-full, quota 3: two submitted, two working (one came back after its place was
    # given away): 4 places occupied. Plus one idle for 20 minutes: released.
    add_session(full, "s1", "submitted", page_loaded_at=loaded)
    add_session(full, "s2", "submitted", page_loaded_at=loaded)
    add_session(full, "back", "active", page_loaded_at=loaded, last_seen_at=now)
    add_session(full, "new", "active", page_loaded_at=loaded, last_seen_at=now)
    add_session(
        full, "idle", "active", page_loaded_at=loaded, last_seen_at=now - timedelta(minutes=20)
    )
    # doc-spare: a link just opened (holds for a minute) and one never loaded (released).
    add_session(spare, "opening", "active", last_seen_at=now)
    add_session(spare, "script", "active", last_seen_at=now - timedelta(minutes=5))
    db.session.commit()

    study = load_study(study_settings())
    assert study.by_id[full.id].occupied == 4
    assert study.by_id[spare.id].occupied == 1
    assert study.places == {"claimed": 3, "released": 2}
    assert [d.external_id for d in study.over_quota(3)] == ["doc-full"]

    html = researcher_client.get("/research/").get_data(as_text=True)
    assert "1 document over quota" in html
    assert "4 / 3" in html and "over quota</span>" in html
    assert "3 holding a place, 2 released" in html
    assert "after 10 min without activity" in html
