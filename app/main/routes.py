"""Home page and /healthz."""

from flask import jsonify, render_template
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from app.extensions import db
from app.main import bp
from app.models import Document


@bp.get("/")
def index():
    """List the documents with their annotate links."""
    documents = db.session.scalars(db.select(Document).order_by(Document.external_id)).all()
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
