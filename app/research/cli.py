"""The research commands: `flask create-researcher EMAIL` (accounts for the researcher
console), `flask export-annotations` (the exports of app/research/downloads.py to a
file or standard output), `flask study-report` (the study's figures for papers), and
the analyses of docs/analyses.md (app.research.analyses): `flask judge-report`,
`flask recall-estimate`, `flask plan-study`."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import NoReturn

import click
from flask.cli import with_appcontext
from sqlalchemy import select
from werkzeug.security import generate_password_hash

from app.analysis.alttest import DEFAULT_EPSILON
from app.analysis.judge import SENTENCE, SPAN
from app.analysis.recall import METHODS
from app.core.cli_kit import echo_report, fail, report_format_option
from app.core.extensions import db
from app.exports.record import ExportFilter
from app.models import Document, Researcher
from app.research.agreement_figures import resolve_gamma
from app.research.analyses import (
    FIGURES,
    AnalysisError,
    compute_judge_report,
    compute_plan,
    compute_recall_estimate,
)
from app.research.analysis_tables import (
    judge_csv,
    judge_table,
    plan_csv,
    plan_table,
    recall_csv,
    recall_table,
)
from app.research.dashboard import DashboardView
from app.research.downloads import command_exports
from app.research.study_report import (
    format_csv,
    format_table,
    gamma_to_compute,
    load_report_study,
    study_report,
)

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
        and db.session.scalar(select(Document.id).where(Document.external_id == document)) is None
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


def _analysis_study(include_flagged: bool = False) -> DashboardView:
    click.echo("Loading the study's submitted readings...", err=True)
    return load_report_study(include_flagged=include_flagged)


def _refuse(exc: AnalysisError) -> NoReturn:
    fail(str(exc))


@click.command("judge-report")
@click.option(
    "--judge",
    "judge_name",
    required=True,
    help="The model: a source of suggestions (import-suggestions --source), or the "
    "platform:id of an annotator its annotations were imported under (import-annotations).",
)
@click.option(
    "--epsilon",
    type=click.FloatRange(0, 1),
    default=DEFAULT_EPSILON,
    show_default=True,
    help="The alt-test's cost-benefit margin. Calderon, Reichart & Dror (ACL 2025) suggest "
    "0.2 for experts, 0.15 for skilled annotators and 0.1 for crowd-workers; the default "
    "is the crowd-workers' value (docs/analyses.md).",
)
@click.option(
    "--unit",
    type=click.Choice([SPAN, SENTENCE]),
    default=SPAN,
    show_default=True,
    help="Match spans by the attention-check rule, or by the sentences they touch (for a "
    "judge that marks whole sentences, as GPT-4 does in BooookScore).",
)
@click.option(
    "--weighted", is_flag=True, help="Weigh each span by its severity (taxonomies with them)."
)
@report_format_option
@with_appcontext
def judge_report_command(
    judge_name: str, epsilon: float, unit: str, weighted: bool, fmt: str
) -> None:
    """Can this model replace an annotator? Its precision, recall and F1 against each human
    (overall, per category, per human, bootstrap 95% intervals over documents), the humans'
    F1 against each other, and the Alternative Annotator Test (Calderon, Reichart & Dror,
    ACL 2025: leave one human out, one-sided paired t-test with margin --epsilon,
    Benjamini-Yekutieli over annotators; it needs three humans or more). Scores 0-100;
    definitions in docs/analyses.md."""
    study = _analysis_study()
    click.echo(f"Scoring {judge_name} (1000 bootstrap resamples)...", err=True)
    try:
        report = compute_judge_report(study, judge_name, epsilon, unit, weighted)
    except AnalysisError as exc:
        _refuse(exc)
    echo_report(report, fmt, judge_csv, judge_table)


@click.command("recall-estimate")
@click.option(
    "--method",
    type=click.Choice(METHODS),
    default=None,
    help="Chapman (two annotators per document), loglinear-mt (model M_t, three or more) "
    "or chao (Chao's lower bound, errors of unequal difficulty); default: Chapman where "
    "every document has two readers, else loglinear-mt.",
)
@report_format_option
@with_appcontext
def recall_estimate_command(method: str | None, fmt: str) -> None:
    """How many errors did nobody find? Capture-recapture over the annotators of each
    document (spans of different annotators are one error when they match by the
    attention-check rule): errors found, estimated (95% interval) and the share found, per
    document, per category and for the study; on attention checks, the estimate from the
    planted errors' captures beside their true number. Definitions in docs/analyses.md."""
    study = _analysis_study()
    click.echo("Estimating...", err=True)
    try:
        report = compute_recall_estimate(study, method)
    except ValueError as exc:
        fail(str(exc))
    echo_report(report, fmt, recall_csv, recall_table)


@click.command("plan-study")
@click.option("--figure", type=click.Choice(FIGURES), required=True, help="The figure to plan for.")
@click.option(
    "--half-width",
    type=click.FloatRange(min=0, min_open=True),
    required=True,
    help="Target half-width of the figure's 95% interval, on its scale (BooookScore, "
    "error rate and precision 0-100; gamma a coefficient).",
)
@click.option("--hourly-rate", type=click.FloatRange(min=0), help="Pay per worker-hour.")
@click.option(
    "--fee-percent",
    type=click.FloatRange(min=0),
    default=0.0,
    show_default=True,
    help="The platform's fee on top of the pay, in percent (e.g. 33).",
)
@report_format_option
@with_appcontext
def plan_study_command(
    figure: str, half_width: float, hourly_rate: float | None, fee_percent: float, fmt: str
) -> None:
    """How many annotators per document and documents does the study need? From the
    submitted sessions so far as a pilot, by resampling its readings: for 2-6 annotators
    per document, the fewest documents whose 95% interval of --figure is at most
    --half-width, with the worker-minutes (from the paragraph timings) and the cost at
    --hourly-rate plus --fee-percent. Method in docs/analyses.md."""
    study = _analysis_study()
    click.echo(f"Resampling the pilot's readings for {figure}...", err=True)
    try:
        report = compute_plan(study, figure, half_width, hourly_rate, fee_percent)
    except AnalysisError as exc:
        _refuse(exc)
    echo_report(report, fmt, plan_csv, plan_table)
