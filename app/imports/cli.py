"""`flask import-annotations PATH`: annotations made elsewhere as submitted sessions."""

from __future__ import annotations

from pathlib import Path

import click
import yaml
from flask.cli import with_appcontext

from app.cli import echo_import_notes, fail, flag
from app.imports.annotation_formats import FORMATS
from app.imports.annotation_store import AnnotationImportError, prepare_import


def read_taxonomy_map(path: Path | None) -> dict[str, str]:
    """The --taxonomy-map YAML file, {label: key}; ClickException when it is not one."""
    if path is None:
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise click.ClickException(f"{path}: cannot read the taxonomy map ({exc})") from exc
    if not isinstance(data, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in data.items()
    ):
        raise click.ClickException(f"{path}: must be a YAML map of label: category-key")
    return {k.strip(): v.strip() for k, v in data.items()}


@click.command("import-annotations")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="auto", show_default=True)
@click.option("--id-prefix", default="", help="Put before every document id of the file.")
@click.option(
    "--taxonomy-map",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="YAML map {label: category-key}; else a label is its lower-cased, hyphenated key.",
)
@flag("--skip-rejected", "Leave out annotations with problems (reported).")
@with_appcontext
def import_annotations_command(
    path: Path, fmt: str, id_prefix: str, taxonomy_map: Path | None, skip_rejected: bool
) -> None:
    """Import annotations made elsewhere as documents (when new) and submitted sessions.

    Formats: our JSONL export (documents must be imported; it imports back to the same
    export), BooookScore's human annotation files (summaries become documents), or a CSV /
    JSON dump of FALTE's annotation_v2 table. One session per annotator and document;
    spans are located in the text as `validation create-round` locates them. A released
    span with several labels is one error unit (one row per label, one unit_id); one
    without labels is imported with no category, with a warning. All or nothing: every
    problem is listed as FILE:LINE: field: message.
    """
    mapping = read_taxonomy_map(taxonomy_map)
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
