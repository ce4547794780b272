"""The error taxonomy: YAML file -> validated frozen dataclasses, loaded once at start.

One module per concern: `model` (the dataclasses and the file's vocabulary), `loader`
(the file -> a Taxonomy, every problem at its line), `surveys` (the consent: and survey:
sections), `running` (the running app's taxonomy: init_app, current_taxonomy), `summary`
(what check-taxonomy prints) and `cli` (`flask check-taxonomy`). Callers import from the
package: the names below.
"""

from app.taxonomy.cli import check_taxonomy_command
from app.taxonomy.loader import load_taxonomy
from app.taxonomy.model import (
    DEFAULT_PAIRED_PROMPT,
    PALETTE,
    Category,
    CommentSettings,
    Severity,
    StudySettings,
    Taxonomy,
    TaxonomyError,
    TrainingSettings,
    ValidationSettings,
)
from app.taxonomy.running import current_taxonomy, init_app, max_comment_length
from app.taxonomy.summary import summarise, training_summary

__all__ = [
    "DEFAULT_PAIRED_PROMPT",
    "PALETTE",
    "Category",
    "CommentSettings",
    "Severity",
    "StudySettings",
    "Taxonomy",
    "TaxonomyError",
    "TrainingSettings",
    "ValidationSettings",
    "check_taxonomy_command",
    "current_taxonomy",
    "init_app",
    "load_taxonomy",
    "max_comment_length",
    "summarise",
    "training_summary",
]
