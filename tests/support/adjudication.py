"""A document with three annotators' submitted sessions, to adjudicate (shared by the
integration and Chromium tests), and a researcher's adjudication API calls."""

from __future__ import annotations

import re
import uuid

from app.core.extensions import db
from app.models import Annotation, AnnotationSession, Document, Paragraph
from app.studies import current_study_id
from tests.support.rows import add_span, direct_annotator

DOC_ID = "adj-doc"
PARAGRAPHS = [
    "Anna met Bob at the old mill. Nobody knew who Bob was.",
    "Then Anna met Bob again at the mill. It rained 🌧 all day.",
]
ANNOTATORS = ("ann-1", "ann-2", "ann-3")
STATE_URL = f"/research/api/documents/{DOC_ID}/adjudication"
DECIDE_URL = f"{STATE_URL}/decisions"
JSON = {"Accept": "application/json"}


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


# A second, smaller document: all three mark "Clara" (new-person); ann-1 marks the snow
# sentence too.
SECOND_PARAGRAPHS = ["Clara left the farm in May. She came back in June.", "Then it snowed."]
SECOND_MARKS = [
    ("ann-1", "new-person", (0, 0, 5), None, None),
    ("ann-2", "new-person", (0, 0, 5), None, None),
    ("ann-3", "new-person", (0, 0, 11), None, None),
    ("ann-1", "abrupt-transition", (1, 0, 15), None, None),
]


def submitted_session(document_id: int, annotator: str, furthest: int) -> AnnotationSession:
    """A submitted session of the direct annotator `annotator` (created when new) on the
    document, at its paragraph `furthest`; flushed, so it has its id."""
    session = AnnotationSession(
        document_id=document_id,
        annotator_id=direct_annotator(annotator).id,
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
        add_span(
            sessions[name].id,
            paragraph,
            start,
            paragraphs[paragraph][start:end],
            category,
            client_id=f"00000000-0000-4000-8000-{index:012d}",
            comment=comment,
            **values,
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


# --- the researcher's adjudication API ------------------------------------------------


def csrf_token(client) -> str:
    """The CSRF token of the adjudication page of DOC_ID."""
    page = client.get(f"/research/documents/{DOC_ID}/adjudicate")
    assert page.status_code == 200
    return re.search(r'name="csrf-token" content="([^"]+)"', page.text).group(1)


def decide(client, token, **body):
    """POST a decision on DOC_ID (a fresh id unless given)."""
    body.setdefault("id", str(uuid.uuid4()))
    return client.post(DECIDE_URL, json=body, headers={"X-CSRFToken": token, **JSON})


def candidates(client) -> list[dict]:
    """DOC_ID's candidates, as the page reads them."""
    return client.get(STATE_URL, headers=JSON).get_json()["candidates"]


def by_category(client, category: str) -> dict:
    """The first candidate of a category."""
    return next(c for c in candidates(client) if c["category"] == category)


def adjudicate_all(client) -> None:
    """Accept, merge, reject, keep one as is and add an own span."""
    token = csrf_token(client)
    decide(client, token, candidate=by_category(client, "new-person")["key"], decision="merge")
    decide(client, token, candidate=by_category(client, "missing-info")["key"], decision="reject")
    decide(client, token, candidate=by_category(client, "repetition")["key"], decision="accept")
    decide(
        client,
        token,
        decision="own",
        category="abrupt-transition",
        span={"paragraph_id": 1, "start": 0, "end": 4, "text": "Then"},
        note="my own",
    )
