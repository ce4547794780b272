"""The project's flask commands. Each command's body lives with its domain module;
this file only registers them, so `flask --help` lists everything in one place."""

from __future__ import annotations

import click
from flask import Flask
from flask.cli import with_appcontext

from app.identity import annotator_name_option, signed_link


def register(app: Flask) -> None:
    """Attach every command to app.cli."""
    from app.checks.cli import plant_checks_command
    from app.documents import import_documents_command
    from app.export import export_annotations_command
    from app.taxonomy import check_taxonomy_command
    from app.validation.cli import validation_group

    for command in (
        check_taxonomy_command,
        import_documents_command,
        list_documents_command,
        export_annotations_command,
        plant_checks_command,
        validation_group,
    ):
        app.cli.add_command(command)

    from app.research.cli import create_researcher_command

    app.cli.add_command(create_researcher_command)

    from app.imports.cli import import_annotations_command
    from app.research.report_cli import study_report_command

    app.cli.add_command(import_annotations_command)
    app.cli.add_command(study_report_command)


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
def list_documents_command(base_url: str, annotator: str | None) -> None:
    """List imported documents with their annotator links."""
    from urllib.parse import quote

    from app.extensions import db
    from app.models import Document
    from app.taxonomy import current_taxonomy

    base = base_url.rstrip("/")
    documents = db.session.scalars(db.select(Document).order_by(Document.external_id)).all()
    if not documents:
        click.echo("No documents. Import some with: flask --app app import-documents PATH")
        return
    who = f" for annotator {annotator!r}" if annotator else ""
    click.echo(f"{len(documents)} document(s). Annotator links{who}:")
    practice = set(current_taxonomy().training.documents)
    for doc in documents:
        if doc.external_id in practice:  # a practice text is no task (app.training)
            click.echo(f"  {doc.external_id:<24} {doc.paragraph_count:>4} paragraphs  (practice)")
            continue
        link = f"{base}/annotate/{quote(doc.external_id, safe='')}"
        if annotator:
            link = signed_link(link, doc.external_id, annotator)
        click.echo(f"  {doc.external_id:<24} {doc.paragraph_count:>4} paragraphs  {link}")
    if annotator:
        click.echo(f"Study entry link{who}: {signed_link(f'{base}/start', 'start', annotator)}")
