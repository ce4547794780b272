"""The exchange formats' files of the running study (issue 33, docs/interop.md): W3C Web
Annotation lines, brat folders, the Hugging Face dataset and the payment sheets, for the
commands (app/research/cli.py) and the researcher's downloads (app/research/downloads.py).

The formats themselves are app.interop's pure functions; the data comes from
app.research.study_data. Ids of people are pseudonymised with a key derived from the
app's SECRET_KEY (app.interop.pseudonyms) unless `keep_ids`.

Nothing here holds a whole export (issue 31): the W3C lines and the brat and dataset files
come one at a time (`w3c_lines`, `brat_members`, `dataset_members`), the records read as
they go and a document's text when its records come (`DocumentTexts`); `zip_stream` writes
a download's zip as its files come. `brat_files` and `dataset_files` are the same as dicts.
"""

from __future__ import annotations

import dataclasses
import shutil
import time
import zipfile
from collections.abc import Iterable, Iterator, Mapping
from itertools import groupby
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


class DocumentTexts(Mapping[str, tuple[str, ...]]):
    """Document id -> its paragraphs, read from the study when asked, one document at a
    time (the last one kept): the streamed exports read the records document by document,
    so no export holds every text."""

    def __init__(self) -> None:
        self._last: tuple[str, tuple[str, ...]] | None = None

    def __getitem__(self, document_id: str) -> tuple[str, ...]:
        if self._last is None or self._last[0] != document_id:
            found = document_texts([document_id])
            if document_id not in found:
                raise KeyError(document_id)
            self._last = (document_id, found[document_id])
        return self._last[1]

    def __iter__(self) -> Iterator[str]:
        return iter(document_texts())

    def __len__(self) -> int:
        return len(document_texts())


def w3c_lines(flt: ExportFilter, keep_ids: bool = False) -> Iterator[str]:
    """The W3C export: one Annotation a line (no newline), units in the export's order,
    the records read one by one."""
    return w3c.export_lines(
        annotation_records(flt),
        DocumentTexts(),
        study=study_name(),
        pseudonymise=pseudonyms(keep_ids),
    )


def _brat_readings(flt: ExportFilter) -> Iterator[tuple[str, str, list[dict[str, Any]]]]:
    """(annotator id, document id, their records on it) of every reading the filter
    covers, document by document: one document's records in memory at a time."""
    for document_id, sessions in groupby(readings(flt), key=lambda reading: reading[1]):
        chosen: dict[str, list[dict[str, Any]]] = {annotator: [] for annotator, _ in sessions}
        for record in annotation_records(dataclasses.replace(flt, document=document_id)):
            chosen.setdefault(record["annotator_id"], []).append(record)
        for annotator, records in chosen.items():
            yield annotator, document_id, records


def brat_members(flt: ExportFilter, keep_ids: bool = False) -> Iterator[tuple[str, str]]:
    """The brat export one file at a time, (relative path, text): a folder per annotator,
    the records read document by document. A first pass over the records (stopping at
    the first) says whether annotation.conf needs the Unlabelled type."""
    unlabelled = any(record.get("category") is None for record in annotation_records(flt))
    return brat.iter_folder(
        _brat_readings(flt),
        DocumentTexts(),
        conf=brat.annotation_conf(taxonomy_data(), unlabelled=unlabelled),
        pseudonymise=pseudonyms(keep_ids),
    )


def brat_files(flt: ExportFilter, keep_ids: bool = False) -> dict[str, str]:
    """The brat export, relative path -> text: a folder per annotator."""
    return dict(brat_members(flt, keep_ids))


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


