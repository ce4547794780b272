"""The research commands: `flask create-researcher EMAIL` (accounts for the researcher
console), `flask export-annotations` (the exports of app/research/downloads.py to a
file or standard output, and the annotations as W3C Web Annotations or brat folders),
`flask study-report` (the study's figures for papers), the analyses of docs/analyses.md
(app.research.analyses): `flask judge-report`, `flask recall-estimate`, `flask
plan-study`, and the exchange formats of docs/interop.md: `flask export-dataset DIR` (a
Hugging Face dataset) and `flask payments` (the sheets to approve and pay workers)."""

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
from app.core.cli_kit import echo_report, fail, flag, report_format_option
from app.core.extensions import db
from app.exports.record import ExportFilter
from app.interop import payments
from app.interop.dataset_card import DEFAULT_CONFIG, check_license
from app.interop.records import InteropError
from app.models import Document, Researcher
from app.research.agreement_figures import resolve_gamma
from app.research.analyses import FIGURES, AnalysisError
from app.research.analysis_jobs import asked, stored_or_computed
from app.research.analysis_tables import (
    judge_csv,
    judge_table,
    plan_csv,
    plan_table,
    recall_csv,
    recall_table,
)
from app.research.document_uploads import DOCUMENT_IMPORT
from app.research.downloads import command_exports
from app.research.interop_files import (
    DEFAULT_LICENSE,
    ROLES,
    PaymentsRefused,
    bonus_rule,
    brat_files,
    dataset_files,
    payment_decisions,
    w3c_lines,
    write_files,
)
from app.research.study_figures import DASHBOARD_FIGURES  # noqa: F401 - registers its kind
from app.research.study_report import (
    format_csv,
    format_table,
    gamma_to_compute,
    iter_csv,
    iter_json,
    load_report_study,
    study_report,
)
from app.studies import current_study_id, default_study, share
from app.studies.cli import study_option

# The queue's kinds this package registers beyond the figures' (the worker must know them).
QUEUE_KINDS = (DOCUMENT_IMPORT,)
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

    A new researcher is an editor of the default study; other studies are shared with
    them by their owners (/research/studies/SLUG/).

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
        account = Researcher(email=email, password_hash=password_hash)
        db.session.add(account)
        db.session.flush()
        # An editor of the default study, as every researcher was before studies were
        # rows (docs/studies.md, "Sharing"); other studies are shared by their owners.
        share(default_study(), account, "editor")
        message = (
            f"Created researcher {email}, an editor of the default study. "
            "Log in at /research/login."
        )
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
INTEROP_FORMATS = ("w3c", "brat")  # the annotations in other tools' formats (docs/interop.md)


def _empty_folder(path: Path, option: str) -> None:
    """Refuse a folder that holds files already: files of an earlier export would mix in."""
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise click.BadParameter(
            f"{path} is not a new or empty folder; choose another", param_hint=option
        )


