"""The studies' commands: `flask create-study`, `flask list-studies`, `flask study-status`,
`flask retire-documents` and `flask delete-documents` (thin on app.studies.documents, as
the console's documents page is), and the `--study SLUG` option every command that reads
or writes a study's data takes (`study_option`; without it, the default study, so
scripts written before studies were rows keep working)."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import click
from flask.cli import with_appcontext

from app.core.cli_kit import fail
from app.models import Document
from app.rules.studies import STUDY_KINDS, STUDY_STATUSES
from app.studies.current import current_study, use_study
from app.studies.documents import (
    DocumentsRefused,
    delete_documents,
    set_retired,
    study_documents,
)
from app.studies.service import (
    StudyError,
    create_study,
    default_study,
    list_studies,
    require_study,
    set_status,
    study_by_slug,
)
from app.studies.taxonomies import TaxonomyRefused, store_taxonomy
from app.taxonomy import TaxonomyError, load_taxonomy_text


def study_option(command: Callable[..., Any]) -> Callable[..., Any]:
    """`--study SLUG`: the command works on that study (app.studies.use_study), the
    default study without it; an unknown slug is refused naming the known ones. Put it
    under @with_appcontext (it needs the app)."""

    @click.option(
        "--study",
        "study_slug",
        metavar="SLUG",
        default=None,
        help="The study to work on (its slug; `flask list-studies`). Default: the default study.",
    )
    @functools.wraps(command)
    def wrapper(*args: Any, study_slug: str | None = None, **kwargs: Any) -> Any:
        try:
            use_study(default_study() if study_slug is None else require_study(study_slug))
        except StudyError as error:
            fail(str(error))
        return command(*args, **kwargs)

    return wrapper


@click.command("create-study")
@click.argument("slug")
@click.option(
    "--taxonomy",
    "taxonomy_path",
    required=True,
    type=click.Path(exists=True, dir_okay=False, allow_dash=True, path_type=Path),
    help="The study's taxonomy YAML, checked as `flask check-taxonomy` checks it; `-` reads "
    "it from standard input (e.g. through `heroku run`, with no file on the server).",
)
@click.option("--title", help="The study's title (default: the slug).")
@click.option(
    "--kind",
    type=click.Choice(STUDY_KINDS),
    default="annotation",
    show_default=True,
    help="What workers do: mark errors (annotation) or judge annotations (validation).",
)
@click.option(
    "--status",
    type=click.Choice(["draft", "open"]),
    default="open",
    show_default=True,
    help="A draft opens only the researchers' signed links; an open study takes workers.",
)
@click.option(
    "--judges",
    "judges_slug",
    metavar="SLUG",
    help="A validation study: the annotation study whose annotations it judges.",
)
@click.option(
    "--exist-ok",
    is_flag=True,
    help="When the study exists, take the file as its taxonomy's next version (if it "
    "changed) instead of refusing: `make run` refreshes the demo study so.",
)
@with_appcontext
def create_study_command(
    slug: str,
    taxonomy_path: Path,
    title: str | None,
    kind: str,
    status: str,
    judges_slug: str | None,
    exist_ok: bool,
) -> None:
    """Create the study SLUG with its taxonomy, and print its entry link's path.

    SLUG is lower-case letters, digits and hyphens (it is part of the workers' address
    /study/SLUG/start). Import its documents with `flask import-documents PATH --study
    SLUG`. Nothing is stored when the taxonomy has a problem (each is listed at its line).
    """
    from_stdin = str(taxonomy_path) == "-"
    raw = sys.stdin.buffer.read() if from_stdin else taxonomy_path.read_bytes()
    name = "<stdin>" if from_stdin else str(taxonomy_path)
    from_file = store_check(raw, name)
    existing = study_by_slug(slug) if exist_ok else None
    try:
        judges = require_study(judges_slug) if judges_slug else None
        study = existing or create_study(
            slug, title or from_file, kind, status=status, judges=judges
        )
    except StudyError as error:
        fail(str(error))
    try:
        stored = store_taxonomy(study, raw, "<stdin>" if from_stdin else taxonomy_path.name)
    except (TaxonomyError, TaxonomyRefused) as error:  # checked above: not expected
        fail(str(error))
    made = "Refreshed" if existing is not None else "Created"
    click.echo(
        f"{made} study {study.slug!r} ({study.kind}, {study.status}), taxonomy version "
        f"{stored.version}. Workers enter at /study/{study.slug}/start"
    )


def store_check(raw: bytes, name: str) -> str:
    """The taxonomy's title, or fail listing every problem of the file at its line."""
    try:
        return load_taxonomy_text(raw, name).title
    except TaxonomyError as error:
        problems = [str(problem) for problem in error.problems]
        fail(f"{len(problems)} problem(s) in {name}: no study created", problems)


