"""A taxonomy with severities for tests: the default one plus an MQM-style `severities:`
list (minor 1, major 5), with `ungrammatical` offering only minor."""

from __future__ import annotations

from pathlib import Path

from tests.support.taxonomies import DEFAULT_TAXONOMY, taxonomy_variant

__all__ = ["DEFAULT_TAXONOMY", "SEVERITIES", "WEIGHTS", "severity_taxonomy"]

SEVERITIES = """\
severities:
  - key: minor
    name: Minor
    weight: 1
    description: A reader stumbles but understands.
    shortcut: q
  - key: major
    name: Major
    weight: 5
    description: A reader cannot follow the story here.
    shortcut: w
"""
WEIGHTS = {"minor": 1.0, "major": 5.0}
# `ungrammatical` (shortcut 6) offers only minor.
ONLY_MINOR = {'    shortcut: "6"\n': '    shortcut: "6"\n    severities: [minor]\n'}


def severity_taxonomy(folder: Path) -> str:
    """Write the default taxonomy with severities into `folder`; return its path."""
    path = taxonomy_variant(folder, replace=ONLY_MINOR, append=SEVERITIES, name="severities.yaml")
    return str(path)
