"""The crowd study's effective settings: the taxonomy's `study:` section, then config overrides.

The taxonomy file holds the study design (quota, completion codes per outcome, abandonment,
how long an unused session holds its place, attention checks); deployment config may
override the completion URL of every outcome (COMPLETION_URL) and the abandonment timeout
(ABANDON_AFTER_MINUTES), and sets the recall below which a worker's attention checks are
flagged (ATTENTION_CHECK_MIN_RECALL, default 0.5) and the precision below which they are
(ATTENTION_CHECK_MIN_PRECISION, default 0.5).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from flask import current_app
from markupsafe import Markup

from app.rules.outcomes import CompletionTarget, completion_address, completion_targets
from app.taxonomy import Taxonomy, TaxonomyError, current_taxonomy, load_taxonomy

DEFAULT_MIN_RECALL = 0.5


@dataclass(frozen=True)
class EffectiveStudySettings:
    """What the assignment, completion and dashboard code use, with where each value came from."""

    annotators_per_document: int
    completion_url: str | None
    abandon_after_minutes: int
    attention_check_share: float
    min_gold_recall: float
    completion_url_source: str  # "taxonomy" | "config" | "none"
    abandon_source: str  # "taxonomy" | "config"
    min_gold_precision: float = DEFAULT_MIN_RECALL
    completion: tuple[CompletionTarget, ...] = ()  # one per outcome, in OUTCOMES order
    attention_checks: str = "flag"  # flag | fail
    claim_minutes: int = 10  # see app.crowd.assignment.claims
    max_open_per_network: int = 3  # see app.crowd.networks

    def completion_template(self, outcome: str | None) -> str | None:
        """The completion URL of an outcome ({code} unfilled); an open session's is None."""
        return next((t.url for t in self.completion if t.outcome == outcome), None)

    def completion_address(self, outcome: str | None, code: str) -> str | None:
        """Where a worker with this outcome and per-session code goes (None: nowhere)."""
        return completion_address(self.completion_template(outcome), code)

    def abandoned_before(self, now: datetime | None = None) -> datetime:
        """Active sessions last seen before this instant count as abandoned."""
        return (now or datetime.now(UTC)) - timedelta(minutes=self.abandon_after_minutes)


def study_settings() -> EffectiveStudySettings:
    """The effective study settings of the running app."""
    study = current_taxonomy().study
    config = current_app.config
    completion_url = config.get("COMPLETION_URL") or study.completion_url
    if config.get("COMPLETION_URL"):
        url_source = "config"
    else:
        url_source = "taxonomy" if study.completion_url else "none"
    abandon = config.get("ABANDON_AFTER_MINUTES")
    return EffectiveStudySettings(
        annotators_per_document=study.annotators_per_document,
        completion_url=completion_url,
        abandon_after_minutes=int(abandon) if abandon else study.abandon_after_minutes,
        attention_check_share=study.attention_check_share,
        min_gold_recall=float(config.get("ATTENTION_CHECK_MIN_RECALL", DEFAULT_MIN_RECALL)),
        min_gold_precision=float(config.get("ATTENTION_CHECK_MIN_PRECISION", DEFAULT_MIN_RECALL)),
        completion_url_source=url_source,
        abandon_source="config" if abandon else "taxonomy",
        completion=completion_targets(
            dict(study.completion), study.completion_url, config.get("COMPLETION_URL")
        ),
        attention_checks=study.attention_checks,
        claim_minutes=study.claim_minutes,
        max_open_per_network=study.max_open_per_network,
    )


def instructions_markup(taxonomy: Taxonomy) -> Markup:
    """The taxonomy's Markdown instructions as HTML that Jinja will not escape again.

    Safe to mark: markdown-it renders with raw HTML disabled (any tag in the file comes
    out escaped) and drops javascript:/data: links, so the researchers' text cannot inject
    markup; everything else from the taxonomy stays autoescaped.
    """
    return Markup(taxonomy.instructions_html)  # noqa: S704


@dataclass(frozen=True)
class TaxonomyFileCheck:
    """The taxonomy file on disk, validated again: problems, and whether it changed."""

    path: str
    version: str | None
    problems: tuple[str, ...]

    def differs_from(self, running: Taxonomy) -> bool:
        """True when the file on disk is valid but not the version the app is running."""
        return not self.problems and self.version != running.version


def check_taxonomy_file(path: str) -> TaxonomyFileCheck:
    """Load and validate the taxonomy file again (it may have been edited since start)."""
    try:
        taxonomy = load_taxonomy(path)
    except TaxonomyError as error:
        return TaxonomyFileCheck(path, None, tuple(str(p) for p in error.problems))
    return TaxonomyFileCheck(path, taxonomy.version, ())
