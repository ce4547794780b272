"""Home page and /healthz."""

from flask import current_app, jsonify, render_template
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from app.core.extensions import db
from app.main import bp
from app.models import Document


@bp.get("/")
def index():
    """In development, the documents with their annotate links; elsewhere a neutral page.

    A public list would hand anyone the study's documents and links; attention checks
    are never listed (a worker who knew them could pass them without reading)."""
    if current_app.config.get("APP_ENV") != "development":
        return render_template("main/index.html", documents=None)
    documents = db.session.scalars(
        db.select(Document).where(Document.gold.is_(None)).order_by(Document.external_id)
    ).all()
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
