"""`flask import-suggestions PATH --source NAME`: model annotations as suggestions."""

from __future__ import annotations

from pathlib import Path

import click
from flask.cli import with_appcontext

from app.core.cli_kit import echo_import_notes, fail, read_taxonomy_map
from app.studies.cli import study_option
from app.suggestions.importer import FORMATS, SuggestionImportError, prepare_suggestions


@click.command("import-suggestions")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--source", required=True, help="Who made them (e.g. gpt-4): exports and figures group by it."
)
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="auto", show_default=True)
@click.option(
    "--id-prefix",
    default="",
    help="Put before every document id of the file (as import-annotations --id-prefix).",
)
@click.option(
    "--taxonomy-map",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="YAML map {label: category-key}; else a label is its lower-cased, hyphenated key.",
)
@click.option(
    "--skip-rejected", is_flag=True, help="Leave out suggestions with problems (reported)."
)
@click.option(
    "--decoy",
    is_flag=True,
    help="The file's suggestions are decoys, deliberately wrong: study-report's `decoys` "
    "says how often workers take them; what workers make from them counts in no figure.",
)
@with_appcontext
@study_option
def import_suggestions_command(
    path: Path,
    source: str,
    fmt: str,
    id_prefix: str,
    taxonomy_map: Path | None,
    skip_rejected: bool,
    decoy: bool,
) -> None:
    """Attach model annotations to imported documents as suggestions for workers.

    Formats: BooookScore's GPT-4 model files (each whole sentence with its types and
    questions; import the summaries first) or the generic items JSONL of `validation
    create-round`. Types map to category keys (--taxonomy-map); sentences are located in
    the stored text as `create-round` locates spans. Workers see them when the taxonomy's
    study says `suggestions: show` (or puts them in the show arm of `suggestion_arms`).
    With --decoy the suggestions are decoys (docs/analyses.md): shown like the others,
    their take rate (accepted or edited) measures over-reliance on suggestions, and the
    annotations made from them are marked `decoy: true` in exports and left out of every
    study figure and every validation round.
    All or nothing: every problem is listed as FILE:LINE: field: message.
    """
    mapping = read_taxonomy_map(taxonomy_map)
    try:
        plan = prepare_suggestions(path, source, fmt, mapping, skip_rejected, id_prefix, decoy)
    except SuggestionImportError as exc:
        fail(f"{path}: {len(exc.problems)} problem(s); nothing imported:", exc.problems)
    with click.progressbar(length=len(plan.rows), label="Storing suggestions") as bar:
        stored = plan.store(bar.update)
    kind = "decoy suggestion(s)" if decoy else "suggestion(s)"
    click.echo(
        f"Imported {stored} {kind} from {source!r}; {plan.unchanged} already stored unchanged."
    )
    echo_import_notes(plan.warnings, plan.ambiguous, plan.rejected)
