"""The study of tests/support/interop.py inside a running app, for the exchange formats'
integration tests (issue 33): commands run through the CLI runner, the study imported
through our own JSONL, a validation round with judgments on some of its annotations."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from flask import Flask
from sqlalchemy import select

from app import create_app
from app.core.extensions import db
from app.models import (
    Annotation,
    AnnotationSession,
    Annotator,
    ValidationItem,
    ValidationJudgment,
    ValidationRound,
)
from app.studies import current_study_id
from tests.support.apps import dispose_engines, make_test_config
from tests.support.interop import DOCUMENTS, study_records
from tests.support.severities import severity_taxonomy


@contextmanager
def severity_app(database_uri: str, folder: Path) -> Iterator[Flask]:
    """The app with the default taxonomy plus severities (minor, major), inside its
    app context; the taxonomy file is written into `folder`."""
    application = create_app(
        make_test_config(database_uri, TAXONOMY_PATH=severity_taxonomy(folder))
    )
    with application.app_context():
        yield application
        db.session.remove()
        dispose_engines()


def run(runner, *args):
    """A flask command that must succeed; its result."""
    result = runner.invoke(args=[str(arg) for arg in args])
    assert result.exit_code == 0, result.output
    return result


def export_jsonl(runner, path: Path) -> list[dict]:
    """`export-annotations --format jsonl` into `path`, read back."""
    run(runner, "export-annotations", "--format", "jsonl", "--output", path)
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def import_documents(runner, folder: Path) -> None:
    """DOCUMENTS through `flask import-documents`."""
    documents = folder / "documents.json"
    documents.write_text(json.dumps(DOCUMENTS, ensure_ascii=False), "utf-8")
    run(runner, "import-documents", documents)


def seed_study(runner, folder: Path) -> list[dict]:
    """The study imported through our JSONL (three submitted sessions); its JSONL export."""
    import_documents(runner, folder)
    source = folder / "study.jsonl"
    source.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in study_records()),
                      "utf-8")  # fmt: skip
    run(runner, "import-annotations", "--format", "jsonl", source)
    return export_jsonl(runner, folder / "before.jsonl")


def judge_some(verdicts: dict[str, str], validator: str = "prolific:60ffeeddccbbaa9988776655"):
    """A round `r1` whose items are the live annotations with the given span texts, judged
    by `validator` as given ({span text: verdict}). Committed."""
    round_ = ValidationRound(study_id=current_study_id(), name="r1", judgments_per_item=1)
    db.session.add(round_)
    db.session.flush()
    rows = db.session.execute(
        select(Annotation, AnnotationSession.document_id, Annotator)
        .join(AnnotationSession, AnnotationSession.id == Annotation.session_id)
        .join(Annotator, Annotator.id == AnnotationSession.annotator_id)
        .order_by(Annotation.id)
    ).all()
    number = 0
    for annotation, document_id, annotator in rows:
        if annotation.span_text not in verdicts:
            continue
        number += 1
        item = ValidationItem(
            round_id=round_.id, external_id=f"it-{number}", source="test",
            document_id=document_id, order_key=number, labels=[annotation.category or ""],
            paragraph_id=annotation.paragraph_id, span_start=annotation.span_start,
            span_end=annotation.span_end, span_text=annotation.span_text,
            origin_annotator=annotator.label, annotation_id=annotation.id,
        )  # fmt: skip
        db.session.add(item)
        db.session.flush()
        db.session.add(ValidationJudgment(item_id=item.id, validator=validator,
                                          verdict=verdicts[annotation.span_text]))  # fmt: skip
    db.session.commit()
