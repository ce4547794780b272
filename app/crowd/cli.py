"""The crowd study's commands: `flask list-documents` (each document with its annotator
links, and the study's signed /start link)."""

from __future__ import annotations

from urllib.parse import quote

import click
from flask.cli import with_appcontext

from app.core.extensions import db
from app.crowd.identity import annotator_name_option, signed_link
from app.models import Document
from app.studies import current_study, worker_prefix
from app.studies.cli import study_option
from app.taxonomy import current_taxonomy


@click.command("list-documents")
@click.option(
    "--base-url",
    default="http://127.0.0.1:5000",
    show_default=True,
    help="Where the app is served, to print full annotator links.",
)
@click.option(
    "--annotator",
    metavar="NAME",
    callback=annotator_name_option,
    help="Print the links signed for this annotator (annotator=NAME&sig=...), and the "
    "signed /start link: production accepts direct links only signed.",
)
@with_appcontext
@study_option
def list_documents_command(base_url: str, annotator: str | None) -> None:
    """List imported documents with their annotator links."""
    base = base_url.rstrip("/") + worker_prefix(current_study())
    documents = db.session.scalars(
        db.select(Document)
        .where(Document.study_id == current_study().id)
        .order_by(Document.external_id)
    ).all()
    if not documents:
        click.echo("No documents. Import some with: flask --app app import-documents PATH")
        return
    who = f" for annotator {annotator!r}" if annotator else ""
    click.echo(f"{len(documents)} document(s). Annotator links{who}:")
    practice = set(current_taxonomy().training.documents)
    for doc in documents:
        if doc.external_id in practice:  # a practice text is no task (app.crowd.training)
            click.echo(f"  {doc.external_id:<24} {doc.paragraph_count:>4} paragraphs  (practice)")
            continue
        if doc.retired_at is not None:  # no new sessions (flask retire-documents --undo)
            click.echo(f"  {doc.external_id:<24} {doc.paragraph_count:>4} paragraphs  (retired)")
            continue
        link = f"{base}/annotate/{quote(doc.external_id, safe='')}"
        if annotator:
            link = signed_link(link, doc.external_id, annotator)
        click.echo(f"  {doc.external_id:<24} {doc.paragraph_count:>4} paragraphs  {link}")
    if annotator:
        click.echo(f"Study entry link{who}: {signed_link(f'{base}/start', 'start', annotator)}")
