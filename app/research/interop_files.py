"""The exchange formats' files of the running study (issue 33, docs/interop.md): W3C Web
Annotation lines, brat folders, the Hugging Face dataset and the payment sheets, for the
commands (app/research/cli.py) and the researcher's downloads (app/research/downloads.py).

The formats themselves are app.interop's pure functions; the data comes from
app.research.study_data. Ids of people are pseudonymised with a key derived from the
app's SECRET_KEY (app.interop.pseudonyms) unless `keep_ids`.
"""

from __future__ import annotations

import dataclasses
import io
import zipfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from flask import current_app

from app.exports.record import ExportFilter
from app.interop import brat, dataset_card, payments, w3c
from app.interop.pseudonyms import Pseudonyms
from app.research.agreement_figures import resolve_gamma
from app.research.study_data import (
    annotation_records,
    document_languages,
    document_records,
    document_texts,
    judgment_records,
    payment_rows,
    readings,
    session_records,
    study_name,
)
from app.research.study_report import load_report_study, study_report
from app.taxonomy import Taxonomy, current_taxonomy

DEFAULT_LICENSE = "other"
ROLES = ("annotator", "validator")


def pseudonyms(keep_ids: bool = False) -> Pseudonyms:
    """The app's pseudonyms (or the ids kept)."""
    return Pseudonyms(current_app.config.get("SECRET_KEY"), keep_ids=keep_ids)


def taxonomy_data(taxonomy: Taxonomy | None = None) -> dict[str, Any]:
    """The taxonomy as the formats take it: categories and severities as plain dicts."""
    taxonomy = taxonomy or current_taxonomy()
    return {
        "categories": [
            {"key": c.key, "name": c.name, "type": c.type, "description": c.description}
            for c in taxonomy.categories
        ],
        "severities": [dataclasses.asdict(s) for s in taxonomy.severities],
    }


# --- W3C and brat ------------------------------------------------------------------------


def w3c_lines(flt: ExportFilter, keep_ids: bool = False) -> Iterator[str]:
    """The W3C export: one Annotation a line (no newline), units in the export's order."""
    records = list(annotation_records(flt))
    texts = document_texts({record["document_id"] for record in records})
    return w3c.export_lines(records, texts, study=study_name(), pseudonymise=pseudonyms(keep_ids))


def brat_files(flt: ExportFilter, keep_ids: bool = False) -> dict[str, str]:
    """The brat export, relative path -> text: a folder per annotator."""
    records = list(annotation_records(flt))
    sessions = readings(flt)
    texts = document_texts({document for _, document in sessions})
    return brat.export_folder(
        records,
        texts,
        taxonomy=taxonomy_data(),
        pseudonymise=pseudonyms(keep_ids),
        sessions=sessions,
    )


# --- the Hugging Face dataset ------------------------------------------------------------


def protocol_settings(taxonomy: Taxonomy, platforms: list[str], validation: bool) -> dict:
    """The study's settings as app.interop.dataset_card.protocol_lines takes them."""
    study = taxonomy.study
    suggestions = [] if study.suggestions == "none" and not study.suggestion_arms else ["a model"]
    return {
        "platforms": platforms,
        "annotators_per_document": study.annotators_per_document,
        "consent": taxonomy.consent is not None,
        "surveys": [which for which in ("before", "after") if taxonomy.survey.questions(which)],
        "training": taxonomy.training.enabled,
        "attention_checks": study.attention_checks if study.attention_check_share else None,
        "severities": bool(taxonomy.severities),
        "suggestions": suggestions,
        "validation": validation,
    }


def cached_report() -> dict[str, Any]:
    """study-report's JSON with gamma as cached (a download never waits for it)."""
    study = load_report_study()
    resolve_gamma(study)
    return study_report(study)


def dataset_files(
    license_id: str = DEFAULT_LICENSE,
    keep_ids: bool = False,
    report: Mapping[str, Any] | None = None,
) -> dict[str, str]:
    """The dataset folder, relative path -> text (README.md card and data/*.jsonl);
    `report` is study-report's JSON for the card's figures (default: cached_report)."""
    license_id = dataset_card.check_license(license_id)
    taxonomy = current_taxonomy()
    rows = {
        "annotations": list(annotation_records(ExportFilter())),
        "documents": list(document_records()),
        "sessions": list(session_records()),
        "judgments": list(judgment_records()),
    }
    report = cached_report() if report is None else report
    platforms = sorted({row["platform"] for row in rows["sessions"] if row.get("platform")})
    facts = dataset_card.StudyFacts(
        title=taxonomy.title,
        license=license_id,
        languages=document_languages(),
        taxonomy=taxonomy_data(taxonomy),
        protocol=dataset_card.protocol_lines(
            protocol_settings(taxonomy, platforms, bool(rows["judgments"]))
        ),
        figures=dataset_card.figures_from_report(report),
        excluded=report.get("excluded") or {},
    )
    return dataset_card.dataset_files(rows, facts, pseudonyms(keep_ids))


# --- payments ----------------------------------------------------------------------------


class PaymentsRefused(ValueError):
    """The sheets cannot be written; `problems` says why, one line each."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


def bonus_rule(taxonomy: Taxonomy | None = None) -> payments.BonusRule:
    """The study's bonus rule (`study: bonus:` in the taxonomy; none: no bonus)."""
    return (taxonomy or current_taxonomy()).study.bonus or payments.BonusRule()


def payment_decisions(platform: str, role: str | None = None) -> list[payments.Decision]:
    """Every worker of `platform` (of one role, or both) with a decision and a bonus."""
    rows = [r for r in payment_rows() if role is None or r["role"] == role]
    both = {
        r["worker_id"] for r in rows if r["role"] == "annotator" and r["platform"] == platform
    } & {r["worker_id"] for r in rows if r["role"] == "validator" and r["platform"] == platform}
    if both and platform == "prolific":
        raise PaymentsRefused(
            [f"worker {worker} is both an annotator and a validator: write the sheets of "
             "each role on its own (--role annotator, then --role validator)"
             for worker in sorted(both)]
        )  # fmt: skip
    try:
        return payments.decide_all(rows, platform, bonus_rule())
    except payments.InteropError as exc:
        raise PaymentsRefused([str(problem) for problem in exc.problems]) from None
    except ValueError as exc:
        raise PaymentsRefused([str(exc)]) from None


def payment_files(platform: str, role: str | None = None) -> dict[str, str]:
    """The sheets of one platform, file name -> text."""
    decisions = payment_decisions(platform, role)
    return payments.sheets(decisions, platform=platform, rule=bonus_rule())


# --- files -------------------------------------------------------------------------------


def zip_bytes(files: Mapping[str, str], folder: str) -> bytes:
    """The files as a zip, under one top folder."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, text in sorted(files.items()):
            archive.writestr(f"{folder}/{path}", text.encode("utf-8"))
    return out.getvalue()


def write_files(root: Path, files: Mapping[str, str], progress=None) -> None:
    """Write relative path -> text under `root` (UTF-8, line ends as given)."""
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text.encode("utf-8"))
        if progress is not None:
            progress(1)
