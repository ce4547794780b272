"""Training feedback and the pass rule: pure functions on plain data, no app.

A practice document's answer is its gold spans (the document's `gold` entries, each with
an optional `paired_span` and `explanation`). What the worker marked is matched against
them with the attention-check rule (app.rules.spans.locates: an annotation locates a gold span
when it is in the same paragraph and their character intersection over union is at
least 0.5), on the primary span only, as attention checks are.

Feedback, one item per gold span, in document order:
- `found`: an annotation of the gold span's category locates it;
- `wrong_category`: annotations locate it, none of its category (`chosen`: the first one's);
- `missed`: no annotation locates it;
then one `extra` item ("not an error here") per annotation that locates no gold span.

While the worker has checks left and has not passed, the page gets counts only
(`summarise`: found x of y, how many of their marks have the wrong type or are no error),
never where the errors are nor why: the spans and explanations come after a pass or the
last check (app.crowd.training.service.Checked), so a failed first check does not hand out the
answers for the second.

Pass rule (docs/training.md): recall and precision exactly as attention checks count them
(`gold_recall`): recall = gold spans found with their category / gold spans, precision =
annotations matching a gold span of their category / annotations (0 without
annotations). The worker passes a document when recall >= min_recall and precision >=
min_precision.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.rules.metrics import gold_recall
from app.rules.spans import locates

FOUND, MISSED, WRONG_CATEGORY, EXTRA = "found", "missed", "wrong_category", "extra"


@dataclass(frozen=True)
class Answer:
    """One practice annotation as the worker sent it."""

    id: str
    paragraph_id: int
    start: int
    end: int
    category: str

    @property
    def span(self) -> tuple[int, int, int]:
        """(paragraph_id, start, end)."""
        return (self.paragraph_id, self.start, self.end)


@dataclass(frozen=True)
class PassRule:
    """The thresholds a practice document must reach (taxonomy `training.pass`)."""

    min_recall: float = 0.5
    min_precision: float = 0.5

    def passes(self, recall: float | None, precision: float | None) -> bool:
        """True when both reach their threshold (a document without gold cannot pass)."""
        if recall is None or precision is None:
            return False
        return recall >= self.min_recall and precision >= self.min_precision


@dataclass(frozen=True)
class CheckResult:
    """What one "Check my answers" found: feedback items, recall, precision, pass."""

    feedback: list[dict[str, Any]] = field(default_factory=list)
    recall: float | None = None
    precision: float | None = None
    passed: bool = False


def _wire_span(texts: Sequence[str], paragraph_id: int, start: int, end: int) -> dict[str, Any]:
    text = texts[paragraph_id][start:end] if 0 <= paragraph_id < len(texts) else ""
    return {"paragraph_id": paragraph_id, "start": start, "end": end, "text": text}


def _gold_span(item: Mapping[str, Any]) -> tuple[int, int, int]:
    return (int(item["paragraph_id"]), int(item["start"]), int(item["end"]))


def gold_feedback(
    item: Mapping[str, Any], answers: Sequence[Answer], texts: Sequence[str]
) -> dict[str, Any]:
    """The feedback item of one gold span: found, wrong_category or missed."""
    span = _gold_span(item)
    category = item.get("category")
    hits = [answer for answer in answers if locates(answer.span, span)]
    right = [answer for answer in hits if answer.category == category]
    paired = item.get("paired_span")
    matched = right or hits
    entry: dict[str, Any] = {
        "kind": FOUND if right else WRONG_CATEGORY if hits else MISSED,
        "category": category,
        "span": _wire_span(texts, *span),
        "paired_span": None if not paired else _wire_span(texts, *_gold_span(paired)),
        "explanation": item.get("explanation"),
        "annotation_id": matched[0].id if matched else None,
    }
    if hits and not right:
        entry["chosen"] = hits[0].category
    return entry


def check_answers(
    gold: Sequence[Mapping[str, Any]],
    answers: Sequence[Answer],
    texts: Sequence[str],
    rule: PassRule,
) -> CheckResult:
    """Feedback on one attempt at a practice document, and whether it passes."""
    ordered = sorted(gold, key=_gold_span)
    feedback = [gold_feedback(item, answers, texts) for item in ordered]
    spans = [_gold_span(item) for item in ordered]
    for answer in sorted(answers, key=lambda a: (a.span, a.id)):
        if not any(locates(answer.span, span) for span in spans):
            feedback.append(
                {
                    "kind": EXTRA,
                    "category": answer.category,
                    "span": _wire_span(texts, *answer.span),
                    "paired_span": None,
                    "explanation": None,
                    "annotation_id": answer.id,
                }
            )
    score = gold_recall(ordered, [(*a.span, a.category) for a in answers])
    recall, precision = score.recall_category, score.precision
    return CheckResult(feedback, recall, precision, rule.passes(recall, precision))


def summarise(feedback: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Counts of a check's feedback, by kind: what the worker sees while checks remain
    ({"gold", "found", "wrong_category", "missed", "extra"})."""
    counts = {kind: 0 for kind in (FOUND, WRONG_CATEGORY, MISSED, EXTRA)}
    for item in feedback:
        counts[item["kind"]] += 1
    return {"gold": counts[FOUND] + counts[WRONG_CATEGORY] + counts[MISSED], **counts}
