"""The research commands: `flask create-researcher EMAIL` (accounts for the researcher
console), `flask export-annotations` (the exports of app/research/downloads.py to a
file or standard output) and `flask study-report` (the study's figures for papers)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import click
from flask.cli import with_appcontext
from sqlalchemy import select
from werkzeug.security import generate_password_hash

from app.core.cli_kit import echo_report, report_format_option
from app.core.extensions import db
from app.exports.record import ExportFilter
from app.models import Document, Researcher
from app.research.agreement_figures import resolve_gamma
from app.research.downloads import command_exports
from app.research.study_report import (
    format_csv,
    format_table,
    gamma_to_compute,
    load_report_study,
    study_report,
)
from app.studies import current_study_id
from app.studies.cli import study_option

MIN_PASSWORD_LENGTH = 10
MAX_PASSWORD_LENGTH = 1000
EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


def normalise_email(email: str) -> str:
    """Trimmed, lower-case e-mail; ClickException when it does not look like one."""
    email = email.strip().lower()
    if len(email) > 320 or not EMAIL_RE.match(email):
        raise click.BadParameter(f"{email!r} is not an e-mail address.", param_hint="EMAIL")
    return email


def check_password(password: str) -> str:
    """The password when long enough; ClickException otherwise."""
    if len(password) < MIN_PASSWORD_LENGTH:
        raise click.ClickException(
            f"The password must have at least {MIN_PASSWORD_LENGTH} characters "
            f"(it has {len(password)})."
        )
    if len(password) > MAX_PASSWORD_LENGTH:
        raise click.ClickException(f"The password must have at most {MAX_PASSWORD_LENGTH}.")
    return password


def _read_password(from_stdin: bool) -> str:
    if from_stdin:
        # The first line only, without its line break: `echo "$PW" | flask ...` works.
        return sys.stdin.readline().rstrip("\r\n")
    return click.prompt(
        f"Password (at least {MIN_PASSWORD_LENGTH} characters)",
        hide_input=True,
        confirmation_prompt="Repeat the password",
    )


@click.command("create-researcher")
@click.argument("email")
@click.option(
    "--password-stdin",
    is_flag=True,
    help="Read the password from the first line of standard input instead of prompting.",
)
@click.option(
    "--reset",
    is_flag=True,
    help="Change the password of an existing account instead of creating one.",
)
@with_appcontext
def create_researcher_command(email: str, password_stdin: bool, reset: bool) -> None:
    """Create a researcher account for the /research/ console (or --reset its password).

    Prompts for the password twice unless --password-stdin is given. Passwords need at
    least 10 characters and are stored as salted hashes (werkzeug).
    """
    email = normalise_email(email)
    existing = db.session.scalars(db.select(Researcher).filter_by(email=email)).first()
    if existing is not None and not reset:
        raise click.ClickException(
            f"A researcher with e-mail {email} already exists. Use --reset to change the password."
        )
    if existing is None and reset:
        raise click.ClickException(f"No researcher has e-mail {email}; nothing to reset.")
    password_hash = generate_password_hash(check_password(_read_password(password_stdin)))
    if existing is None:
        db.session.add(Researcher(email=email, password_hash=password_hash))
        message = f"Created researcher {email}. Log in at /research/login."
    else:
        existing.password_hash = password_hash
        existing.end_sessions()  # whoever was logged in with the old password is logged out
        message = (
            f"Changed the password of researcher {email}; every existing login of it has ended."
        )
    db.session.commit()
    click.echo(message)


_EXPORTS = command_exports("export-annotations")
_FORMATS = sorted({fmt for export in _EXPORTS.values() for fmt in export.formats}, reverse=True)


@click.command("export-annotations")
@click.option("--format", "fmt", type=click.Choice(_FORMATS), default="jsonl", show_default=True)
@click.option(
    "--output",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    help="File to write (default: standard output). A progress bar shows on stderr.",
)
@click.option("--document", help="Only this document (its external id).")
@click.option("--submitted-only", is_flag=True, help="Only sessions the worker submitted.")
@click.option(
    "--include-removed",
    is_flag=True,
    help="Also annotations the worker removed, with their removed_at time.",
)
@click.option(
    "--what",
    type=click.Choice(list(_EXPORTS)),
    default="annotations",
    show_default=True,
    help="One row per annotation, per session (status and counts), per session and "
    "paragraph reached (seconds visible, active seconds, annotations, words), per "
    "session and survey question answered (surveys), per training attempt "
    "(docs/training.md), or per model suggestion with the workers' decisions on it "
    "(suggestions, JSONL only).",
)
@with_appcontext
@study_option
def export_annotations_command(
    fmt: str,
    output: Path | None,
    document: str | None,
    submitted_only: bool,
    include_removed: bool,
    what: str,
) -> None:
    """Export annotations (or sessions) as JSON lines or CSV (UTF-8 with BOM).

    Ordered by document, session, paragraph and start. CSV starts with FALTE's columns
    (document_id, paragraph_id, span_text, span_start, span_end, error_category,
    paired_text, comment), then the rest.
    """
    export = _EXPORTS[what]
    flt = ExportFilter(document, submitted_only, include_removed)
    if fmt not in export.formats:
        formats = " or ".join(export.formats)
        raise click.BadParameter(f"{what} export as {formats} only", param_hint="--format")
    if (
        document is not None
        and db.session.scalar(
            select(Document.id).where(
                Document.external_id == document, Document.study_id == current_study_id()
            )
        )
        is None
    ):
        raise click.BadParameter(f"no document with id {document!r}", param_hint="--document")
    if output is None:
        export.write(sys.stdout, fmt, flt)
        return
    total = export.count(flt)
    with (
        output.open("w", encoding="utf-8", newline="") as out,
        click.progressbar(length=total, label=f"Exporting {what}", file=sys.stderr) as bar,
    ):
        export.write(out, fmt, flt, bar.update)
    click.echo(f"Wrote {total} {what} to {output}", err=True)


@click.command("study-report")
@report_format_option
@click.option("--id-prefix", default=None, help="Only documents whose id starts with this.")
@click.option(
    "--include-flagged",
    is_flag=True,
    help="Count the sessions of workers who failed checks or training or were flagged by "
    "their attention checks (left out by default; listed under excluded.annotators).",
)
@with_appcontext
@study_option
def study_report_command(fmt: str, id_prefix: str | None, include_flagged: bool) -> None:
    """Print the study's figures: BooookScore per document and overall (0-100), errors per
    sentence by category (BooookScore Table 1), agreement (alpha, span F1, gamma,
    linked-pair F1, each with a bootstrap 95% interval over documents), precision and
    recall against gold (attention checks and adjudicated gold sets); attention-check
    documents and the workers left out (failed checks, failed training, flagged by their
    attention checks) are listed as excluded and counted in no figure. Computes the gamma
    of documents not yet in the gamma cache (progress on standard error)."""
    study = load_report_study(id_prefix, include_flagged)
    with click.progressbar(
        length=gamma_to_compute(study), label="Computing gamma", file=sys.stderr
    ) as bar:
        resolve_gamma(study, compute=True, progress=bar.update)
    echo_report(study_report(study), fmt, format_csv, format_table)
