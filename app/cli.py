"""The registry of the project's flask commands: `register` adds them all, so `flask --help`
lists everything in one place. Each package keeps its commands in its own cli.py; the
helpers they share (refusals, import notes, report formats, common options) are in
app/core/cli_kit.py, which imports none of them (docs/architecture.md, "Add a command")."""

from __future__ import annotations

from flask import Flask

from app.adjudication.cli import agreement_command, export_gold_command, promote_gold_command
from app.crowd.checks.cli import plant_checks_command
from app.crowd.cli import list_documents_command
from app.imports.cli import import_annotations_command, import_documents_command
from app.jobs.cli import analysis_worker_command
from app.research.cli import (
    create_researcher_command,
    export_annotations_command,
    export_dataset_command,
    judge_report_command,
    payments_command,
    plan_study_command,
    recall_estimate_command,
    study_report_command,
)
from app.studies.cli import (
    create_study_command,
    delete_documents_command,
    list_studies_command,
    retire_documents_command,
    study_status_command,
)
from app.suggestions.cli import import_suggestions_command
from app.taxonomy.cli import check_taxonomy_command
from app.validation.cli import validation_group

COMMANDS = (
    # studies (each command below that reads or writes a study's data takes --study SLUG)
    create_study_command,
    list_studies_command,
    study_status_command,
    # the taxonomy and the documents
    check_taxonomy_command,
    import_documents_command,
    list_documents_command,
    retire_documents_command,
    delete_documents_command,
    plant_checks_command,
    # annotations and suggestions made elsewhere
    import_annotations_command,
    import_suggestions_command,
    # validation rounds (a group: create-round, list-rounds, import-judgments, report)
    validation_group,
    # adjudication
    export_gold_command,
    promote_gold_command,
    agreement_command,
    # the researcher's exports and figures
    create_researcher_command,
    export_annotations_command,
    study_report_command,
    # the analyses (docs/analyses.md)
    judge_report_command,
    recall_estimate_command,
    plan_study_command,
    # exchange formats: the Hugging Face dataset, the payment sheets (docs/interop.md)
    export_dataset_command,
    payments_command,
    # the analysis queue's worker (Procfile `worker:`)
    analysis_worker_command,
)


def register(app: Flask) -> None:
    """Attach every command to app.cli."""
    for command in COMMANDS:
        app.cli.add_command(command)
