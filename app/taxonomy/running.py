"""The running app's taxonomy: the file loaded once at start (`init_app`), the taxonomy a
request or a command works with (`current_taxonomy`), with the limit deployment config may
put on it (`max_comment_length`).

Studies (app.studies) keep their taxonomies as versions in the database: they register a
resolver (`set_resolver`) that answers the request's study's or session's version, so that
callers keep asking `current_taxonomy()` here. Without one (the app before it registered
it), the file is the taxonomy.
"""

from __future__ import annotations

from collections.abc import Callable

from flask import Flask, current_app

from app.taxonomy.loader import load_taxonomy
from app.taxonomy.model import Taxonomy


def init_app(app: Flask) -> None:
    """Load TAXONOMY_PATH into app.extensions["taxonomy"]; a bad file stops the app."""
    app.extensions["taxonomy"] = load_taxonomy(app.config["TAXONOMY_PATH"])


def set_resolver(app: Flask, resolver: Callable[[], Taxonomy]) -> None:
    """Let `resolver` answer current_taxonomy() from now on (app.studies registers it)."""
    app.extensions["taxonomy_resolver"] = resolver


def file_taxonomy() -> Taxonomy:
    """The taxonomy TAXONOMY_PATH held when the app started."""
    return current_app.extensions["taxonomy"]


def current_taxonomy() -> Taxonomy:
    """The taxonomy of this request or command: its study's or its session's version
    (app.studies), else the file's."""
    resolver = current_app.extensions.get("taxonomy_resolver")
    return resolver() if resolver is not None else current_app.extensions["taxonomy"]


def max_comment_length() -> int:
    """The comment limit: the smaller of the taxonomy's and the app's MAX_COMMENT_LENGTH."""
    limits = [current_taxonomy().comment.max_length]
    configured = current_app.config.get("MAX_COMMENT_LENGTH")
    if isinstance(configured, int) and configured > 0:
        limits.append(configured)
    return min(limits)
