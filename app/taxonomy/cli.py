"""`flask check-taxonomy`: validate a taxonomy file and summarise it.

Also a Flask CLI plugin (pyproject.toml's `flask.commands` entry point), so it runs
without creating the app: it must work when the configured taxonomy is the broken file
being checked.
"""

from __future__ import annotations

import os

import click

from app.taxonomy.loader import load_taxonomy
from app.taxonomy.model import TaxonomyError
from app.taxonomy.summary import summarise, taxonomy_warnings
from config.settings import DEFAULT_TAXONOMY


def default_taxonomy_path() -> str:
    """The file the app would load, found without creating the app (which may not start)."""
    env = os.environ
    return env.get("FLASK_TAXONOMY_PATH") or env.get("TAXONOMY_PATH") or str(DEFAULT_TAXONOMY)


@click.command("check-taxonomy")
@click.argument("path", required=False)
def check_taxonomy_command(path: str | None) -> None:
    """Validate a taxonomy YAML file and summarise it.

    PATH defaults to $TAXONOMY_PATH, else config/taxonomy.yaml. Exits 1 and lists
    every problem as FILE:LINE: KEY: MESSAGE when the file is not valid.
    """
    path = path or default_taxonomy_path()
    try:
        taxonomy = load_taxonomy(path)
    except TaxonomyError as error:
        for problem in error.problems:
            click.echo(str(problem), err=True)
        click.echo(f"{len(error.problems)} problem(s) in {path}", err=True)
        raise click.exceptions.Exit(1) from None
    click.echo(summarise(taxonomy))
    for warning in taxonomy_warnings(path, taxonomy):
        click.echo(f"warning: {warning}", err=True)
