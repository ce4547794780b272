"""`flask validation ...`: create rounds, list them, import judgments, print reports."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

import click
from flask.cli import AppGroup

from app.core.cli_kit import echo_ambiguous, echo_report, fail, flag, report_format_option
from app.crowd.identity import annotator_name_option, signed_link
from app.imports.item_formats import DECISIONS, FORMATS
from app.studies import StudyKind, current_study, worker_prefix
from app.studies.cli import study_option
from app.taxonomy import current_taxonomy
from app.validation.judgments import JudgmentImportError, import_judgments
from app.validation.report import compute_report, format_csv, format_table
from app.validation.rounds import (
    RoundError,
    create_round,
    find_round,
    left_out_lines,
    round_overview,
)

validation_group = AppGroup(
    "validation", help="Precision-validation rounds: create, list, import judgments, report."
)


@validation_group.command("create-round")
@click.argument("name")
@click.option(
    "--items",
    "paths",
    multiple=True,
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="File of items to judge (repeat for several files).",
)
@click.option(
    "--source",
    help="Source name for items that do not name their own (e.g. gpt-4); never shown to "
    "validators.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="auto",
    show_default=True,
    help="Item file format; auto tells them apart by content.",
)
@click.option(
    "--judgments-per-item",
    type=int,
    default=1,
    show_default=True,
    help="Distinct validators who judge each item.",
)
@click.option("--sample", type=int, help="Keep only N items, drawn at random with the seed.")
@click.option("--seed", type=int, help="Seed of the shuffle (default: random, printed).")
@flag(
    "--skip-rejected",
    "Create the round without the items that cannot be used (default: refuse).",
)
@flag(
    "--include-unsubmitted",
    'Keep annotations of sessions not submitted (our export\'s "submitted": false); '
    "by default they are left out, since their workers may still change them.",
)
@click.option(
    "--decision",
    type=click.Choice(DECISIONS),
    default="all",
    show_default=True,
    help="From the suggestions export: only suggestions a worker accepted, edited or "
    "rejected (decided: any of them; all: every suggestion).",
)
@study_option
def create_round_command(name: str, paths: tuple[Path, ...], **options: Any) -> None:
    """Create round NAME from item files (our export, generic JSONL or BooookScore files).

    Items are shuffled with the seed; spans without offsets are found in their document
    by their text. With any unusable item nothing is written, unless --skip-rejected.
    From our export, only submitted sessions' annotations are taken, unless
    --include-unsubmitted. Items on attention-check documents and the annotations of
    workers who failed checks or training or were flagged by their attention checks are
    left out (as every study figure leaves them out), and counted.
    """
    click.echo(f"Reading {len(paths)} item file(s)...", err=True)
    try:
        # The options are create_round's keyword arguments, by the same names.
        summary = create_round(name, paths, current_taxonomy(), **options)
    except RoundError as exc:
        fail(
            f"Round {name!r} not created ({len(exc.problems)} problem(s); nothing written):",
            exc.problems,
        )
    click.echo(
        f"Created round {name!r}: {summary.total} items, seed {summary.seed}, "
        f"{options['judgments_per_item']} judgment(s) per item"
    )
    for item_source, count in summary.items_by_source.items():
        click.echo(f"  {item_source}: {count}")
    if summary.documents_imported:
        click.echo(f"Documents imported: {', '.join(summary.documents_imported)}")
    for line in summary.skipped:
        click.echo(f"  warning: {line}")
    echo_ambiguous(summary.ambiguous)
    if summary.unsubmitted_left_out:
        click.echo(
            f"Left out: {summary.unsubmitted_left_out} annotation(s) of sessions not submitted "
            "(--include-unsubmitted keeps them)"
        )
    for line in left_out_lines(summary):
        click.echo(f"Left out: {line}")
    click.echo(f"Rejected items: {len(summary.rejected)}")
    for line in summary.rejected:
        click.echo(f"  {line}")
    prefix = worker_prefix(current_study())
    click.echo(f"Validators' link: {prefix}/validate/{quote(name, safe='')}")
    if current_study().kind == StudyKind.VALIDATION:
        click.echo(f"The study's start link (its open rounds, in turn): {prefix}/start")


@validation_group.command("list-rounds")
@click.option(
    "--annotator",
    metavar="NAME",
    callback=annotator_name_option,
    help="Also print each round's validator link signed for this annotator "
    "(annotator=NAME&sig=...): production accepts direct links only signed.",
)
@click.option(
    "--base-url",
    default="http://127.0.0.1:5000",
    show_default=True,
    help="Where the app is served, to print full validator links.",
)
@study_option
def list_rounds_command(annotator: str | None, base_url: str) -> None:
    """List the rounds with their items and judgments."""
    rows = round_overview()
    if not rows:
        click.echo(
            "No rounds. Create one with: flask --app app validation create-round NAME --items PATH"
        )
        return
    click.echo(f"{len(rows)} round(s):")
    study = current_study()
    if annotator and study.kind == StudyKind.VALIDATION:
        url = f"{base_url.rstrip('/')}{worker_prefix(study)}/start"
        click.echo(
            f"  the study's start link for {annotator!r}: {signed_link(url, 'start', annotator)}"
        )
    for row in rows:
        click.echo(
            f"  {row.name:<30} {row.items:>6} items  {row.judgments:>6} judgments  "
            f"{row.judgments_per_item} per item  created {row.created_at:%Y-%m-%d %H:%M}"
        )
        if annotator:
            prefix = worker_prefix(current_study())
            url = f"{base_url.rstrip('/')}{prefix}/validate/{quote(row.name, safe='')}"
            click.echo(
                f"    link for {annotator!r}: {signed_link(url, f'round:{row.name}', annotator)}"
            )


@validation_group.command("import-judgments")
@click.argument("name")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@study_option
def import_judgments_command(name: str, path: Path) -> None:
    """Import judgments made elsewhere into round NAME (all or nothing).

    PATH is JSON lines of {"item_id", "validator", "verdict", "reasons", "explanation"}
    (BooookScore's "Agree" / "Partially agree" / "Don't agree" accepted), or BooookScore's
    validation-judgments.json itself, matched to the items made from it.
    """
    try:
        summary = import_judgments(name, path)
    except JudgmentImportError as exc:
        fail(f"{path}: {len(exc.problems)} problem(s); nothing imported:", exc.problems)
    click.echo(
        f"Imported {summary.added} judgment(s) into {name!r} ({summary.unchanged} already stored)"
    )
    for validator, count in sorted(summary.validators.items()):
        click.echo(f"  {validator}: {count}")


@validation_group.command("report")
@click.argument("name")
@report_format_option
@study_option
def report_command(name: str, fmt: str) -> None:
    """Precision of round NAME overall and by source, category, annotator and document."""
    round_ = find_round(name)
    if round_ is None:
        raise click.BadParameter(f"no round named {name!r}", param_hint="NAME")
    echo_report(compute_report(round_), fmt, format_csv, format_table)
