"""A taxonomy with severities for tests: the default one plus an MQM-style `severities:`
list (minor 1, major 5), with `ungrammatical` offering only minor."""

from __future__ import annotations

from pathlib import Path

from tests.support.apps import ROOT

DEFAULT_TAXONOMY = ROOT / "config" / "taxonomy.yaml"
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


def severity_taxonomy(folder: Path) -> str:
    """Write the default taxonomy with severities into `folder`; return its path."""
    text = DEFAULT_TAXONOMY.read_text("utf-8")
    text = text.replace('    shortcut: "6"\n', '    shortcut: "6"\n    severities: [minor]\n')
    path = folder / "severities.yaml"
    path.write_text(text + SEVERITIES, encoding="utf-8")
    return str(path)
