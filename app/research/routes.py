"""Researcher pages: dashboard, document detail, session viewer, study links, taxonomy preview.

Login is required for all of them (app.core.researcher_guard.require_researcher).
"""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import urlencode

from flask import abort, current_app, flash, redirect, render_template, request, url_for
from flask_login import current_user
from markupsafe import Markup

from app.core.console_urls import console_url
from app.core.errors import ApiError
from app.core.extensions import db
from app.crowd import submissions
from app.crowd.checks.flagged import left_out_workers
from app.crowd.identity import clean_annotator_name, signed_link
from app.crowd.settings import check_taxonomy_file, instructions_markup, study_settings
from app.crowd.surveys import store as survey_store
from app.crowd.surveys.summary import summarise_answers
from app.crowd.training.service import document_problems as training_document_problems
from app.crowd.training.summary import load_practice_figures
from app.jobs import results
from app.jobs.limits import Limits
from app.jobs.queue import WORKER_SILENT, queue_state
from app.models import AnnotationSession, Document, ValidationRound
from app.research import bp
from app.research.agreement_figures import resolve_gamma
from app.research.charts import document_charts, formatters
from app.research.dashboard import (
    DashboardView,
    DocumentRow,
    SessionRow,
    load_recent,
    load_study,
)
from app.research.document_table import FILTERS, TableQuery, document_page, study_counts
from app.research.study_figures import (
    compute_now,
    fingerprint,
    is_large,
    left_out_at,
    stored_figures,
)
from app.research.viewer import session_annotations, viewer_bootstrap
from app.rules.platforms import MTURK_PREVIEW, mturk_external_question, prolific_study_url
from app.studies import current_study, current_study_id, worker_prefix
from app.suggestions.records import counts_table, source_counts
from app.taxonomy import current_taxonomy


def include_flagged_arg() -> bool:
    """The console's switch: ?include_flagged=1 counts the workers left out."""
    return request.args.get("include_flagged") == "1"


@bp.context_processor
def _research_helpers() -> dict:
    return formatters()


