"""The error taxonomy: YAML file (or a study's stored version) -> validated frozen dataclasses.

One module per concern: `model` (the dataclasses and the file's vocabulary), `loader`
(the file -> a Taxonomy, every problem at its line), `surveys` (the consent: and survey:
sections), `running` (the running app's taxonomy: init_app, current_taxonomy, which
app.studies answers from the database per study and session), `summary`
(what check-taxonomy prints) and `cli` (`flask check-taxonomy`). Callers import from the
package: the names below.
"""

from app.taxonomy.cli import check_taxonomy_command
from app.taxonomy.loader import load_taxonomy, load_taxonomy_text
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
from app.taxonomy.running import (
    current_taxonomy,
    file_taxonomy,
    init_app,
    max_comment_length,
    set_resolver,
)
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
    "file_taxonomy",
    "init_app",
    "load_taxonomy",
    "load_taxonomy_text",
    "max_comment_length",
    "set_resolver",
    "summarise",
    "training_summary",
]
