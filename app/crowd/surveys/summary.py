"""The dashboard's survey summary: pure arithmetic on stored answers, no app.

Per question of the taxonomy: how many sessions answered it and left it blank, and
- choice and multi: how many answers chose each option (a multi answer counts for every
  option it chose, so the counts may add up to more than the answers);
- likert: the distribution over 1..scale and the mean, the arithmetic mean of the points
  chosen over the non-blank answers (it treats the scale as equally spaced, as Likert
  items are usually summarised; the distribution is shown beside it for that reason);
- text: the number of non-blank answers (the texts are in the surveys export).
Answers to a question the taxonomy no longer has, or of another type, are left out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from app.taxonomy.surveys import Question, Survey


@dataclass
class QuestionSummary:
    """The figures of one question."""

    survey: str
    question: Question
    answered: int = 0
    blank: int = 0
    counts: list[tuple[str, int]] = field(default_factory=list)  # (option or point, answers)
    mean: float | None = None  # likert only


def summarise_answers(
    survey: Survey, answers: Iterable[tuple[str, str, str, Any]]
) -> list[QuestionSummary]:
    """One summary per question, before-survey first, from (survey, key, type, answer)."""
    stored: dict[tuple[str, str, str], list[Any]] = {}
    for which, key, kind, answer in answers:
        stored.setdefault((which, key, kind), []).append(answer)
    summaries = []
    for which in ("before", "after"):
        for question in survey.questions(which):
            values = stored.get((which, question.key, question.type), [])
            summaries.append(_summary(which, question, values))
    return summaries


def _summary(which: str, question: Question, values: list[Any]) -> QuestionSummary:
    given = [value for value in values if value not in (None, "", [])]
    summary = QuestionSummary(which, question, answered=len(given), blank=len(values) - len(given))
    if question.type == "likert":
        points = Counter(value for value in given if value in question.points)
        summary.counts = [(str(point), points[point]) for point in question.points]
        total = sum(points.values())
        summary.mean = sum(p * n for p, n in points.items()) / total if total else None
    elif question.type in ("choice", "multi"):
        chosen: Counter[str] = Counter()
        for value in given:
            chosen.update(value if isinstance(value, list) else [value])
        summary.counts = [(option, chosen[option]) for option in question.options]
    return summary
