"""Importing judgments made elsewhere (offline, or BooookScore's recorded ones). All or nothing.

Two inputs, told apart by content:

- JSON lines of ``{"item_id", "validator", "verdict", "reasons"?, "explanation"?}``;
- BooookScore's ``validation-judgments.json`` itself: its entries are matched to the
  items that `create-round` made from the same file (id ``BOOK#N``; if that id is
  missing or holds another span, by span text and question), and the validator is the
  file's name without extension (the file does not name its validators).

An ``explanation`` given as a list of strings (as in part of BooookScore's release) is
stored as its strings joined by a space.
Verdicts may use BooookScore's wording ("Agree", "Partially agree", "Don't agree").
A reason is a round reason given exactly, or by its letter: "C. Not addressing issues
that matter (refer to standards)" is the round's "C. Not addressing issues that matter".
Re-importing the same file changes nothing; a different verdict for a stored
(item, validator) pair is an error.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import insert, select

from app.core.errors import ProblemsError
from app.core.extensions import db
from app.imports.item_formats import detect_format, validation_item_id
from app.imports.locate import normalise
from app.models import ValidationItem, ValidationJudgment, ValidationRound
from app.rules.jsonl import json_object_lines
from app.rules.safe_text import json_text_problems
from app.studies import current_study_id
from app.taxonomy import current_taxonomy
from app.validation.reasons import item_protocol, round_reasons

VERDICT_WORDS = {
    "agree": "agree",
    "partial": "partial",
    "partially agree": "partial",
    "partially_agree": "partial",
    "disagree": "disagree",
    "don't agree": "disagree",
    "don’t agree": "disagree",
    "do not agree": "disagree",
}
_LETTER = re.compile(r"^\s*([A-Za-z])[.)](?:\s|$)")


class JudgmentImportError(ProblemsError):
    """The import was refused; nothing was written. `problems`: one line each."""


@dataclass
class JudgmentImportSummary:
    """Counts of an import: new judgments, identical ones already stored, by validator."""

    added: int = 0
    unchanged: int = 0
    validators: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class _Row:
    where: str
    item_key: Any  # external id (str), or a BooookScore entry to match by content
    validator: str
    verdict: Any
    reasons: Any
    explanation: Any


def match_reason(given: str, allowed: list[str]) -> str | None:
    """The round's reason meant by `given`: the same text, or the same leading letter."""
    if given in allowed:
        return given
    stripped = given.strip()
    for reason in allowed:
        if reason.strip().casefold() == stripped.casefold():
            return reason
    letter = _LETTER.match(stripped)
    if letter:
        same = [r for r in allowed if (m := _LETTER.match(r)) and m[1].upper() == letter[1].upper()]
        if len(same) == 1:
            return same[0]
    return None


def parse_verdict(value: Any) -> str | None:
    """agree|partial|disagree from our or BooookScore's wording; None when unknown."""
    if not isinstance(value, str):
        return None
    return VERDICT_WORDS.get(value.strip().casefold().replace("’", "'"))


def _rows(path: Path) -> Iterator[_Row | str]:
    text = path.read_text(encoding="utf-8-sig")
    unstorable = json_text_problems(text)
    if unstorable:
        for line, name, problem in unstorable:
            yield f"{path.name}:{line}: {name}: {problem}"
        return
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        data = None
    if data is not None and detect_format(data) == "booookscore-validation":
        validator = path.stem
        for book, entry in data.items():
            for number, record in enumerate(entry.get("annotations") or []):
                where = f"{path.name}:{book} annotations[{number}]"
                if not isinstance(record, dict):
                    yield f"{where}: must be an object"
                    continue
                yield _Row(
                    where,
                    (book, number, record.get("anno")),
                    validator,
                    record.get("agreement"),
                    record.get("reasons"),
                    _joined(record.get("explanation")),
                )
        return
    for where, record in json_object_lines(text, f"{path.name}:line "):
        if isinstance(record, str):
            yield f"{where}: {record}"
            continue
        unknown = sorted(
            set(record) - {"item_id", "validator", "verdict", "reasons", "explanation"}
        )
        if unknown:
            yield f"{where}: unknown key(s) {', '.join(unknown)}"
            continue
        validator = record.get("validator")
        if not isinstance(validator, str) or not validator.strip() or len(validator) > 250:
            yield f"{where}: validator: must be a non-empty string (at most 250 characters)"
            continue
        item_id = record.get("item_id")
        if not isinstance(item_id, str | int) or isinstance(item_id, bool):
            yield f"{where}: item_id: missing"
            continue
        yield _Row(
            where,
            str(item_id),
            validator.strip(),
            record.get("verdict"),
            record.get("reasons"),
            record.get("explanation"),
        )


def _joined(explanation: Any) -> Any:
    # BooookScore's release gives some explanations as a list of strings (31 of 1437).
    if isinstance(explanation, list) and all(isinstance(part, str) for part in explanation):
        return " ".join(part.strip() for part in explanation if part.strip())
    return explanation