@bp.get("/")
def dashboard():
    """Study progress, category distribution, error rates, agreement, attention checks
    (?include_flagged=1: the figures count the workers left out by app.crowd.checks.flagged).
    The documents' table is one page (?page=, ?sort=, ?filter=, ?q=:
    app.research.document_table); the study-level figures are read from the analysis
    results for a large study (app.research.study_figures), never computed here."""
    settings = study_settings()
    taxonomy = current_taxonomy()
    include_flagged = include_flagged_arg()
    now = datetime.now(UTC)
    table = TableQuery.from_args(request.args)
    counts = study_counts(settings, now)
    if is_large(counts.documents):
        content = fingerprint(settings)
        left_out = left_out_at(settings, content)
        figures = stored_figures(settings, include_flagged, content)
    else:
        left_out = left_out_workers(settings)
        figures = compute_now(settings, include_flagged, left_out)
    page = document_page(settings, table, now, set(left_out))
    rows = figures.study  # a small study, loaded whole: its page's rows are in it
    if rows is None:
        rows = load_study(
            settings, now, include_flagged=include_flagged, document_ids=page.ids, left_out=left_out
        )
        resolve_gamma(rows)  # stored values only: what is missing is computed in the background
    return render_template(
        "research/dashboard.html",
        counts=counts,
        figures=figures,
        left_out=list(left_out.values()),
        include_flagged=include_flagged,
        table=table,
        page=page,
        filters=FILTERS,
        page_url=_page_url,
        documents=[rows.by_id[i] for i in page.ids if i in rows.by_id],
        recent=_recent(rows) if figures.study else load_recent(settings, now),
        settings=settings,
        taxonomy=taxonomy,
        surveys=_survey_summary(taxonomy),
        practice=_practice_figures(taxonomy),
        suggestions=counts_table(
            source_counts(
                None, set() if include_flagged else {w.annotator_id for w in left_out.values()}
            )
        ),
        conflicts=submissions.conflicts(),
        analyses_waiting=results.waiting(Limits.from_config(current_app.config)),
        analysis_queue=queue_state(),
        worker_silent_minutes=int(WORKER_SILENT.total_seconds() // 60),
    )


def _recent(study: DashboardView) -> list[tuple[SessionRow, DocumentRow]]:
    """The recent sessions of a study loaded whole, with their documents."""
    return [(s, study.by_id[s.document_id]) for s in study.recent_sessions]


def _page_url(args: dict) -> str:
    """This page's own address (whichever prefix serves it) with the table's query
    string, keeping the flagged-workers switch."""
    if include_flagged_arg():
        args = {"include_flagged": 1} | args
    return request.path + ("?" + urlencode(args) if args else "")


@bp.post("/identity-conflicts/<int:conflict_id>")
def decide_identity_conflict(conflict_id: int):
    """**Allow** a refused Prolific submission (it opens a session of its own on its next
    arrival) or **Keep refused** it (app.crowd.submissions)."""
    decision = request.form.get("decision")
    if decision not in (submissions.ALLOWED, submissions.KEPT_REFUSED):
        abort(400, description="decision must be allowed or refused")
    conflict = submissions.decide(conflict_id, decision, current_user)
    if conflict is None:
        abort(404)
    if decision == submissions.ALLOWED:
        flash(
            f"Allowed: submission {conflict.submission} of {conflict.label} opens a "
            "session of its own when its link is opened again.",
            "info",
        )
    else:
        flash(f"Kept refused: submission {conflict.submission} opens nothing.", "info")
    return redirect(console_url("research.dashboard", _anchor="conflicts-heading"), code=303)


def _practice_figures(taxonomy) -> list | None:
    """The training figures (app.crowd.training.summary); None when the taxonomy has no training."""
    if not taxonomy.training.enabled:
        return None
    return load_practice_figures(taxonomy.training.attempts)


def _survey_summary(taxonomy) -> list | None:
    """The surveys' figures (app.crowd.surveys.summary); None when the taxonomy has no survey."""
    if not taxonomy.survey:
        return None
    return summarise_answers(taxonomy.survey, survey_store.all_answers())


@bp.get("/documents/<document_id>")
def document(document_id: str):
    """One document (by its external id, as in every URL): its sessions, category
    distribution and agreement."""
    settings = study_settings()
    taxonomy = current_taxonomy()
    pk = db.session.scalar(
        db.select(Document.id).filter_by(external_id=document_id, study_id=current_study_id())
    )
    if pk is None:
        abort(404, description="No document has this id.")
    study = load_study(settings, document_id=pk, include_flagged=include_flagged_arg())
    resolve_gamma(study)  # cached value only, as on the dashboard
    row = study.documents[0]
    return render_template(
        "research/document.html",
        study=study,
        document=row,
        settings=settings,
        taxonomy=taxonomy,
        chart=document_charts(row, taxonomy),
    )


def _signed_links(start_url: str) -> dict:
    """?annotator=NAME: NAME's signed /start link and validator links
    (docs/contracts.md#signed-links), or the problem with the name."""
    given = request.args.get("annotator", "")
    if not given.strip():
        return {"annotator": "", "signed": None, "annotator_error": None}
    try:
        name = clean_annotator_name(given)
    except ApiError as exc:
        return {"annotator": given, "signed": None, "annotator_error": exc.message}
    rounds = db.session.scalars(
        db.select(ValidationRound.name)
        .where(ValidationRound.study_id == current_study_id())
        .order_by(ValidationRound.name)
    )
    signed = {
        "start": signed_link(start_url, "start", name),
        "rounds": [
            (
                round_name,
                signed_link(
                    worker_url("validation.start", round_name=round_name),
                    f"round:{round_name}",
                    name,
                ),
            )
            for round_name in rounds
        ],
    }
    return {"annotator": name, "signed": signed, "annotator_error": None}


@bp.get("/sessions/<int:session_id>")
def session_viewer(session_id: int):
    """One annotation session read-only, drawn by the annotator page's own code."""
    session = db.session.get(AnnotationSession, session_id)
    if session is None or session.study_id != current_study_id():  # another study's: none
        abort(404, description="No annotation session has this id.")
    taxonomy = current_taxonomy()
    return render_template(
        "research/session.html",
        bootstrap=viewer_bootstrap(session),
        taxonomy=taxonomy,
        document=session.document,
        csrf_token_value="",
        read_only=True,
        preview=False,
        session=session,
        annotator=session.annotator.label,
        status=session.status,
        annotations=session_annotations(session),
        category_names={c.key: c.name for c in taxonomy.categories},
    )


def worker_url(endpoint: str, **values) -> str:
    """A worker's entry address (`assignment.start`, `validation.start`) in the current
    study: /study/<slug>/... for a study, the unprefixed form for the default study."""
    if worker_prefix(current_study()):
        values["slug"] = current_study().slug
    return url_for(endpoint, _external=True, **values)


def worker_links() -> dict:
    """The current study's links for the crowd platforms, as the study page and a
    study's overview show them (templates/research/_worker_links.html), and its
    effective settings (their completion codes per outcome)."""
    start_url = worker_url("assignment.start")
    return {
        "settings": study_settings(),
        "start_url": start_url,
        "prolific_url": prolific_study_url(start_url),
        "mturk_xml": mturk_external_question(start_url),
        "mturk_preview_url": worker_url("assignment.start", assignmentId=MTURK_PREVIEW),
        "is_https": start_url.startswith("https://"),
    }


@bp.get("/study")
def study_links():
    """The links to paste into Prolific and MTurk, signed direct links, the settings."""
    links = worker_links()
    return render_template("research/study.html", **_signed_links(links["start_url"]), **links)


@bp.get("/taxonomy")
def taxonomy_preview():
    """The categories as workers see them, and the taxonomy file on disk checked again."""
    taxonomy = current_taxonomy()
    managed = bool(current_study().taxonomy_file)
    return render_template(
        "research/taxonomy.html",
        taxonomy=taxonomy,
        instructions=instructions_markup(taxonomy),
        # Safe to mark: rendered like the instructions, raw HTML escaped (app.taxonomy.surveys).
        consent=Markup(taxonomy.consent_html) if taxonomy.consent else None,  # noqa: S704
        # Only a study managed by a file (the default study: TAXONOMY_PATH) has one to check.
        file_check=check_taxonomy_file(current_app.config["TAXONOMY_PATH"]) if managed else None,
        training_problems=training_document_problems(taxonomy),
    )
