"""What the validator API answers: items, judgments and the end of a round, as JSON.

Blind by construction: `item_json` builds the only item representation a validator
receives, and it has no source, origin annotator or annotation link; its id is the
item's random `public_id`, never the researcher's own id (a suggestion's id names its
model).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from app.core.extensions import db
from app.crowd.settings import study_settings
from app.models import Paragraph, ValidationItem, ValidationJudgment, ValidationSession
from app.rules.outcomes import CODE_PLACEHOLDER, completion_address, shown_code
from app.rules.platforms import mturk_target
from app.taxonomy import current_taxonomy
from app.validation.reasons import item_protocol


def item_json(item: ValidationItem) -> dict[str, Any]:
    """What a validator sees of an item: never its source or who made it."""
    taxonomy = current_taxonomy()
    paragraphs = db.session.execute(
        select(Paragraph.position, Paragraph.text)
        .where(Paragraph.document_id == item.document_id)
        .order_by(Paragraph.position)
    ).all()
    document = item.document

    def span(paragraph_id, start, end, text):
        return {"paragraph_id": paragraph_id, "start": start, "end": end, "text": text}

    names = []
    for label in item.labels or []:
        category = taxonomy.category(label)
        names.append(category.name if category else label)
    return {
        "id": item.public_id,
        "document": {
            "id": document.external_id,
            "title": document.title,
            "language": document.language,
            "direction": document.direction,
            "paragraphs": [{"paragraph_id": p, "text": t} for p, t in paragraphs],
        },
        "span": span(item.paragraph_id, item.span_start, item.span_end, item.span_text),
        "paired_span": None
        if item.paired_text is None
        else span(item.paired_paragraph_id, item.paired_start, item.paired_end, item.paired_text),
        "labels": list(item.labels or []),
        "label_names": names,
        "label_descriptions": [
            category.description if (category := taxonomy.category(label)) else None
            for label in item.labels or []
        ],
        "question": item.question,
        "comment": item.comment,
        "protocol": item_protocol(item.question),
    }


def judgment_json(judgment: ValidationJudgment) -> dict[str, Any]:
    """A judgment as the validator API returns it."""
    return {
        "item_id": judgment.item.public_id,
        "verdict": judgment.verdict,
        "reasons": list(judgment.reasons or []),
        "explanation": judgment.explanation,
    }


def completion_json(session: ValidationSession, done: int) -> dict[str, Any]:
    """Where a validator who has no item left goes: code, URL, MTurk form, outcome."""
    # A completion code is earned by judging at least one item: a validator who arrives
    # when every item is taken is told so, not paid for nothing.
    # An MTurk validator's HIT is submitted by posting the assignment back to MTurk
    # (ExternalQuestion), as the annotator's completion page does: `mturk` says where.
    # A validator who finishes a round completed it: the outcome `completed`, with its
    # completion URL, as for annotators.
    # `shown_code` is the code the validator sees (app.rules.outcomes.shown_code): the study's
    # platform code for `completed`, the session's own where it has none; None where the
    # Return link alone completes. `completion_code` stays the session's own (MTurk's form).
    if not done:
        return {
            "completion_code": None,
            "completion_url": None,
            "mturk": None,
            "outcome": None,
            "shown_code": None,
        }
    url = None
    shown = session.completion_code
    if session.platform == "prolific":
        settings = study_settings()
        url = settings.completion_address("completed", session.completion_code)
        shown = shown_code(settings.completion_template("completed"), session.completion_code)
    return {
        "completion_code": session.completion_code,
        "shown_code": shown,
        "completion_url": url,
        "mturk": mturk_target(session.platform, session.platform_params or {}),
        "outcome": "completed",
    }


def declined_json(session: ValidationSession) -> dict[str, Any]:
    """Where a validator who declined the consent goes: the study's no_consent address
    when it is one fixed address, with its Prolific code; never the session's own code
    (earned by judging), so a `{code}` address is not used."""
    template = study_settings().completion_template("no_consent")
    if session.platform != "prolific" or not template or CODE_PLACEHOLDER in template:
        return {"outcome": "no_consent", "completion_url": None, "shown_code": None}
    return {
        "outcome": "no_consent",
        "completion_url": completion_address(template, ""),
        "shown_code": shown_code(template, None),
    }