class _Items:
    """The round's items by external id and by content (for BooookScore entries)."""

    def __init__(self, round_: ValidationRound) -> None:
        query = select(ValidationItem).where(ValidationItem.round_id == round_.id)
        self.by_id: dict[str, ValidationItem] = {}
        self.by_content: dict[tuple, list[ValidationItem]] = {}
        for item in db.session.scalars(query):
            self.by_id[item.external_id] = item
            key = self._key(item.span_text, item.paired_text, item.question)
            self.by_content.setdefault(key, []).append(item)

    @staticmethod
    def _key(span: Any, paired: Any, question: Any) -> tuple:
        def norm(value: Any) -> str:
            if isinstance(value, list):
                value = " ".join(v for v in value if isinstance(v, str))
            return normalise(value) if isinstance(value, str) else ""

        return (norm(span), norm(paired), norm(question))

    def find(self, key: Any) -> ValidationItem | str:
        if isinstance(key, str):
            return self.by_id.get(key) or f"item_id: no item {key!r} in this round"
        book, number, anno = key
        if not isinstance(anno, dict):
            return "anno: missing"
        wanted = self._key(
            anno.get("span", anno.get("span_a")),
            anno.get("span_b"),
            anno.get("questions", anno.get("shared_questions")),
        )
        item = self.by_id.get(validation_item_id(book, number))
        if (
            item is not None
            and self._key(item.span_text, item.paired_text, item.question) == wanted
        ):
            return item
        matches = self.by_content.get(wanted, [])
        if len(matches) == 1:
            return matches[0]
        if not matches:
            return "no item of this round has this span and question"
        return f"{len(matches)} items of this round have this span and question"


def import_judgments(round_name: str, path: Path) -> JudgmentImportSummary:
    """Store every judgment of the file in one transaction, or raise JudgmentImportError."""
    round_ = db.session.scalars(
        select(ValidationRound).filter_by(name=round_name, study_id=current_study_id())
    ).first()
    if round_ is None:
        raise JudgmentImportError([f"no round named {round_name!r}"])
    validation = current_taxonomy().validation
    allowed = round_reasons(round_.settings, validation.reasons, validation.category_reasons)
    items = _Items(round_)
    stored = {
        (item_id, validator): (verdict, tuple(reasons or ()), explanation)
        for item_id, validator, verdict, reasons, explanation in db.session.execute(
            select(
                ValidationJudgment.item_id,
                ValidationJudgment.validator,
                ValidationJudgment.verdict,
                ValidationJudgment.reasons,
                ValidationJudgment.explanation,
            )
            .join(ValidationItem, ValidationItem.id == ValidationJudgment.item_id)
            .where(ValidationItem.round_id == round_.id)
        )
    }
    problems: list[str] = []
    new: list[dict[str, Any]] = []
    seen: dict[tuple[int, str], str] = {}
    summary = JudgmentImportSummary()
    for row in _rows(path):
        if isinstance(row, str):
            problems.append(row)
            continue
        outcome = _check(row, items, allowed)
        if isinstance(outcome, str):
            problems.append(f"{row.where}: {outcome}")
            continue
        key = (outcome["item_id"], row.validator)
        if key in seen:
            problems.append(f"{row.where}: {row.validator} already judged this item at {seen[key]}")
            continue
        seen[key] = row.where
        value = (outcome["verdict"], tuple(outcome["reasons"]), outcome["explanation"])
        if key in stored:
            if stored[key] != value:
                problems.append(
                    f"{row.where}: {row.validator} already has a different judgment of this "
                    f"item stored ({stored[key][0]})"
                )
            else:
                summary.unchanged += 1
            continue
        new.append(outcome | {"validator": row.validator})
        summary.validators[row.validator] = summary.validators.get(row.validator, 0) + 1
    if problems:
        raise JudgmentImportError(problems)
    try:
        for start in range(0, len(new), 500):
            db.session.execute(insert(ValidationJudgment), new[start : start + 500])
        db.session.commit()
    except BaseException:
        db.session.rollback()
        raise
    summary.added = len(new)
    return summary


def _check(row: _Row, items: _Items, reasons: dict[str, list[str]]) -> dict[str, Any] | str:
    item = items.find(row.item_key)
    if isinstance(item, str):
        return item
    # Judgments made elsewhere may use either protocol's wording: the item's own first.
    own = reasons[item_protocol(item.question)]
    allowed = own + [r for protocol in reasons.values() for r in protocol if r not in own]
    verdict = parse_verdict(row.verdict)
    if verdict is None:
        return (
            f"verdict: {row.verdict!r} is not agree, partial or disagree "
            "(or Agree, Partially agree, Don't agree)"
        )
    reasons = row.reasons if row.reasons is not None else []
    if isinstance(reasons, str):
        reasons = [reasons]
    if not isinstance(reasons, list) or not all(isinstance(r, str) for r in reasons):
        return "reasons: must be a list of strings"
    matched = []
    for reason in reasons:
        found = match_reason(reason, allowed)
        if found is None:
            return f"reasons: {reason!r} is not one of the round's reasons ({'; '.join(allowed)})"
        if found not in matched:
            matched.append(found)
    explanation = row.explanation
    if explanation is not None and not isinstance(explanation, str):
        return "explanation: must be a string or null"
    return {
        "item_id": item.id,
        "verdict": verdict,
        "reasons": [r for r in allowed if r in matched],
        "explanation": (explanation or "").strip() or None,
    }
