"""The import commands: `flask import-documents PATH` (documents, all or nothing) and
`flask import-annotations PATH` (annotations made elsewhere as submitted sessions)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click
from flask.cli import with_appcontext
from sqlalchemy.exc import IntegrityError

from app.core.cli_kit import echo_import_notes, fail, flag, read_taxonomy_map
from app.imports.annotation_formats import FORMATS
from app.imports.annotation_store import AnnotationImportError, prepare_import
from app.imports.document_formats import DocumentFileError, parse_documents
from app.imports.document_store import (
    DocumentImportRefused,
    Progress,
    import_documents,
    plural,
    preview_import,
)
from app.imports.interop_formats import INTEROP_FORMATS
from app.studies.cli import study_option


@click.command("import-annotations")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS + INTEROP_FORMATS),
    default="auto",
    show_default=True,
    help="auto tells jsonl, booookscore-human and falte apart; w3c (a W3C Web Annotation "
    "file) and brat (a folder of .ann and .txt files) must be named.",
)
@click.option("--id-prefix", default="", help="Put before every document id of the file.")
@click.option(
    "--taxonomy-map",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="YAML map {label: category-key}; else a label is its lower-cased, hyphenated key.",
)
@flag("--skip-rejected", "Leave out annotations with problems (reported).")
@with_appcontext
@study_option
def import_annotations_command(
    path: Path, fmt: str, id_prefix: str, taxonomy_map: Path | None, skip_rejected: bool
) -> None:
    """Import annotations made elsewhere as documents (when new) and submitted sessions.

    Formats: our JSONL export (documents must be imported; it imports back to the same
    export), BooookScore's human annotation files (summaries become documents), a CSV /
    JSON dump of FALTE's annotation_v2 table, W3C Web Annotations (--format w3c: JSON
    Lines, one Annotation, an array, an AnnotationPage or AnnotationCollection) or a brat
    standoff folder (--format brat DIR: <annotator>/<document>.ann with its .txt, as
    brat, INCEpTION and `export-annotations --format brat` write it); for w3c and brat
    the documents must be imported (docs/interop.md). One session per annotator and document;
    spans are located in the text as `validation create-round` locates them. A released
    span with several labels is one error unit (one row per label, one unit_id); one
    without labels is imported with no category, with a warning. All or nothing: every
    problem is listed as FILE:LINE: field: message.
    """
    mapping = read_taxonomy_map(taxonomy_map)
    if path.is_dir() and fmt != "brat":
        raise click.BadParameter(
            "a folder is read as brat only (--format brat); other formats read a file",
            param_hint="PATH",
        )
    try:
        plan = prepare_import(path, fmt, id_prefix, mapping, skip_rejected)
    except AnnotationImportError as exc:
        fail(f"{path}: {len(exc.problems)} problem(s); nothing imported:", exc.problems)
    with click.progressbar(length=plan.sessions, label="Storing sessions") as bar:
        summary = plan.store(bar.update)
    click.echo(
        f"Imported {summary.annotations} annotation(s) in {summary.sessions} submitted "
        f"session(s); {len(summary.documents_created)} new document(s)."
    )
    echo_import_notes(summary.warnings, summary.ambiguous, summary.rejected)


# Above this many documents the command shows a progress bar (on stderr).
PROGRESS_THRESHOLD = 200


@click.command("import-documents")
@click.argument("path", type=click.Path(exists=True, file_okay=True, dir_okay=True, path_type=Path))
@click.option(
    "--dry-run",
    is_flag=True,
    help="Check everything and report what would change, without writing anything.",
)
@with_appcontext
@study_option
def import_documents_command(path: Path, dry_run: bool) -> None:
    """Import the documents in PATH (a file, or a folder of .txt, .json and .jsonl files).

    Formats, told apart by content: FALTE JSON {"doc-id": [paragraphs]}, a JSON list or
    JSON lines of {"id", "paragraphs" | "text", ...} records, or plain text with paragraphs
    separated by blank lines (the id is the file name without .txt). The import is all or
    nothing; importing the same file again changes nothing.
    """
    try:
        inputs = parse_documents(path)
    except DocumentFileError as exc:
        fail(
            f"{path}: {plural(len(exc.problems), 'problem')}; nothing imported:",
            str(exc).splitlines(),
        )
    try:
        if dry_run:
            report = preview_import(inputs)
        else:
            with _progress_bar(len(inputs)) as progress:
                report = import_documents(inputs, progress=progress)
    except DocumentImportRefused as exc:
        fail(f"{path}: import refused; nothing imported:", str(exc).splitlines())
    except IntegrityError as exc:  # another import wrote the same ids meanwhile
        fail(f"{path}: the database refused the import; nothing imported:", [str(exc.orig)])
    if dry_run:
        click.echo(f"Dry run: would import {report.summary()} ({path}); nothing written")
    else:
        click.echo(f"Imported {report.summary()} ({path})")


@contextmanager
def _progress_bar(total: int) -> Iterator[Progress | None]:
    if total <= PROGRESS_THRESHOLD:
        yield None
        return
    # sys.stderr is looked up now, not at import, so a test runner's capture sees it.
    with click.progressbar(length=total, label="Importing documents", file=sys.stderr) as bar:
        yield bar.update
