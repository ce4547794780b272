"""A submitted survey form -> answers, or a message per field: pure rules, no app.

Field names are `q-<question key>`. Choice and multi fields send the option's position
(0, 1, ...), never its text, so what is stored is exactly the option the taxonomy wrote;
Likert fields send 1..scale. The worker-visible messages are in MESSAGES (one place),
marked with N_ and translated by the `translate` the caller passes (the routes pass
gettext), so the rules stay free of the app.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from app.core.i18n import N_
from app.taxonomy.surveys import Question

FIELD_PREFIX = "q-"
MESSAGES = {
    "choose_one": N_("Choose an answer."),
    "choose_some": N_("Choose at least one answer."),
    "not_listed": N_("Choose one of the answers listed."),
    "write": N_("Write an answer."),
    "too_long": N_("Write at most {limit} characters (you wrote {length})."),
}


def field_name(question: Question) -> str:
    """The form field of a question."""
    return f"{FIELD_PREFIX}{question.key}"


@dataclass
class ParsedSurvey:
    """The answers by question key (None: an optional question left blank), the error
    message by question key, and the raw values to show again when there are errors."""

    answers: dict[str, Any] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    raw: dict[str, list[str]] = field(default_factory=dict)


def parse_survey_form(
    questions: tuple[Question, ...],
    getlist: Callable[[str], list[str]],
    translate: Callable[[str], str] = str,
) -> ParsedSurvey:
    """Check every question's field (`getlist(name)`: the values sent for a field); the
    messages go through `translate` (gettext) before their placeholders are filled."""
    parsed = ParsedSurvey()
    for question in questions:
        values = [value for value in getlist(field_name(question)) if value is not None]
        parsed.raw[question.key] = values
        try:
            parsed.answers[question.key] = _answer(question, values)
        except ValueError as error:
            message, params = error.args
            parsed.errors[question.key] = translate(message).format(**params)
    return parsed


def _answer(question: Question, values: list[str]) -> Any:
    if question.type == "text":
        answer = values[0].strip() if values else ""
        if not answer:
            return _blank(question, "write")
        if len(answer) > question.max_length:
            limit, length = question.max_length, len(answer)
            raise ValueError(MESSAGES["too_long"], {"limit": limit, "length": length})
        return answer
    chosen = [value.strip() for value in values if value.strip()]
    if not chosen:
        return _blank(question, "choose_some" if question.type == "multi" else "choose_one")
    if question.type == "likert":
        return _pick(chosen, tuple(str(point) for point in question.points), question.points)
    if question.type == "choice":
        return _pick(chosen, _positions(question), question.options)
    picked = []
    for value in dict.fromkeys(chosen):  # a repeated box counts once
        picked.append(_pick([value], _positions(question), question.options))
    # In the taxonomy's order, whatever order the browser sent them in.
    return [option for option in question.options if option in picked]


def _blank(question: Question, message: str) -> None:
    if question.required:
        raise ValueError(MESSAGES[message], {})
    return None


def _positions(question: Question) -> tuple[str, ...]:
    return tuple(str(position) for position in range(len(question.options)))


def _pick(chosen: list[str], sent: tuple[str, ...], stored: tuple[Any, ...]) -> Any:
    if len(chosen) != 1 or chosen[0] not in sent:
        raise ValueError(MESSAGES["not_listed"], {})
    return stored[sent.index(chosen[0])]


def answer_text(answer: Any) -> str:
    """An answer as one text (a CSV cell): empty when blank, a multi answer's options as
    a JSON array (options may hold any character, commas and semicolons included)."""
    if answer is None:
        return ""
    if isinstance(answer, list):
        return json.dumps(answer, ensure_ascii=False)
    return str(answer)
