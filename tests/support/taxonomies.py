"""Taxonomy files for tests: a shipped taxonomy with a change, written into the test's
folder (`taxonomy_variant`), and made the running app's taxonomy (`use_taxonomy`). Every
test that needs another taxonomy builds it here, so the YAML is edited in one place."""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path

import pytest
from flask import Flask, current_app, g, has_app_context

from app.studies import default_study, store_taxonomy
from app.taxonomy import Taxonomy, TaxonomyError, load_taxonomy
from tests.support.apps import ROOT

DEFAULT_TAXONOMY = ROOT / "config" / "taxonomy.yaml"
BOOOOKSCORE_TAXONOMY = ROOT / "config" / "taxonomies" / "booookscore.yaml"
STUDY_HEADER = "\nstudy:\n"
# Consent and both surveys (the before-survey: native required, tools; after: difficulty
# required, feedback), to append to a taxonomy. The raw <b> shows the consent is escaped.
STEPS = """\
consent: |
  **Taking part.** You will read a summary. <b>raw</b>
survey:
  before:
    - {key: native, type: choice, text: "Is English your first language?",
       options: ["Yes", "No"], required: true}
    - {key: tools, type: multi, text: "What will you use?", options: [Notes, Dictionary]}
  after:
    - {key: difficulty, type: likert, scale: 5, text: "How hard was the task?", required: true}
    - {key: feedback, type: text, text: "Anything else?", max_length: 200}
"""
# A small taxonomy of the tests' own: two categories, the second paired.
TWO_CATEGORIES = """\
title: Test taxonomy
instructions: Read each paragraph.
categories:
  - key: vague
    name: Vague
    type: singleton
    description: Too vague to follow.
  - key: echo
    name: Echo
    type: paired
    description: Says the same thing twice.
"""


def taxonomy_variant(
    folder: Path,
    *,
    base: Path = DEFAULT_TAXONOMY,
    replace: dict[str, str] | None = None,
    study: str | None = None,
    study_lines: str = "",
    append: str = "",
    name: str = "taxonomy.yaml",
) -> Path:
    """Write `base` with these changes to folder/name and return its path:

    - `replace`: each old text (it must be there) replaced once by the new one;
    - `study`: the whole body of the `study:` section (its indented lines), instead of the
      shipped one; `study_lines`: indented lines added at the top of that section;
    - `append`: top-level sections added at the end (consent, survey, training, ...).
    """
    text = base.read_text(encoding="utf-8")
    for old, new in (replace or {}).items():
        assert old in text, f"{old!r} is not in {base.name}"
        text = text.replace(old, new, 1)
    head, found, rest = text.partition(STUDY_HEADER)
    assert found, f"{base.name} has no study: section"
    if study is not None:
        lines = rest.splitlines(keepends=True)
        end = next(
            (i for i, line in enumerate(lines) if line.strip() and not line.startswith(" ")),
            len(lines),
        )
        rest = study + "".join(lines[end:])
    text = f"{head}{STUDY_HEADER}{study_lines}{rest}"
    if append:
        text = text.rstrip("\n") + "\n" + append
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def write_taxonomy(folder: Path, content: str, name: str = "taxonomy.yaml") -> Path:
    """A taxonomy file of this content (a test's own, not a variant of a shipped one)."""
    path = folder / name
    path.write_text(content, encoding="utf-8")
    return path


def problems_of(path: Path) -> list[str]:
    """The problems of a bad taxonomy file, as "line: key: message" strings."""
    with pytest.raises(TaxonomyError) as caught:
        load_taxonomy(path)
    return [f"{p.line}: {p.key}: {p.message}" for p in caught.value.problems]


def use_taxonomy(app: Flask, path: Path | str) -> Taxonomy:
    """Make the file at `path` the default study's taxonomy (its next version, taken as
    the app takes TAXONOMY_PATH at start) and the app's file taxonomy; the taxonomy.

    Issue 30: the taxonomy a request uses comes from the database, so assigning
    app.extensions["taxonomy"] alone no longer changes it."""
    taxonomy = load_taxonomy(path)
    app.extensions["taxonomy"] = taxonomy
    inside = has_app_context() and current_app._get_current_object() is app
    with nullcontext() if inside else app.app_context():
        study = default_study()
        study.taxonomy_file = str(path)
        store_taxonomy(study, Path(path).read_bytes(), str(path), from_file=True)
        g.pop("falte_taxonomy", None)
    return taxonomy
