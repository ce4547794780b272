"""The error taxonomy: YAML file -> validated frozen dataclasses, loaded once at start.

A bad file never half-loads: `load_taxonomy` collects every problem, each with its
line, and raises them together, so one run of `flask check-taxonomy` shows them all.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import click
from flask import Flask, current_app
from markdown_it import MarkdownIt

from app.core.errors import ProblemsError
from app.core.i18n import INTERFACE_LANGUAGES, html_lang, interface_locale
from app.core.yaml_checker import (
    REQUIRED,
    Checker,
    KeyPath,
    Problem,
    flag,
    integer,
    number,
    one_of,
    read_yaml,
    text,
)
from app.rules.outcomes import (
    ATTENTION_CHECK_MODES,
    OUTCOMES,
    CompletionTarget,
    completion_target,
    completion_targets,
    completion_url,
)
from app.rules.platforms import PROLIFIC_COMPLETE_URL, is_placeholder
from app.taxonomy.surveys import Survey, markdown_html, parse_consent, parse_survey
from config.settings import DEFAULT_TAXONOMY

TYPES = ("singleton", "paired")
SUGGESTION_ARMS = ("show", "none")
ENTITY_MODES = ("auto", "document", "none")
KEY_RE = re.compile(r"^[a-z0-9][a-z0-9-]*$")
KEY_MAX_LENGTH = 64  # annotations.category is String(64)
COLOR_RE = re.compile(r"^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$")
COMMENT_MAX_LENGTH = 10_000
DEFAULT_PAIRED_PROMPT = (
    "Select the other span this error relates to, earlier in the text or in this paragraph."
)
DEFAULT_COMMENT_LABEL = "Other comments / feedback (optional)"
BOOOOKSCORE_REASONS = (
    "A. Not relevant to span",
    "B. Answered in the summary",
    "C. Not addressing issues that matter (refer to standards)",
    "D. Other",
)
# For items judged against their error category rather than a question (our own exports).
CATEGORY_REASONS = (
    "Not an error",
    "Wrong category",
    "Span too long or too short",
    "Other",
)
# Colours of categories without one: Paul Tol's "light" scheme (light fills for dark text,
# distinct under the common colour-vision deficiencies; tests/unit/test_palette.py).
PALETTE = ("#eedd88", "#44bb99", "#77aadd", "#ee8866", "#ffaabb")
PALETTE += ("#99ddff", "#bbcc33", "#aaaa00")
TOP_KEYS = (
    "title",
    *("instructions", "comment", "categories", "entities", "study", "validation", "checks"),
    "training",
    *("consent", "survey"),
    "severities",
)
# `checks:` maps each kind that `flask plant-checks` plants to a category of this type.
CHECK_TYPES = {"repetition": "paired", "inconsistency": "paired", "new-entity": "singleton"}
CATEGORY_KEYS = ("key", "name", "type", "description", "shortcut", "color", "paired_prompt")
# Read from categories[] on top of CATEGORY_KEYS; only in the page's data when the
# taxonomy has severities (a taxonomy without them looks exactly as before).
CATEGORY_SEVERITY_KEY = "severities"
SEVERITY_KEYS = ("key", "name", "weight", "description", "shortcut")
SEVERITY_WEIGHT_MAX = 1000.0


@dataclass(frozen=True)
class Category:
    """One error category that workers can choose for a highlighted span."""

    key: str
    name: str
    type: str
    description: str
    shortcut: str | None
    color: str
    paired_prompt: str | None
    # Severity keys a worker may choose for this category; () = every severity.
    severities: tuple[str, ...] = ()

    @property
    def is_paired(self) -> bool:
        """True when an annotation of this category needs a second span."""
        return self.type == "paired"


@dataclass(frozen=True)
class Severity:
    """An MQM-style severity (e.g. minor, weight 1; major, weight 5) for an annotation."""

    key: str
    name: str
    weight: float
    description: str | None
    shortcut: str | None


@dataclass(frozen=True)
class CommentSettings:
    """The free-text comment box under each annotation."""

    label: str
    required: bool
    max_length: int = 2000


@dataclass(frozen=True)
class StudySettings:
    """Crowd study settings used by the researcher console."""

    annotators_per_document: int = 3
    completion_url: str | None = None
    # (outcome, full URL) per outcome the file names, in OUTCOMES order; a code is
    # already turned into Prolific's completion URL. A tuple keeps the settings hashable.
    completion: tuple[tuple[str, str], ...] = ()
    attention_checks: str = "flag"  # flag | fail (fail: missed checks -> failed_checks)
    abandon_after_minutes: int = 120
    claim_minutes: int = 10
    attention_check_share: float = 0.0
    # Production: whether a start link without a platform id, signed link or cookie makes
    # a new anonymous worker (development and testing always do: ANONYMOUS_WORKERS).
    anonymous: bool = False
    # Unsubmitted sessions one client network may hold open at once (app.crowd.networks).
    max_open_per_network: int = 3
    # Sessions read faster than this are flagged as rushing on the dashboard; None: no flag.
    min_words_per_minute: float | None = None
    # Model suggestions (app.suggestions): shown to every worker (show) or to none; or,
    # for experiments on anchoring, ((arm, weight), ...) with arms "show" and "none".
    suggestions: str = "none"
    suggestion_arms: tuple[tuple[str, float], ...] = ()
    # The worker pages' interface language (a Babel locale name from app.core.i18n), None: the
    # browser's Accept-Language among the shipped languages, else English.
    language: str | None = None
    # The Prolific study's id: Prolific arrivals with another STUDY_ID (or none) are refused
    # (app.crowd.submissions); production refuses Prolific arrivals without it.
    prolific_study_id: str | None = None
    # How workers reach the researchers (an e-mail address or a sentence), shown on the
    # pages that refuse an arrival; None: "through the platform".
    contact: str | None = None

    @property
    def completion_targets(self) -> tuple[CompletionTarget, ...]:
        """Where each outcome sends a worker by this file alone (no COMPLETION_URL)."""
        return completion_targets(dict(self.completion), self.completion_url)

    @property
    def enters_through_start(self) -> bool:
        """Workers enter through /start: the study names completion codes per outcome or
        its Prolific study id. Then unsigned /annotate/<doc> links create no session."""
        return bool(self.completion or self.prolific_study_id)

    @property
    def sends_to_prolific(self) -> bool:
        """Whether some outcome sends workers back to Prolific (a study with Prolific
        arrivals, which needs `prolific_study_id` in production)."""
        return any(
            target.url and target.url.startswith(PROLIFIC_COMPLETE_URL)
            for target in self.completion_targets
        )


@dataclass(frozen=True)
class ValidationSettings:
    """Settings of precision-validation rounds."""

    partial_counts_as_valid: bool = True
    reasons: tuple[str, ...] = BOOOOKSCORE_REASONS  # items with a question
    category_reasons: tuple[str, ...] = CATEGORY_REASONS  # items with a category and no question


SECTIONS = {CommentSettings: "comment", StudySettings: "study", ValidationSettings: "validation"}
TRAINING_KEYS = ("documents", "pass", "attempts")
PASS_KEYS = ("recall", "precision")
DOCUMENT_ID_MAX_LENGTH = 200  # documents.external_id is String(200)


@dataclass(frozen=True)
class TrainingSettings:
    """Practice before the task (docs/training.md): imported documents with gold spans.

    A worker annotates each practice document in turn and passes it when recall and
    precision against its gold spans (the attention-check matching rule,
    app.rules.metrics.gold_recall) reach `min_recall` and `min_precision`; a document
    not passed within `attempts` checks ends the study with `failed_training`.
    """

    documents: tuple[str, ...] = ()  # external ids of imported documents, in order
    min_recall: float = 0.5
    min_precision: float = 0.5
    attempts: int = 2

    @property
    def enabled(self) -> bool:
        """True when the taxonomy asks for training."""
        return bool(self.documents)


@dataclass(frozen=True)
class Taxonomy:
    """A loaded, validated taxonomy; `version` identifies the exact file content."""

    path: str
    version: str
    title: str
    instructions: str
    categories: tuple[Category, ...]
    comment: CommentSettings
    entities: str = "auto"
    study: StudySettings = field(default_factory=StudySettings)
    validation: ValidationSettings = field(default_factory=ValidationSettings)
    # (kind, category key) for planted checks, kinds as in CHECK_TYPES; () when not set.
    checks: tuple[tuple[str, str], ...] = ()
    training: TrainingSettings = field(default_factory=TrainingSettings)
    # Study steps around the task (app.crowd.journey): consent Markdown (None: no consent step)
    # and the surveys before and after it (app.taxonomy.surveys).
    consent: str | None = None
    survey: Survey = field(default_factory=Survey)
    # MQM-style severities, in file order; () = no severity step (docs/severities.md).
    severities: tuple[Severity, ...] = ()

    @property
    def has_steps_around_task(self) -> bool:
        """Whether the study has a step besides the task: consent, a survey, training
        (app.crowd.journey; else no step needs a query)."""
        return bool(self.consent or self.survey or self.training.enabled)

    def category(self, key: str) -> Category | None:
        """Return the category with this key, or None."""
        return next((c for c in self.categories if c.key == key), None)

    def severities_for(self, key: str) -> tuple[Severity, ...]:
        """The severities offered for the category `key` (all when it names no subset)."""
        category = self.category(key)
        if category is None or not category.severities:
            return self.severities
        return tuple(s for s in self.severities if s.key in category.severities)

    @cached_property
    def severity_weights(self) -> dict[str, float]:
        """Severity key -> weight (MQM scoring, app/research/mqm.py)."""
        return {severity.key: severity.weight for severity in self.severities}

    @property
    def keys(self) -> tuple[str, ...]:
        """Category keys in file order."""
        return tuple(c.key for c in self.categories)

    @cached_property
    def instructions_html(self) -> str:
        """The Markdown instructions as HTML; raw HTML is escaped, unsafe links dropped."""
        return MarkdownIt("commonmark", {"html": False}).render(self.instructions)

    @cached_property
    def consent_html(self) -> str:
        """The consent Markdown as HTML, rendered as safely as the instructions."""
        return markdown_html(self.consent or "")

    def to_public_dict(self) -> dict[str, Any]:
        """What the annotator page needs, JSON-able; no study or validation internals."""
        public = {
            "version": self.version,
            "title": self.title,
            "instructions_html": self.instructions_html,
            "comment": {
                "label": self.comment.label,
                "required": self.comment.required,
                "max_length": self.comment.max_length,
            },
            "categories": [
                {name: getattr(c, name) for name in CATEGORY_KEYS} for c in self.categories
            ],
            "entities": self.entities,
        }
        if self.severities:
            public.update(_public_severities(self))
        return public


def _public_severities(taxonomy: Taxonomy) -> dict[str, Any]:
    """The severities and, per category, the keys it offers (all when it names none)."""
    keys = [severity.key for severity in taxonomy.severities]
    return {
        "severities": [
            {name: getattr(severity, name) for name in SEVERITY_KEYS}
            for severity in taxonomy.severities
        ],
        "category_severities": {
            category.key: list(category.severities or keys) for category in taxonomy.categories
        },
    }


class TaxonomyError(ProblemsError, click.ClickException):
    """A taxonomy file has problems: `.problems`, and str() lists each as file:line: key: msg.

    A ClickException, because `flask COMMAND` builds the app before it runs any command:
    with a broken taxonomy every command then prints the problems and exits 1, no traceback.
    """


def _completion(check: Checker, value: Any) -> tuple[tuple[str, str], ...]:
    """study.completion: {outcome: code or URL}, each problem at its own line."""
    path: KeyPath = ("study", "completion")
    if not isinstance(value, dict):
        raise ValueError(f"must be a mapping of outcomes ({', '.join(OUTCOMES)}) to codes")
    data = check.mapping(value, path, OUTCOMES)
    targets = []
    for outcome in OUTCOMES:
        if outcome in data:
            url = check.convert(data[outcome], (*path, outcome), REQUIRED, completion_target)
            if url:
                targets.append((outcome, url))
    return tuple(targets)


def _suggestion_arms(check: Checker, value: Any) -> tuple[tuple[str, float], ...]:
    """study.suggestion_arms: {show: weight, none: weight}, weights > 0 (ties go to show)."""
    path: KeyPath = ("study", "suggestion_arms")
    if not isinstance(value, dict) or not value:
        raise ValueError(f"must be a mapping of arms ({', '.join(SUGGESTION_ARMS)}) to weights")
    data = check.mapping(value, path, SUGGESTION_ARMS)
    arms = []
    for arm in (arm for arm in SUGGESTION_ARMS if arm in data):
        converted = check.convert(data[arm], (*path, arm), REQUIRED, number(0.001, 1000.0))
        if converted is not None:
            arms.append((arm, converted))
    return tuple(arms)


def _platform_id(value: Any) -> str:
    """An id as a platform shows it: printable, no spaces, at most 200 characters."""
    if not isinstance(value, str) or not re.fullmatch(r"[!-~]{1,200}", value.strip()):
        raise ValueError(
            "must be the study's id as the platform shows it (letters, digits and "
            f"punctuation, no spaces, at most 200 characters), got {value!r}"
        )
    if is_placeholder(value):
        raise ValueError(f"must be the study's id itself, not a placeholder, got {value!r}")
    return value.strip()


def _contact(value: Any) -> str:
    """Text of at most 300 characters on one line."""
    contact = text(value)
    if len(contact) > 300 or "\n" in contact:
        raise ValueError("must be one line of at most 300 characters")
    return contact


def _key(value: Any) -> str:
    if not isinstance(value, str) or not KEY_RE.match(value) or len(value) > KEY_MAX_LENGTH:
        raise ValueError(
            "must be lower-case letters, digits and '-', starting with a letter or digit, "
            f"at most {KEY_MAX_LENGTH} characters, got {value!r}"
        )
    return value


def _shortcut(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)  # `shortcut: 1` without quotes means the key "1"
    if not isinstance(value, str) or len(value) != 1 or not value.isprintable() or value.isspace():
        raise ValueError(f"must be one printable character other than space, got {value!r}")
    return value


def _color(value: Any) -> str:
    if not isinstance(value, str) or not COLOR_RE.match(value):
        raise ValueError(f"must be a colour written #rgb or #rrggbb, got {value!r}")
    return value.lower()


def _language(value: Any) -> str:
    locale = interface_locale(value) if isinstance(value, str) else None
    if locale is None:
        shipped = ", ".join(html_lang(name) for name in INTERFACE_LANGUAGES)
        raise ValueError(f"must be an interface language shipped here ({shipped}), got {value!r}")
    return locale


def load_taxonomy(path: str | os.PathLike) -> Taxonomy:
    """Read and validate a taxonomy file; raise TaxonomyError listing every problem."""
    try:
        raw, data, check = read_yaml(path)
    except ProblemsError as exc:
        raise TaxonomyError(exc.problems) from None
    if not isinstance(data, dict):
        found = "an empty file" if data is None else f"a {type(data).__name__}"
        message = f"must be a mapping with title, instructions and categories, found {found}"
        raise TaxonomyError([Problem(str(path), 1, "file", message)])
    taxonomy = _build(check, data, str(path), hashlib.sha256(raw).hexdigest()[:16])
    if check.problems:
        raise TaxonomyError(check.sorted_problems())
    return taxonomy


def _build(check: Checker, data: dict, file: str, version: str) -> Taxonomy:
    top = check.mapping(data, (), TOP_KEYS)
    categories = _categories(check, top.get("categories"), top.get("severities") is not None)
    severities = _severities(check, top.get("severities"), categories)
    categories = _category_severities(check, top.get("categories"), categories, severities)
    return Taxonomy(
        path=file,
        version=version,
        title=check.get(top, ("title",), REQUIRED, text) or "",
        instructions=check.get(top, ("instructions",), REQUIRED, text) or "",
        categories=categories,
        comment=_section(
            check,
            top,
            CommentSettings,
            label=(DEFAULT_COMMENT_LABEL, text),
            required=(False, flag),
            max_length=(2000, integer(1, COMMENT_MAX_LENGTH)),
        ),
        entities=check.get(top, ("entities",), "auto", one_of(*ENTITY_MODES)),
        study=_section(
            check,
            top,
            StudySettings,
            annotators_per_document=(3, integer(1, 1000)),
            completion_url=(None, completion_url),
            completion=((), lambda value: _completion(check, value)),
            attention_checks=("flag", one_of(*ATTENTION_CHECK_MODES)),
            abandon_after_minutes=(120, integer(1, 100_000)),
            # A working page records activity at least every two minutes (a heartbeat a
            # minute, written at most once a minute): less would release working workers.
            claim_minutes=(10, integer(3, 100_000)),
            attention_check_share=(0.0, number(0.0, 0.5)),
            anonymous=(False, flag),
            max_open_per_network=(3, integer(1, 100_000)),
            min_words_per_minute=(None, number(1.0, 100_000.0)),
            suggestions=("none", one_of(*SUGGESTION_ARMS)),
            suggestion_arms=((), lambda value: _suggestion_arms(check, value)),
            language=(None, _language),
            prolific_study_id=(None, _platform_id),
            contact=(None, _contact),
        ),
        validation=_section(
            check,
            top,
            ValidationSettings,
            partial_counts_as_valid=(True, flag),
            reasons=(BOOOOKSCORE_REASONS, lambda value: _reasons(check, value, "reasons")),
            category_reasons=(
                CATEGORY_REASONS,
                lambda value: _reasons(check, value, "category_reasons"),
            ),
        ),
        checks=_checks(check, top.get("checks"), categories),
        training=_training(check, top.get("training")),
        **_study_steps(check, top),
        severities=severities,
    )


def _training(check: Checker, value: Any) -> TrainingSettings:
    """training: {documents: [ids], pass: {recall, precision}, attempts}; absent: none."""
    if value is None:
        return TrainingSettings()
    data = check.mapping(value, ("training",), TRAINING_KEYS)
    if not data:
        if isinstance(value, dict):
            check.problem(("training",), "must name its practice documents under documents")
        return TrainingSettings()
    documents = check.get(data, ("training", "documents"), REQUIRED, lambda v: v)
    rule = check.mapping(data.get("pass"), ("training", "pass"), PASS_KEYS)
    share = number(0.0, 1.0)
    return TrainingSettings(
        documents=_training_documents(check, documents),
        min_recall=check.get(rule, ("training", "pass", "recall"), 0.5, share),
        min_precision=check.get(rule, ("training", "pass", "precision"), 0.5, share),
        attempts=check.get(data, ("training", "attempts"), 2, integer(1, 20)),
    )


def _training_documents(check: Checker, value: Any) -> tuple[str, ...]:
    """training.documents: a non-empty list of distinct imported document ids."""
    path: KeyPath = ("training", "documents")
    if value is None:
        return ()
    if not isinstance(value, list) or not value:
        check.problem(path, "must be a non-empty list of imported document ids")
        return ()
    ids: list[str] = []
    for index, item in enumerate(value):
        if isinstance(item, int) and not isinstance(item, bool):
            item = str(item)  # `- 12` means the document "12"
        if not isinstance(item, str) or not item.strip() or len(item) > DOCUMENT_ID_MAX_LENGTH:
            message = f"must be a document id (text, at most {DOCUMENT_ID_MAX_LENGTH} characters)"
            check.problem((*path, index), f"{message}, got {item!r}")
        elif item in ids:
            check.problem((*path, index), f"duplicate document {item!r}")
        else:
            ids.append(item)
    return tuple(ids)


def _study_steps(check: Checker, top: dict) -> dict[str, Any]:
    """consent: and survey: (app.taxonomy.surveys validates them at their lines)."""
    return {
        "consent": parse_consent(check, top.get("consent")),
        "survey": parse_survey(check, top.get("survey")),
    }


def _checks(check: Checker, value: Any, categories: tuple[Category, ...]) -> tuple:
    """checks: {kind: category key}; the key must exist and be of the kind's type."""
    data = check.mapping(value, ("checks",), tuple(CHECK_TYPES))
    types = {category.key: category.type for category in categories}
    pairs = []
    for kind, wanted in CHECK_TYPES.items():
        key = check.get(data, ("checks", kind), None, text)
        if key is None:
            continue
        if key not in types:
            check.problem(("checks", kind), f"no category {key!r} (categories: {', '.join(types)})")
        elif types[key] != wanted:
            check.problem(
                ("checks", kind), f"category {key!r} is {types[key]}; {kind} needs {wanted}"
            )
        else:
            pairs.append((kind, key))
    return tuple(pairs)


