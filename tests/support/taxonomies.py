"""Taxonomy files for tests: a shipped taxonomy with a change, written into the test's
folder (`taxonomy_variant`), and made the running app's taxonomy (`use_taxonomy`). Every
test that needs another taxonomy builds it here, so the YAML is edited in one place."""

from __future__ import annotations

from pathlib import Path

from flask import Flask

from app.taxonomy import load_taxonomy
from tests.support.apps import ROOT

DEFAULT_TAXONOMY = ROOT / "config" / "taxonomy.yaml"
BOOOOKSCORE_TAXONOMY = ROOT / "config" / "taxonomies" / "booookscore.yaml"
STUDY_HEADER = "\nstudy:\n"


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


def use_taxonomy(app: Flask, path: Path | str) -> None:
    """Make the taxonomy file at `path` the running app's taxonomy."""
    app.extensions["taxonomy"] = load_taxonomy(path)
