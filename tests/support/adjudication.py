"""A document with three annotators' submitted sessions, to adjudicate (shared by the
integration and Chromium tests)."""

from __future__ import annotations

from app.core.extensions import db
from app.models import Annotation, AnnotationSession, Annotator, Document, Paragraph
from app.studies import current_study_id

DOC_ID = "adj-doc"
PARAGRAPHS = [
    "Anna met Bob at the old mill. Nobody knew who Bob was.",
    "Then Anna met Bob again at the mill. It rained 🌧 all day.",
]
ANNOTATORS = ("ann-1", "ann-2", "ann-3")


def _span(paragraph: int, text: str, occurrence: int = 0) -> tuple[int, int, int]:
    """(paragraph, start, end) of the n-th occurrence of text (code points)."""
    where = -1
    for _ in range(occurrence + 1):
        where = PARAGRAPHS[paragraph].index(text, where + 1)
    return paragraph, where, where + len(text)


# (annotator, category, span, paired span, comment)
MARKS = [
    # Candidate 1: "Bob" / "met Bob" / "Bob at", new-person, three annotators.
    ("ann-1", "new-person", _span(0, "Bob"), None, "Who is Bob?"),
    ("ann-2", "new-person", _span(0, "met Bob"), None, None),
    ("ann-3", "new-person", _span(0, "Bob at"), None, "never introduced"),
    # Candidate 2: "the old mill", missing-info, one annotator.
    ("ann-2", "missing-info", _span(0, "the old mill"), None, None),
    # Candidate 3: repetition in paragraph 1 pointing back to paragraph 0, two annotators.
    ("ann-1", "repetition", _span(1, "Anna met Bob again"), _span(0, "Anna met Bob"), None),
    ("ann-3", "repetition", _span(1, "met Bob again"), _span(0, "met Bob"), None),
    # Candidate 4: after the emoji (code points != UTF-16 units), one annotator.
    ("ann-1", "ungrammatical", _span(1, "all day"), None, None),
]


def submitted_session(document_id: int, annotator: str, furthest: int) -> AnnotationSession:
    """A submitted session of the direct annotator `annotator` (created when new) on the
    document, at its paragraph `furthest`; flushed, so it has its id."""
    found = db.session.scalar(
        db.select(Annotator).filter_by(platform="direct", external_id=annotator)
    )
    if found is None:
        found = Annotator(platform="direct", external_id=annotator)
        db.session.add(found)
        db.session.flush()
    session = AnnotationSession(
        document_id=document_id,
        annotator_id=found.id,
        status="submitted",
        position=furthest,
        furthest=furthest,
        taxonomy_version="test",
        platform="direct",
    )
    db.session.add(session)
    db.session.flush()
    return session


def seed_adjudication_document() -> Document:
    """Import the document and the three submitted sessions; returns the document."""
    return seed_document(DOC_ID, PARAGRAPHS, MARKS)


def seed_document(
    external_id: str,
    paragraphs: list[str],
    marks: list[tuple],
    annotators: tuple[str, ...] = ANNOTATORS,
) -> Document:
    """A document with one submitted session per annotator (made on first use) holding
    `marks` (annotator, category, span, paired span, comment); returns the document."""
    document = Document(
        study_id=current_study_id(),
        external_id=external_id,
        title="Adjudication sample",
        content_hash=external_id.ljust(64, "0")[:64],
        paragraph_count=len(paragraphs),
    )
    document.paragraphs = [Paragraph(position=i, text=t) for i, t in enumerate(paragraphs)]
    db.session.add(document)
    db.session.flush()
    sessions = {}
    for name in annotators:
        sessions[name] = submitted_session(document.id, name, len(paragraphs) - 1)
    for index, (name, category, span, paired, comment) in enumerate(marks):
        paragraph, start, end = span
        values = {}
        if paired is not None:
            p_par, p_start, p_end = paired
            values = {
                "paired_paragraph_id": p_par,
                "paired_start": p_start,
                "paired_end": p_end,
                "paired_text": paragraphs[p_par][p_start:p_end],
            }
        db.session.add(
            Annotation(
                session_id=sessions[name].id,
                client_id=f"00000000-0000-4000-8000-{index:012d}",
                paragraph_id=paragraph,
                span_start=start,
                span_end=end,
                span_text=paragraphs[paragraph][start:end],
                category=category,
                comment=comment,
                **values,
            )
        )
    db.session.commit()
    return document


# The severity each mark of MARKS was given, in order (tests with severities).
MARK_SEVERITIES = ("major", "minor", "major", "minor", "minor", "major", "minor")


def seed_graded_document() -> Document:
    """seed_adjudication_document, each mark with its MARK_SEVERITIES entry (for a
    taxonomy with minor and major, tests/support/severities.py)."""
    document = seed_adjudication_document()
    rows = db.session.scalars(db.select(Annotation).order_by(Annotation.client_id)).all()
    for row, severity in zip(rows, MARK_SEVERITIES, strict=True):
        row.severity = severity
    db.session.commit()
    return document
