"""Home page and /healthz."""

from flask import current_app, jsonify, render_template
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from app.core.extensions import db
from app.main import bp
from app.models import Document, Study
from app.rules.studies import DEFAULT_SLUG


@bp.get("/")
def index():
    """In development, the documents with their annotate links; elsewhere a neutral page.

    A public list would hand anyone the study's documents and links; attention checks
    are never listed (a worker who knew them could pass them without reading), nor
    retired documents (they take no new sessions)."""
    if current_app.config.get("APP_ENV") != "development":
        return render_template("main/index.html", documents=None)
    # Every study's documents, each linked in its own study (`make run` keeps the demo in
    # the study `demo`; the default study's links have no prefix).
    rows = db.session.execute(
        db.select(Document, Study.slug)
        .join(Study, Study.id == Document.study_id)
        .where(Document.gold.is_(None), Document.retired_at.is_(None))
        .order_by(Study.slug, Document.external_id)
    ).all()
    documents = [(document, None if slug == DEFAULT_SLUG else slug) for document, slug in rows]
    return render_template("main/index.html", documents=documents)


@bp.get("/healthz")
def healthz():
    """200 when the database answers, 503 otherwise (load balancers poll this)."""
    try:
        db.session.execute(text("SELECT 1"))
    except SQLAlchemyError:
        db.session.rollback()
        return jsonify(status="unavailable", database="unreachable"), 503
    return jsonify(status="ok")
