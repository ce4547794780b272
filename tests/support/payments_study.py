"""A simulated study to pay (issue 33, point 4): Prolific and MTurk workers with every
outcome, one completed worker flagged by the attention check, validated annotations and
planted errors found, validators, and a worker id made to be a spreadsheet formula.

The attention check `check-1` has two planted (gold) errors, "Anna" and "Bob"; `doc-1` is
an ordinary document. Validator PVAL1 judged annotations (agree and partial count as
validated, disagree does not). What each worker must get is spelled out in the tests.
"""

from __future__ import annotations

import uuid

from app.core.extensions import db
from app.models import (
    Annotation,
    AnnotationSession,
    Annotator,
    Document,
    Paragraph,
    ValidationItem,
    ValidationJudgment,
    ValidationRound,
    ValidationSession,
    utcnow,
)
from app.studies import current_study_id

PARAGRAPHS = ["Anna met Bob. They talked.", "Then it rained."]
ANNA, BOB = (0, 0, 4, "new-person"), (0, 9, 12, "new-person")
GOLD = [{"paragraph_id": 0, "start": 0, "end": 4, "category": "new-person"},
        {"paragraph_id": 0, "start": 9, "end": 12, "category": "new-person"}]  # fmt: skip
RAINED = (1, 5, 14, "abrupt-transition")
TALKED = (0, 19, 25, "abrupt-transition")
BONUS = "  bonus:\n    per_validated: 0.1\n    per_planted: 0.5\n    cap: 1\n    currency: USD\n"


def bonus_taxonomy(folder, default_taxonomy) -> str:
    """The default taxonomy with the bonus rule above in its study: section."""
    text = default_taxonomy.read_text("utf-8").replace("study:\n", "study:\n" + BONUS, 1)
    path = folder / "bonus.yaml"
    path.write_text(text, "utf-8")
    return str(path)


def _document(external_id: str, gold=None) -> Document:
    row = Document(study_id=current_study_id(), external_id=external_id,
                   content_hash=external_id.ljust(64, "0")[:64],
                   paragraph_count=len(PARAGRAPHS), gold=gold)  # fmt: skip
    row.paragraphs = [Paragraph(position=i, text=t) for i, t in enumerate(PARAGRAPHS)]
    db.session.add(row)
    db.session.flush()
    return row


def _annotator(platform: str, external_id: str) -> Annotator:
    found = db.session.scalar(db.select(Annotator).filter_by(platform=platform,
                                                             external_id=external_id))  # fmt: skip
    if found is None:
        found = Annotator(platform=platform, external_id=external_id)
        db.session.add(found)
        db.session.flush()
    return found


def _session(document, platform, worker, spans=(), outcome="completed", status="submitted",
             assignment=None, hit=None) -> list[Annotation]:  # fmt: skip
    params = {"assignment_id": assignment, "hit_id": hit} if assignment else {}
    row = AnnotationSession(
        document_id=document.id, annotator_id=_annotator(platform, worker).id, status=status,
        furthest=1, position=0, taxonomy_version="test", platform=platform,
        platform_params=params, outcome=outcome, is_attention_check=bool(document.gold),
        submitted_at=utcnow() if status == "submitted" else None, submission=assignment,
    )  # fmt: skip
    db.session.add(row)
    db.session.flush()
    annotations = []
    for p, start, end, category in spans:
        annotations.append(
            Annotation(session_id=row.id, client_id=str(uuid.uuid4()), paragraph_id=p,
                       span_start=start, span_end=end, span_text=PARAGRAPHS[p][start:end],
                       category=category)
        )  # fmt: skip
    db.session.add_all(annotations)
    db.session.flush()
    return annotations


def _validator(platform: str, worker: str, status: str) -> ValidationSession:
    round_ = db.session.scalar(db.select(ValidationRound).filter_by(name="r1"))
    session = ValidationSession(round_id=round_.id, annotator_id=_annotator(platform, worker).id,
                                status=status, platform=platform)  # fmt: skip
    db.session.add(session)
    db.session.flush()
    return session


def _judge(annotation: Annotation, verdict: str, session: ValidationSession, number: int) -> None:
    item = ValidationItem(
        round_id=session.round_id, external_id=f"it-{number}", source="test",
        document_id=annotation.session.document_id, order_key=number,
        labels=[annotation.category], paragraph_id=annotation.paragraph_id,
        span_start=annotation.span_start, span_end=annotation.span_end,
        span_text=annotation.span_text, annotation_id=annotation.id,
    )  # fmt: skip
    db.session.add(item)
    db.session.flush()
    judgment = ValidationJudgment(item_id=item.id, validator="prolific:PVAL1",
                                  validation_session_id=session.id, verdict=verdict)  # fmt: skip
    db.session.add(judgment)


def seed_payments_study() -> None:
    """The study to pay (see the module's docstring). Committed."""
    check, doc = _document("check-1", GOLD), _document("doc-1")
    db.session.add(ValidationRound(study_id=current_study_id(), name="r1", judgments_per_item=1))
    db.session.flush()
    # Prolific annotators.
    _session(check, "prolific", "PGOOD1", [ANNA, BOB])  # 2 planted found
    good = _session(doc, "prolific", "PGOOD1", [RAINED, TALKED, BOB, ANNA])
    _session(check, "prolific", "PGOOD2", [ANNA])  # 1 planted found
    good2 = _session(doc, "prolific", "PGOOD2", [RAINED])
    _session(check, "prolific", "PLAZY", [(0, 0, 26, "new-person")])  # flagged: found nothing
    lazy = _session(doc, "prolific", "PLAZY", [RAINED])
    _session(check, "prolific", "PFAILCHK", [], outcome="failed_checks")
    _session(doc, "prolific", "PTRAIN", [], outcome="failed_training", status="abandoned")
    _session(doc, "prolific", "PNOCONS", [], outcome="no_consent", status="abandoned")
    _session(doc, "prolific", "POPEN", [RAINED], outcome=None, status="active")
    _session(doc, "prolific", "=HYPERLINK(1)", [], outcome="completed")
    # MTurk annotators, one assignment a session.
    m_good = _session(doc, "mturk", "MGOOD", [RAINED, TALKED], assignment="A1", hit="H1")
    _session(check, "mturk", "MGOOD", [ANNA], assignment="A2", hit="H2")
    _session(doc, "mturk", "MTRAIN", [], outcome="failed_training", assignment="A3", hit="H1")
    _session(doc, "mturk", "MFAILCHK", [], outcome="failed_checks", assignment="A4", hit="H1")
    _session(doc, "mturk", "MNOCONS", [], outcome="no_consent", assignment="A5", hit="H1")
    # Validators: PVAL1 finished its round, PVAL2 did not.
    finished = _validator("prolific", "PVAL1", "submitted")
    _validator("prolific", "PVAL2", "active")
    verdicts = [(good[0], "agree"), (good[1], "partial"), (good[2], "agree"),
                (good[3], "disagree"), (good2[0], "partial"), (lazy[0], "agree"),
                (m_good[0], "agree"), (m_good[1], "disagree")]  # fmt: skip
    for number, (annotation, verdict) in enumerate(verdicts, 1):
        _judge(annotation, verdict, finished, number)
    db.session.commit()
