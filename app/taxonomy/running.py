"""The running app's taxonomy: loaded once at start (`init_app`), read by every request
(`current_taxonomy`), with the limit deployment config may put on it
(`max_comment_length`).
"""

from __future__ import annotations

from flask import Flask, current_app

from app.taxonomy.loader import load_taxonomy
from app.taxonomy.model import Taxonomy


def init_app(app: Flask) -> None:
    """Load TAXONOMY_PATH into app.extensions["taxonomy"]; a bad file stops the app."""
    app.extensions["taxonomy"] = load_taxonomy(app.config["TAXONOMY_PATH"])


def current_taxonomy() -> Taxonomy:
    """The taxonomy of the running app."""
    return current_app.extensions["taxonomy"]


def max_comment_length() -> int:
    """The comment limit: the smaller of the taxonomy's and the app's MAX_COMMENT_LENGTH."""
    limits = [current_taxonomy().comment.max_length]
    configured = current_app.config.get("MAX_COMMENT_LENGTH")
    if isinstance(configured, int) and configured > 0:
        limits.append(configured)
    return min(limits)
