"""The taxonomy's `consent:` and `survey:` sections: parsed and validated, no app.

app.taxonomy calls `parse_consent` and `parse_survey` with its Checker, so every problem
is reported as `FILE:line: key: message` with the rest of the file's problems:

```yaml
consent: |            # Markdown; the worker must agree to start (declining: no_consent)
  ...
survey:
  before:
    - {key: native, type: choice, text: "Is English your first language?",
       options: ["Yes", "No"], required: true}
  after:
    - {key: difficulty, type: likert, scale: 5, text: "How hard was the task?",
       low: Very easy, high: Very hard}
    - {key: tools, type: multi, text: "What did you use?", options: [Notes, Dictionary]}
    - {key: feedback, type: text, text: "Anything else?", max_length: 1000}
```
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from markdown_it import MarkdownIt

from app.core.yaml_checker import REQUIRED, Checker, KeyPath, flag, integer, one_of, text

QUESTION_TYPES = ("choice", "multi", "likert", "text")
SURVEYS = ("before", "after")
LIKERT_SCALES = (5, 7)
QUESTION_FIELDS = ("key", "type", "text", "required", "options", "scale", "low", "high")
QUESTION_FIELDS += ("max_length",)
# Only some fields make sense for each type; the others are reported, not ignored.
TYPE_FIELDS = {
    "choice": ("options",),
    "multi": ("options",),
    "likert": ("scale", "low", "high"),
    "text": ("max_length",),
}
QUESTION_KEY_RE = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
QUESTION_KEY_MAX_LENGTH = 64  # survey_answers.question_key is String(64)
TEXT_ANSWER_MAX_LENGTH = 10_000
DEFAULT_TEXT_ANSWER_LENGTH = 2000


@dataclass(frozen=True)
class Question:
    """One survey question: `choice` (one option), `multi` (any options), `likert`
    (1..scale) or `text` (free text up to max_length)."""

    key: str
    type: str
    text: str
    required: bool = False
    options: tuple[str, ...] = ()
    scale: int = 5
    low: str | None = None  # the label of 1 on a Likert scale
    high: str | None = None  # the label of `scale`
    max_length: int = DEFAULT_TEXT_ANSWER_LENGTH

    @property
    def points(self) -> tuple[int, ...]:
        """The values of a Likert question, 1..scale (empty for other types)."""
        return tuple(range(1, self.scale + 1)) if self.type == "likert" else ()


@dataclass(frozen=True)
class Survey:
    """The questions asked before the task and after Submit (either may be empty)."""

    before: tuple[Question, ...] = ()
    after: tuple[Question, ...] = ()

    def questions(self, which: str) -> tuple[Question, ...]:
        """The questions of the `before` or `after` survey."""
        return self.before if which == "before" else self.after

    def __bool__(self) -> bool:
        return bool(self.before or self.after)


def markdown_html(source: str) -> str:
    """Markdown as HTML with raw HTML escaped and javascript:/data: links dropped (as the
    instructions are rendered): researchers' text can never inject markup."""
    return MarkdownIt("commonmark", {"html": False}).render(source)


def parse_consent(check: Checker, value: Any) -> str | None:
    """consent: Markdown text, or absent (no consent step)."""
    return check.convert(value, ("consent",), None, text)


def parse_survey(check: Checker, value: Any) -> Survey:
    """survey: {before: [questions], after: [questions]}; every problem at its line."""
    data = check.mapping(value, ("survey",), SURVEYS)
    return Survey(**{which: _questions(check, data.get(which), which) for which in SURVEYS})


def _questions(check: Checker, value: Any, which: str) -> tuple[Question, ...]:
    path: KeyPath = ("survey", which)
    if value is None:
        return ()
    if not isinstance(value, list):
        check.problem(path, "must be a list of questions")
        return ()
    questions: list[Question] = []
    first_line: dict[str, int] = {}
    for index, item in enumerate(value):
        question = _question(check, item, (*path, index))
        # Duplicates are found by the written key, even of a question with other problems.
        key = item.get("key") if isinstance(item, dict) else None
        if isinstance(key, str) and key in first_line:
            check.problem(
                (*path, index, "key"), f"duplicate key {key!r} (first at line {first_line[key]})"
            )
            continue
        if isinstance(key, str):
            first_line[key] = check.lines.get((*path, index, "key"), 1)
        if question is not None:
            questions.append(question)
    return tuple(questions)


def _question(check: Checker, item: Any, path: KeyPath) -> Question | None:
    if not isinstance(item, dict):
        check.problem(path, "must be a mapping with key, type and text")
        return None
    data = check.mapping(item, path, QUESTION_FIELDS)
    before = len(check.problems)
    key = check.get(data, (*path, "key"), REQUIRED, _question_key)
    kind = check.get(data, (*path, "type"), REQUIRED, one_of(*QUESTION_TYPES))
    wording = check.get(data, (*path, "text"), REQUIRED, text)
    required = check.get(data, (*path, "required"), False, flag)
    if kind is not None:
        for name in QUESTION_FIELDS[4:]:
            if name in data and name not in TYPE_FIELDS[kind]:
                check.problem((*path, name), f"is not used by {kind} questions")
    fields: dict[str, Any] = {}
    if kind in ("choice", "multi"):
        fields["options"] = check.get(
            data, (*path, "options"), REQUIRED, lambda value: _options(check, value, path)
        )
    elif kind == "likert":
        fields["scale"] = check.get(data, (*path, "scale"), 5, _scale)
        fields["low"] = check.get(data, (*path, "low"), None, text)
        fields["high"] = check.get(data, (*path, "high"), None, text)
    elif kind == "text":
        fields["max_length"] = check.get(
            data,
            (*path, "max_length"),
            DEFAULT_TEXT_ANSWER_LENGTH,
            integer(1, TEXT_ANSWER_MAX_LENGTH),
        )
    if len(check.problems) > before or not (key and kind and wording):
        return None
    return Question(key=key, type=kind, text=wording, required=required, **fields)


def _question_key(value: Any) -> str:
    if (
        not isinstance(value, str)
        or not QUESTION_KEY_RE.match(value)
        or len(value) > QUESTION_KEY_MAX_LENGTH
    ):
        raise ValueError(
            "must be lower-case letters, digits, '-' and '_', starting with a letter or "
            f"digit, at most {QUESTION_KEY_MAX_LENGTH} characters, got {value!r}"
        )
    return value


def _scale(value: Any) -> int:
    if isinstance(value, bool) or value not in LIKERT_SCALES:
        raise ValueError(f"must be 5 or 7 (points of the Likert scale), got {value!r}")
    return value


def _options(check: Checker, value: Any, path: KeyPath) -> tuple[str, ...]:
    if not isinstance(value, list) or len(value) < 2:
        raise ValueError("must be a list of at least two options")
    options: list[str] = []
    for index, option in enumerate(value):
        where: KeyPath = (*path, "options", index)
        if isinstance(option, bool):
            # YAML 1.1 reads yes/no/on/off as booleans: the worker would see "True".
            message = "must be text: YAML reads yes/no/on/off as true/false; put it in quotes"
            check.problem(where, f'{message}, e.g. "Yes"')
            continue
        if isinstance(option, int | float):
            option = str(option)
        option = check.convert(option, where, REQUIRED, text)
        if option is None:
            continue
        if option in options:
            check.problem(where, f"duplicate option {option!r}")
            continue
        options.append(option)
    return tuple(options)
