"""What every command shares: refusals (`fail`), the notes of an import, report formats,
and the options several commands take. A leaf: the commands of every package import it,
it imports none of them (docs/architecture.md, "Add a command")."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NoReturn

import click
import yaml


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