def dataset_members(
    license_id: str = DEFAULT_LICENSE,
    keep_ids: bool = False,
    report: Mapping[str, Any] | None = None,
) -> Iterator[tuple[str, Iterator[str]]]:
    """The dataset folder one file at a time, (relative path, its text in pieces):
    data/*.jsonl a line at a time as the rows are read, then the README.md card;
    `report` is study-report's JSON for the card's figures (default: cached_report)."""
    license_id = dataset_card.check_license(license_id)
    taxonomy = current_taxonomy()
    report = cached_report() if report is None else report
    seen: dict[str, Any] = {"platforms": set(), "judgments": False}

    def sessions() -> Iterator[dict[str, Any]]:
        for row in session_records():
            if row.get("platform"):
                seen["platforms"].add(row["platform"])
            yield row

    def judgments() -> Iterator[dict[str, Any]]:
        for row in judgment_records():
            seen["judgments"] = True
            yield row

    def facts() -> dataset_card.StudyFacts:  # once the rows are written
        settings = protocol_settings(taxonomy, sorted(seen["platforms"]), seen["judgments"])
        return dataset_card.StudyFacts(
            title=taxonomy.title,
            license=license_id,
            languages=document_languages(),
            taxonomy=taxonomy_data(taxonomy),
            protocol=dataset_card.protocol_lines(settings),
            figures=dataset_card.figures_from_report(report),
            excluded=report.get("excluded") or {},
        )

    rows = {
        "annotations": annotation_records(ExportFilter()),
        "documents": document_records(),
        "sessions": sessions(),
        "judgments": judgments(),
    }
    return dataset_card.iter_dataset_files(rows, facts, pseudonyms(keep_ids))


def dataset_files(
    license_id: str = DEFAULT_LICENSE,
    keep_ids: bool = False,
    report: Mapping[str, Any] | None = None,
) -> dict[str, str]:
    """The dataset folder, relative path -> text (README.md card and data/*.jsonl)."""
    members = dataset_members(license_id, keep_ids, report)
    return {path: "".join(pieces) for path, pieces in members}


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


CHUNK = 64 * 1024  # bytes of the zip gathered before a download sends them


class _Sink:
    """Where zipfile writes a streamed archive: no seek, no tell (zipfile then writes each
    member's sizes in a data descriptor after it), the bytes taken away as they come."""

    def __init__(self) -> None:
        self.pieces: list[bytes] = []
        self.size = 0

    def write(self, data: bytes) -> int:
        self.pieces.append(bytes(data))
        self.size += len(data)
        return len(data)

    def flush(self) -> None:
        pass

    def take(self) -> bytes:
        data = b"".join(self.pieces)
        self.pieces, self.size = [], 0
        return data


def zip_stream(members: Iterable[tuple[str, str | Iterable[str]]], folder: str) -> Iterator[bytes]:
    """The files as a zip under one top folder, in pieces of about CHUNK bytes as it is
    written: each member from its text or its pieces of text, in the order given. The
    whole archive is never in memory (ZIP_DEFLATED, sizes in data descriptors; a member
    given in pieces has ZIP64 sizes, as its size is not known before it is written)."""
    sink = _Sink()
    with zipfile.ZipFile(sink, "w", zipfile.ZIP_DEFLATED) as archive:  # type: ignore[arg-type]
        for path, text in members:
            info = zipfile.ZipInfo(f"{folder}/{path}", date_time=time.localtime()[:6])
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o600 << 16  # as ZipFile.writestr gives a file
            whole = isinstance(text, str)
            pieces = (text.encode("utf-8"),) if whole else (p.encode("utf-8") for p in text)
            if whole:  # its size known: ZIP64 only when it needs it, as writestr decides
                info.file_size = len(pieces[0])  # type: ignore[index]
            # A file read as it goes has no size yet: ZIP64 sizes, so that any size fits.
            with archive.open(info, "w", force_zip64=not whole) as member:
                for piece in pieces:
                    member.write(piece)
                    if sink.size >= CHUNK:
                        yield sink.take()
            if sink.size >= CHUNK:
                yield sink.take()
    yield sink.take()


def zip_bytes(files: Mapping[str, str], folder: str) -> bytes:
    """The files as a zip, under one top folder (zip_stream's pieces joined)."""
    return b"".join(zip_stream(sorted(files.items()), folder))


def write_files(
    root: Path,
    files: Mapping[str, str] | Iterable[tuple[str, str | Iterable[str]]],
    progress=None,
) -> None:
    """Write relative path -> text under `root` (UTF-8, line ends as given), each file as
    it comes, from its text or its pieces of text (brat_members, dataset_members)."""
    for path, text in files.items() if isinstance(files, Mapping) else files:
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("wb") as out:
            for piece in (text,) if isinstance(text, str) else text:
                out.write(piece.encode("utf-8"))
        if progress is not None:
            progress(1)


def clear_folder(root: Path) -> None:
    """Remove what an export wrote into `root` (a folder that was new or empty)."""
    if root.is_dir():
        for child in root.iterdir():
            shutil.rmtree(child) if child.is_dir() else child.unlink()
