"""The taxonomy as the app uses it: frozen dataclasses, and the vocabulary of the file.

Categories (with their severities), the comment box, the crowd study's `study:` section, the
validation rounds' reasons, training, the steps around the task (consent and surveys:
app.taxonomy.surveys). app.taxonomy.loader builds them from the YAML file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import click
from markdown_it import MarkdownIt

from app.core.errors import ProblemsError
from app.interop.payments import BonusRule
from app.rules.outcomes import (
    CompletionTarget,
    completion_targets,
)
from app.rules.platforms import PROLIFIC_COMPLETE_URL
from app.taxonomy.surveys import Survey, markdown_html

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
    # Bonuses `flask payments` puts on the sheets: per validated annotation, per planted
    # error found, a cap, the currency (app.interop.payments.BonusRule); None: no bonus.
    bonus: BonusRule | None = None

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
