"""The project's flask commands: `register` attaches them all, so `flask --help` lists
everything in one place. Each command's body lives with its domain module, but for
`list-documents` (links, no domain of its own); the output helpers the commands share
(refusals, report formats) are here too."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NoReturn

import click
from flask import Flask
from flask.cli import with_appcontext

from app.crowd.identity import annotator_name_option, signed_link


def register(app: Flask) -> None:
    """Attach every command to app.cli."""
    from app.crowd.checks.cli import plant_checks_command
    from app.imports.document_store import import_documents_command
    from app.taxonomy import check_taxonomy_command
    from app.validation.cli import validation_group

    for command in (
        check_taxonomy_command,
        import_documents_command,
        list_documents_command,
        plant_checks_command,
        validation_group,
    ):
        app.cli.add_command(command)

    from app.research.cli import create_researcher_command

    app.cli.add_command(create_researcher_command)

    from app.imports.cli import import_annotations_command
    from app.research.cli import export_annotations_command, study_report_command

    app.cli.add_command(import_annotations_command)
    app.cli.add_command(export_annotations_command)
    app.cli.add_command(study_report_command)

    from app.suggestions.cli import import_suggestions_command

    app.cli.add_command(import_suggestions_command)


def flag(name: str, help_text: str) -> Callable:
    """An on/off option (off unless given)."""
    return click.option(name, is_flag=True, help=help_text)


def file_output_option(help_text: str = "File to write (default: standard output).") -> Callable:
    """--output FILE, a Path; None writes to standard output."""
    return click.option(
        "--output", type=click.Path(dir_okay=False, writable=True, path_type=Path), help=help_text
    )


records_format_option = click.option(
    "--format", "fmt", type=click.Choice(["jsonl", "csv"]), default="jsonl", show_default=True
)
document_option = click.option("--document", help="Only this document (its external id).")
report_format_option = click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json", "csv"]),
    default="table",
    show_default=True,
)


def echo_ambiguous(ambiguous: Iterable[str]) -> None:
    """Spans whose text stands more than once in their paragraph: the first one was taken."""
    lines = list(ambiguous)
    click.echo(f"Ambiguous spans (first occurrence used): {len(lines)}")
    for line in lines:
        click.echo(f"  {line}")


def echo_import_notes(
    warnings: Iterable[str], ambiguous: Iterable[str], rejected: Iterable[str]
) -> None:
    """What an import stored with a remark: its warnings, its ambiguous spans, and the
    records it left out (rejected), each on its own indented line."""
    for line in warnings:
        click.echo(f"  warning: {line}")
    echo_ambiguous(ambiguous)
    rejected = list(rejected)
    if rejected:
        click.echo(f"Rejected (left out): {len(rejected)}")
        for line in rejected:
            click.echo(f"  {line}")


def echo_report(
    report: dict[str, Any],
    fmt: str,
    format_csv: Callable[[dict[str, Any]], str],
    format_table: Callable[[dict[str, Any]], str],
) -> None:
    """Print a report as --format asks: indented JSON, CSV or a table."""
    if fmt == "json":
        click.echo(json.dumps(report, indent=2, ensure_ascii=False))
    elif fmt == "csv":
        click.echo(format_csv(report), nl=False)
    else:
        click.echo(format_table(report), nl=False)


def fail(headline: str, problems: Iterable[str] = ()) -> NoReturn:
    """Refuse: the headline, then each problem indented, on stderr; exit status 1."""
    click.echo(headline, err=True)
    for line in problems:
        click.echo(f"  {line}", err=True)
    sys.exit(1)


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

    from app.core.extensions import db
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
        if doc.external_id in practice:  # a practice text is no task (app.crowd.training)
            click.echo(f"  {doc.external_id:<24} {doc.paragraph_count:>4} paragraphs  (practice)")
            continue
        link = f"{base}/annotate/{quote(doc.external_id, safe='')}"
        if annotator:
            link = signed_link(link, doc.external_id, annotator)
        click.echo(f"  {doc.external_id:<24} {doc.paragraph_count:>4} paragraphs  {link}")
    if annotator:
        click.echo(f"Study entry link{who}: {signed_link(f'{base}/start', 'start', annotator)}")