@click.command("list-studies")
@with_appcontext
def list_studies_command() -> None:
    """List the studies: slug, kind, status, documents, taxonomy version, title."""
    rows = list_studies()
    if not rows:
        click.echo("No studies. Create one with: flask --app app create-study SLUG --taxonomy FILE")
        return
    click.echo(f"{len(rows)} study(ies):")
    for row in rows:
        click.echo(
            f"  {row.slug:<24} {row.kind:<10} {row.status:<8} {row.documents:>6} documents  "
            f"taxonomy {row.taxonomy_version or '-':<16}  {row.title}"
        )


@click.command("study-status")
@click.argument("slug")
@click.argument("status", type=click.Choice(STUDY_STATUSES))
@with_appcontext
def study_status_command(slug: str, status: str) -> None:
    """Open, close or archive the study SLUG (draft -> open | closed; open -> closed;
    closed -> open | archived). A closed or archived study takes no new workers; its data
    stays."""
    try:
        study = set_status(require_study(slug), status)
    except StudyError as error:
        fail(str(error))
    click.echo(f"Study {study.slug!r} is {study.status}.")


document_ids_argument = click.argument(
    "document_ids", metavar="ID [ID ...]", nargs=-1, required=True
)


@click.command("retire-documents")
@document_ids_argument
@click.option("--undo", is_flag=True, help="Un-retire them instead: hand them out again.")
@with_appcontext
@study_option
def retire_documents_command(document_ids: tuple[str, ...], undo: bool) -> None:
    """Retire the study's documents ID ... (ids as imported: `flask list-documents`).

    A retired document gets no new sessions, from /start or from a document link; a
    worker's session on it goes on, and it stays in exports and reports. All or nothing:
    an id the study does not have refuses them all, each named.
    """
    study = current_study()
    documents = _documents_or_fail(document_ids, "un-retired" if undo else "retired")
    changed = {document.external_id for document in set_retired(documents, not undo)}
    done = "Un-retired" if undo else "Retired"
    already = "active" if undo else "retired"
    click.echo(f"{done} {len(changed)} document(s) of study {study.slug!r}.")
    for document in documents:
        state = done.lower() if document.external_id in changed else f"{already} already"
        click.echo(f"  {document.external_id}: {state}")
    if not undo:
        click.echo("They get no new sessions; the sessions on them go on.")


@click.command("delete-documents")
@document_ids_argument
@click.option("--dry-run", is_flag=True, help="Check only: say what would be deleted.")
@with_appcontext
@study_option
def delete_documents_command(document_ids: tuple[str, ...], dry_run: bool) -> None:
    """Delete the study's documents ID ... (ids as imported: `flask list-documents`).

    Only documents nothing points to: one with sessions, validation items, suggestions,
    practice attempts or adjudication decisions is refused (retire it instead:
    `flask retire-documents`). All or nothing: one refusal deletes none, and every
    refused document is named with the reason.
    """
    study = current_study()
    documents = _documents_or_fail(document_ids, "deleted")
    names = [document.external_id for document in documents]
    try:
        delete_documents(documents, dry_run=dry_run)
    except DocumentsRefused as refused:
        _refuse(refused, "deleted")
    verb = "Would delete" if dry_run else "Deleted"
    click.echo(f"{verb} {len(names)} document(s) of study {study.slug!r}:")
    for name in names:
        click.echo(f"  {name}")
    if dry_run:
        click.echo("Dry run: nothing deleted.")


def _documents_or_fail(document_ids: tuple[str, ...], verb: str) -> list[Document]:
    """The current study's documents with these ids, or fail naming each unknown id."""
    study = current_study()
    try:
        return study_documents(study, document_ids)
    except DocumentsRefused as refused:
        hint = f" `flask list-documents --study {study.slug}` lists its documents."
        _refuse(refused, verb, hint)


def _refuse(refused: DocumentsRefused, verb: str, hint: str = "") -> NoReturn:
    """Fail: how many were refused, nothing changed, then each with its reason."""
    fail(
        f"{len(refused.refusals)} document(s) refused: none {verb}.{hint}",
        [str(refusal) for refusal in refused.refusals],
    )