@click.command("export-annotations")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(_FORMATS + list(INTEROP_FORMATS)),
    default="jsonl",
    show_default=True,
    help="jsonl and csv: the app's records; w3c: W3C Web Annotations, one a line; brat: "
    "a folder per annotator of .txt and .ann files (needs --output DIR).",
)
@click.option(
    "--output",
    type=click.Path(writable=True, path_type=Path),
    help="File to write (default: standard output), a folder for --format brat. A progress "
    "bar shows on stderr.",
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
@flag("--keep-ids", "w3c and brat: keep worker ids (default: keyed pseudonyms).")
@with_appcontext
@study_option
def export_annotations_command(
    fmt: str,
    output: Path | None,
    document: str | None,
    submitted_only: bool,
    include_removed: bool,
    what: str,
    keep_ids: bool,
) -> None:
    """Export annotations (or sessions) as JSON lines or CSV (UTF-8 with BOM), or the
    annotations as W3C Web Annotations (--format w3c) or brat standoff (--format brat
    --output DIR); docs/interop.md.

    Ordered by document, session, paragraph and start. CSV starts with FALTE's columns
    (document_id, paragraph_id, span_text, span_start, span_end, error_category,
    paired_text, comment), then the rest. W3C and brat write worker ids as keyed
    pseudonyms unless --keep-ids.
    """
    flt = ExportFilter(document, submitted_only, include_removed)
    if fmt in INTEROP_FORMATS and what != "annotations":
        raise click.BadParameter(f"{fmt} exports annotations only", param_hint="--what")
    if keep_ids and fmt not in INTEROP_FORMATS:
        raise click.BadParameter(
            f"{fmt} always writes the ids; --keep-ids is for w3c and brat", param_hint="--keep-ids"
        )
    if fmt in INTEROP_FORMATS and include_removed:
        raise click.BadParameter(f"{fmt} holds live annotations only", param_hint="--format")
    export = _EXPORTS[what]
    if fmt not in export.formats and fmt not in INTEROP_FORMATS:
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
    if fmt == "brat":
        _export_brat(output, flt, keep_ids)
        return
    if output is not None and output.is_dir():
        raise click.BadParameter(f"{output} is a folder; name a file", param_hint="--output")
    if fmt == "w3c":
        _export_w3c(output, flt, keep_ids)
        return
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


def _export_w3c(output: Path | None, flt: ExportFilter, keep_ids: bool) -> None:
    try:
        lines = w3c_lines(flt, keep_ids)
        if output is None:
            for line in lines:
                click.echo(line)
            return
        written = 0
        with output.open("w", encoding="utf-8", newline="\n") as out:
            for line in lines:
                out.write(line + "\n")
                written += 1
                if written % 1000 == 0:
                    click.echo(f"  {written} Annotations written", err=True)
    except InteropError as exc:
        fail("The W3C export was refused:", [str(problem) for problem in exc.problems])
    click.echo(f"Wrote {written} W3C Annotations to {output}", err=True)


def _export_brat(output: Path | None, flt: ExportFilter, keep_ids: bool) -> None:
    if output is None:
        raise click.BadParameter("--format brat writes a folder: name it", param_hint="--output")
    _empty_folder(output, "--output")
    click.echo("Reading annotations and documents", err=True)
    try:
        files = brat_files(flt, keep_ids)
    except InteropError as exc:
        fail("The brat export was refused:", [str(problem) for problem in exc.problems])
    with click.progressbar(length=len(files), label="Writing brat files", file=sys.stderr) as bar:
        write_files(output, files, bar.update)
    folders = {path.split("/", 1)[0] for path in files}
    documents = sum(path.endswith(".ann") for path in files)
    click.echo(
        f"Wrote {documents} .ann files in {len(folders)} annotator folders to {output}", err=True
    )


@click.command("export-dataset")
@click.argument("folder", type=click.Path(file_okay=False, writable=True, path_type=Path))
@click.option(
    "--license",
    "license_id",
    default=DEFAULT_LICENSE,
    show_default=True,
    help="The Hub's license identifier (cc-by-4.0, cc0-1.0, odc-by, other...).",
)
@flag("--keep-ids", "Keep worker, session and validator ids (default: keyed pseudonyms).")
@with_appcontext
@study_option
def export_dataset_command(folder: Path, license_id: str, keep_ids: bool) -> None:
    """Write the study as a Hugging Face dataset into FOLDER (new or empty).

    Configurations annotations (the default), documents, sessions and judgments, each a
    JSON Lines file under data/, and a dataset card README.md generated from the study:
    the taxonomy with its definitions, the protocol, the counts, the figures of
    study-report with their definitions and intervals, what was excluded and why, and the
    offset convention. `datasets.load_dataset(FOLDER)` loads it; ids of people are keyed
    pseudonyms unless --keep-ids (docs/interop.md).
    """
    _empty_folder(folder, "FOLDER")
    try:
        check_license(license_id)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--license") from None
    study = load_report_study()
    with click.progressbar(
        length=gamma_to_compute(study), label="Computing gamma for the card", file=sys.stderr
    ) as bar:
        resolve_gamma(study, compute=True, progress=bar.update)
    report = study_report(study, compute=True)
    click.echo("Reading the study (annotations, documents, sessions, judgments)", err=True)
    try:
        files = dataset_files(license_id, keep_ids, report)
    except ValueError as exc:  # a record the formats refuse, no SECRET_KEY to key pseudonyms
        fail("The dataset cannot be written:", str(exc).splitlines())
    with click.progressbar(length=len(files), label="Writing the dataset", file=sys.stderr) as bar:
        write_files(folder, files, bar.update)
    rows = {path: text.count("\n") for path, text in files.items() if path.endswith(".jsonl")}
    for path, count in sorted(rows.items()):
        click.echo(f"  {path}: {count} rows")
    click.echo(f"Wrote the dataset to {folder} (default configuration: {DEFAULT_CONFIG})")


@click.command("payments")
@click.option(
    "--platform", type=click.Choice(payments.PLATFORMS), required=True, help="Whose sheets."
)
@click.option(
    "--output",
    type=click.Path(file_okay=False, writable=True, path_type=Path),
    required=True,
    help="Folder to write the sheets into (made if missing; the sheets are replaced).",
)
@click.option(
    "--role",
    type=click.Choice(ROLES),
    help="Only annotators or only validators (default: both).",
)
@with_appcontext
@study_option
def payments_command(platform: str, output: Path, role: str | None) -> None:
    """Write the payment sheets of one platform: who to approve, review, screen out or
    return, by outcome (completed: approve; failed_checks: review; failed_training: screen
    out; no_consent: return; flagged by the checks: review), and the bonuses of the
    study's `bonus:` rule. Prolific: bulk approve and bulk bonus lists; MTurk: the batch
    results CSV with Approve and Reject, and a bonus list for SendBonus; decisions.csv
    for both. Nothing is sent to the platform (docs/interop.md says where each goes)."""
    if output.exists() and not output.is_dir():
        raise click.BadParameter(f"{output} is not a folder", param_hint="--output")
    try:
        decisions = payment_decisions(platform, role)
        files = payments.sheets(decisions, platform=platform, rule=bonus_rule())
    except PaymentsRefused as exc:
        fail("The payment sheets cannot be written:", exc.problems)
    output.mkdir(parents=True, exist_ok=True)
    write_files(output, files)
    counts = payments.summary(decisions)
    click.echo(
        f"{len(decisions)} {platform} workers: "
        + ", ".join(f"{count} {decision.replace('_', ' ')}" for decision, count in counts.items())
    )
    for name in files:
        click.echo(f"  wrote {output / name}")


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
    of documents not yet in analysis_results (progress on standard error)."""
    study = load_report_study(id_prefix, include_flagged)
    with click.progressbar(
        length=gamma_to_compute(study), label="Computing gamma", file=sys.stderr
    ) as bar:
        resolve_gamma(study, compute=True, progress=bar.update)
    report = study_report(study, compute=True, id_prefix=id_prefix)
    if fmt == "table":
        echo_report(report, fmt, format_csv, format_table)
        return
    # JSON and CSV are written as they are encoded: a large study's report is never one
    # string (echo_report's output, piece by piece).
    for chunk in iter_json(report) if fmt == "json" else iter_csv(report):
        click.echo(chunk, nl=False)
    if fmt == "json":
        click.echo("")


def _analysis(name: str, parameters: dict, working: str) -> dict:
    """The analysis's JSON: stored in analysis_results (by the Analyses page, the queue or
    an earlier run), else computed here and stored (app.research.analysis_jobs)."""
    request = asked(name, parameters)

    computed: list[bool] = []

    def progress(_message: str) -> None:
        computed.append(True)
        click.echo("Loading the study's submitted readings...", err=True)
        click.echo(working, err=True)

    try:
        report, row = stored_or_computed(request, progress=progress)
    except AnalysisError as exc:
        _refuse(exc)
    if not computed and row.computed_at is not None:
        click.echo(
            f"Read from analysis_results (computed {row.computed_at:%Y-%m-%d %H:%M:%S} UTC)",
            err=True,
        )
    return report  # type: ignore[return-value]


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
@study_option
def judge_report_command(
    judge_name: str, epsilon: float, unit: str, weighted: bool, fmt: str
) -> None:
    """Can this model replace an annotator? Its precision, recall and F1 against each human
    (overall, per category, per human, bootstrap 95% intervals over documents), the humans'
    F1 against each other, and the Alternative Annotator Test (Calderon, Reichart & Dror,
    ACL 2025: leave one human out, one-sided paired t-test with margin --epsilon,
    Benjamini-Yekutieli over annotators; it needs three humans or more). Scores 0-100;
    definitions in docs/analyses.md."""
    parameters = {"judge": judge_name, "epsilon": epsilon, "unit": unit, "weighted": weighted}
    report = _analysis("judge", parameters, f"Scoring {judge_name} (1000 bootstrap resamples)...")
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
@study_option
def recall_estimate_command(method: str | None, fmt: str) -> None:
    """How many errors did nobody find? Capture-recapture over the annotators of each
    document (spans of different annotators are one error when they match by the
    attention-check rule): errors found, estimated (95% interval) and the share found, per
    document, per category and for the study; on attention checks, the estimate from the
    planted errors' captures beside their true number. Definitions in docs/analyses.md."""
    report = _analysis("recall", {"method": method}, "Estimating...")
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
@study_option
def plan_study_command(
    figure: str, half_width: float, hourly_rate: float | None, fee_percent: float, fmt: str
) -> None:
    """How many annotators per document and documents does the study need? From the
    submitted sessions so far as a pilot, by resampling its readings: for 2-6 annotators
    per document, the fewest documents whose 95% interval of --figure is at most
    --half-width, with the worker-minutes (from the paragraph timings) and the cost at
    --hourly-rate plus --fee-percent. Method in docs/analyses.md."""
    parameters = {
        "figure": figure,
        "half_width": half_width,
        "hourly_rate": hourly_rate,
        "fee_percent": fee_percent,
    }
    report = _analysis("plan", parameters, f"Resampling the pilot's readings for {figure}...")
    echo_report(report, fmt, plan_csv, plan_table)