def _section(check: Checker, top: dict, cls: type, **spec: tuple[Any, Callable]) -> Any:
    """Build a settings dataclass from the mapping named after it; spec: key=(default, convert)."""
    name = SECTIONS[cls]
    data = check.mapping(top.get(name), (name,), tuple(spec))
    values = {key: check.get(data, (name, key), *rule) for key, rule in spec.items()}
    return cls(**values)


def _reasons(check: Checker, value: Any, key: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        raise ValueError("must be a non-empty list of reasons")
    reasons: list[str] = []
    for index, reason in enumerate(value):
        path: KeyPath = ("validation", key, index)
        reason = check.convert(reason, path, REQUIRED, text)
        if reason in reasons:
            check.problem(path, f"duplicate reason {reason!r}")
        elif reason:
            reasons.append(reason)
    return tuple(reasons)


def _categories(check: Checker, value: Any, with_severities: bool) -> tuple[Category, ...]:
    if not isinstance(value, list) or not value:
        check.problem(("categories",), "must be a non-empty list of categories")
        return ()
    categories: list[Category] = []
    first_line: dict[tuple[str, str], int] = {}  # (field, value) -> line, for duplicates
    for index, item in enumerate(value):
        path: KeyPath = ("categories", index)
        if not isinstance(item, dict):
            check.problem(path, "must be a mapping with key, name, type and description")
            continue
        # `severities` is checked by _category_severities; named among the keys a category
        # may have only in a taxonomy with severities (else the messages read as before).
        keys = (*CATEGORY_KEYS, CATEGORY_SEVERITY_KEY) if with_severities else CATEGORY_KEYS
        data = check.mapping(without_severities(item), path, keys)
        key = check.get(data, (*path, "key"), REQUIRED, _key)
        kind = check.get(data, (*path, "type"), REQUIRED, one_of(*TYPES))
        shortcut = check.get(data, (*path, "shortcut"), None, _shortcut)
        for name, unique in (("key", key), ("shortcut", shortcut)):
            if unique is None:
                continue
            if (name, unique) in first_line:
                first = first_line[name, unique]
                check.problem((*path, name), f"duplicate {name} {unique!r} (first at line {first})")
            else:
                first_line[name, unique] = check.lines[(*path, name)]
        prompt = check.get(data, (*path, "paired_prompt"), None, text)
        if prompt and kind == "singleton":
            check.problem((*path, "paired_prompt"), "is only allowed on paired categories")
        categories.append(
            Category(
                key=key or "",
                name=check.get(data, (*path, "name"), REQUIRED, text) or "",
                type=kind or "",
                description=check.get(data, (*path, "description"), REQUIRED, text) or "",
                shortcut=shortcut,
                color=check.get(data, (*path, "color"), PALETTE[index % len(PALETTE)], _color),
                paired_prompt=(prompt or DEFAULT_PAIRED_PROMPT) if kind == "paired" else None,
            )
        )
    return tuple(categories)


def without_severities(item: dict) -> dict:
    """A category's mapping without its `severities` (read apart, by _category_severities)."""
    return {key: value for key, value in item.items() if key != CATEGORY_SEVERITY_KEY}


def _severities(
    check: Checker, value: Any, categories: tuple[Category, ...]
) -> tuple[Severity, ...]:
    """severities: [{key, name, weight, description?, shortcut?}]; absent = none."""
    if value is None:
        return ()
    if not isinstance(value, list) or not value:
        check.problem(("severities",), "must be a non-empty list of severities (or left out)")
        return ()
    # Severity keys share the page's keyboard with the category shortcuts.
    taken = {c.shortcut: f"category {c.key!r}" for c in categories if c.shortcut}
    seen: dict[str, int] = {}
    severities: list[Severity] = []
    for index, item in enumerate(value):
        path: KeyPath = ("severities", index)
        if not isinstance(item, dict):
            check.problem(path, "must be a mapping with key, name and weight")
            continue
        data = check.mapping(item, path, SEVERITY_KEYS)
        key = check.get(data, (*path, "key"), REQUIRED, _key)
        if key is not None and key in seen:
            check.problem((*path, "key"), f"duplicate key {key!r} (first at line {seen[key]})")
            key = None
        elif key is not None:
            seen[key] = check.lines[(*path, "key")]
        shortcut = check.get(data, (*path, "shortcut"), None, _shortcut)
        if shortcut is not None and shortcut in taken:
            check.problem(
                (*path, "shortcut"), f"{shortcut!r} is already the key of {taken[shortcut]}"
            )
            shortcut = None
        elif shortcut is not None:
            taken[shortcut] = f"severity {key!r}"
        weight = check.get(data, (*path, "weight"), REQUIRED, number(0.0, SEVERITY_WEIGHT_MAX))
        name = check.get(data, (*path, "name"), REQUIRED, text)
        if key is None or weight is None or name is None:
            continue
        description = check.get(data, (*path, "description"), None, text)
        severities.append(Severity(key, name, weight, description, shortcut))
    return tuple(severities)


def _category_severities(
    check: Checker, value: Any, categories: tuple[Category, ...], severities: tuple[Severity, ...]
) -> tuple[Category, ...]:
    """categories[].severities: a subset of the severity keys, set on each category."""
    if not isinstance(value, list):
        return categories
    known = [severity.key for severity in severities]
    by_key = {category.key: category for category in categories}
    for index, item in enumerate(value):
        if not isinstance(item, dict) or item.get(CATEGORY_SEVERITY_KEY) is None:
            continue
        path: KeyPath = ("categories", index, CATEGORY_SEVERITY_KEY)
        subset = _severity_subset(check, path, item[CATEGORY_SEVERITY_KEY], known)
        category = by_key.get(item.get("key"))  # type: ignore[arg-type]
        if category is not None:
            by_key[category.key] = dataclasses.replace(category, severities=subset)
    out = [by_key.get(category.key, category) for category in categories]
    return tuple(out)


def _severity_subset(check: Checker, path: KeyPath, value: Any, known: list[str]) -> tuple:
    if not known:
        check.problem(path, "needs a top-level severities: list to choose from")
        return ()
    if not isinstance(value, list) or not value:
        check.problem(path, f"must be a non-empty list of severity keys ({', '.join(known)})")
        return ()
    subset: list[str] = []
    for position, key in enumerate(value):
        if key not in known:
            message = f"no severity {key!r} (severities: {', '.join(known)})"
            check.problem((*path, position), message)
        elif key in subset:
            check.problem((*path, position), f"duplicate severity {key!r}")
        else:
            subset.append(key)
    # File order of the top-level list: the buttons keep one order everywhere.
    return tuple(key for key in known if key in subset)


def init_app(app: Flask) -> None:
    """Load TAXONOMY_PATH into app.extensions["taxonomy"]; a bad file stops the app."""
    app.extensions["taxonomy"] = load_taxonomy(app.config["TAXONOMY_PATH"])


def current_taxonomy() -> Taxonomy:
    """The taxonomy of the running app."""
    return current_app.extensions["taxonomy"]


def summarise(taxonomy: Taxonomy) -> str:
    """A human-readable summary of a taxonomy, for `flask check-taxonomy`."""
    paired = sum(c.is_paired for c in taxonomy.categories)
    count = len(taxonomy.categories)
    study, validation = taxonomy.study, taxonomy.validation
    lines = [
        taxonomy.title,
        f"file: {taxonomy.path}",
        f"version: {taxonomy.version}",
        f"{count} categories ({count - paired} singleton, {paired} paired):",
        *(f"  {c.key:<24} {c.type:<9} [{c.shortcut or ' '}] {c.name}" for c in taxonomy.categories),
        f"entities: {taxonomy.entities}",
        f"comment: {taxonomy.comment.label!r} "
        f"({'required' if taxonomy.comment.required else 'optional'}, "
        f"max {taxonomy.comment.max_length} characters)",
        f"study: {study.annotators_per_document} annotator(s) per document, "
        f"abandoned after {study.abandon_after_minutes} min, "
        f"places released after {study.claim_minutes} min without activity "
        f"(5 min before the first work), at most {study.max_open_per_network} open "
        "per client network, "
        f"attention checks {study.attention_check_share:.0%}, "
        f"completion URL {study.completion_url or '(none)'}",
        f"attention_checks: {study.attention_checks} ("
        + (
            "missed checks end with failed_checks)"
            if study.attention_checks == "fail"
            else "missed checks are only flagged on the dashboard)"
        ),
        "prolific study id: "
        + (
            f"{study.prolific_study_id} (Prolific arrivals with another STUDY_ID are refused)"
            if study.prolific_study_id
            else "(none)"
        ),
        "completion per outcome ({code} = the session's own code):",
        *(
            f"  {target.outcome:<16} {target.url or '(none: the app shows its own code)'}"
            for target in study.completion_targets
        ),
        "planted checks: "
        + (", ".join(f"{kind} -> {key}" for kind, key in taxonomy.checks) or "(none)"),
        training_summary(taxonomy.training),
        f"validation: partial agreement counts as "
        f"{'valid' if validation.partial_counts_as_valid else 'invalid'}; reasons "
        "(items with a question):",
        *(f"  {reason}" for reason in validation.reasons),
        "category reasons (items with a category and no question):",
        *(f"  {reason}" for reason in validation.category_reasons),
        *_study_steps_summary(taxonomy),
        *_severity_summary(taxonomy),
    ]
    return "\n".join(lines)


def _severity_summary(taxonomy: Taxonomy) -> list[str]:
    """check-taxonomy's lines on severities (none when the taxonomy has none)."""
    if not taxonomy.severities:
        return []
    lines = [f"severities ({len(taxonomy.severities)}, MQM weights):"]
    lines += [
        f"  {s.key:<24} [{s.shortcut or ' '}] weight {s.weight:g}  {s.name}"
        for s in taxonomy.severities
    ]
    lines += [
        f"  {c.key:<24} offers {', '.join(c.severities)}"
        for c in taxonomy.categories
        if c.severities
    ]
    return lines


def training_summary(training: TrainingSettings) -> str:
    """One line saying what training the taxonomy asks for."""
    if not training.enabled:
        return "training: none"
    return (
        f"training: {', '.join(training.documents)}; pass with recall >= "
        f"{training.min_recall:.0%} and precision >= {training.min_precision:.0%} "
        f"in at most {training.attempts} attempt(s) per document"
    )


def _study_steps_summary(taxonomy: Taxonomy) -> list[str]:
    """check-taxonomy's lines for the consent step and the surveys."""
    consent = taxonomy.consent
    lines = [f"consent: {f'{len(consent)} characters of Markdown' if consent else '(none)'}"]
    for which, when in (("before", "before the task"), ("after", "after Submit")):
        questions = taxonomy.survey.questions(which)
        lines.append(f"survey {when}: {len(questions) or 'no'} question(s)")
        lines.extend(
            f"  {q.key:<24} {q.type:<7} {'required' if q.required else 'optional'}  {q.text}"
            for q in questions
        )
    return lines


def default_taxonomy_path() -> str:
    """The file the app would load, found without creating the app (which may not start)."""
    env = os.environ
    return env.get("FLASK_TAXONOMY_PATH") or env.get("TAXONOMY_PATH") or str(DEFAULT_TAXONOMY)


@click.command("check-taxonomy")
@click.argument("path", required=False)
def check_taxonomy_command(path: str | None) -> None:
    """Validate a taxonomy YAML file and summarise it.

    PATH defaults to $TAXONOMY_PATH, else config/taxonomy.yaml. Exits 1 and lists
    every problem as FILE:LINE: KEY: MESSAGE when the file is not valid.
    """
    path = path or default_taxonomy_path()
    try:
        taxonomy = load_taxonomy(path)
    except TaxonomyError as error:
        for problem in error.problems:
            click.echo(str(problem), err=True)
        click.echo(f"{len(error.problems)} problem(s) in {path}", err=True)
        raise click.exceptions.Exit(1) from None
    click.echo(summarise(taxonomy))
    for warning in taxonomy_warnings(path, taxonomy):
        click.echo(f"warning: {warning}", err=True)


def taxonomy_warnings(path: str, taxonomy: Taxonomy) -> list[Problem]:
    """What a valid file still lacks for production, at its line: a study that sends
    workers back to Prolific without `study.prolific_study_id` (production refuses its
    Prolific arrivals, app.crowd.submissions)."""
    if not taxonomy.study.sends_to_prolific or taxonomy.study.prolific_study_id:
        return []
    _, _, check = read_yaml(path)
    check.problem(
        ("study", "prolific_study_id"),
        "missing: this study sends workers back to Prolific, so production needs the "
        "Prolific study's id here (Prolific arrivals are refused without it)",
    )
    return check.problems
