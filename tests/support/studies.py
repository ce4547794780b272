"""Studies in tests: making a taxonomy file the default study's taxonomy, as a changed
TAXONOMY_PATH does at start (issue 30: the taxonomy a request uses comes from the
database, so assigning app.extensions["taxonomy"] alone no longer changes it)."""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path

from flask import Flask, current_app, g, has_app_context

from app.studies import default_study, store_taxonomy
from app.taxonomy import Taxonomy, load_taxonomy


def use_taxonomy(app: Flask, path: str | Path) -> Taxonomy:
    """Make the file at `path` the default study's taxonomy (its next version, taken as
    the app takes TAXONOMY_PATH at start) and the app's file taxonomy; the taxonomy."""
    taxonomy = load_taxonomy(path)
    app.extensions["taxonomy"] = taxonomy
    inside = has_app_context() and current_app._get_current_object() is app
    with nullcontext() if inside else app.app_context():
        study = default_study()
        study.taxonomy_file = str(path)
        store_taxonomy(study, Path(path).read_bytes(), str(path), from_file=True)
        g.pop("falte_taxonomy", None)
    return taxonomy
