"""The running app's taxonomy: loaded once at start (`init_app`), read by every request
(`current_taxonomy`).
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
