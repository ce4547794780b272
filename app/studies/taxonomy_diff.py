"""What a new taxonomy version changes, shown in the console before it is saved
(docs/studies.md, "Uploading a taxonomy"). Plain functions on parsed taxonomies and
YAML texts: no app, no database.

Categories are compared by key (added, removed, changed: any field of the category);
the study's settings sections (`study:`, `training:`, `consent:`, `survey:`, ...:
app.studies.taxonomies.SECTIONS) as a unified diff of each section dumped as YAML, and
the other top-level texts (title, instructions, ...) likewise.
"""

from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass, field
from typing import Any

import yaml

from app.taxonomy import Taxonomy


@dataclass(frozen=True)
class SectionChange:
    """One top-level section that changes, and the lines of its unified diff."""

    name: str
    lines: tuple[str, ...]


@dataclass(frozen=True)
class TaxonomyDiff:
    """The difference between the current version (None: the study has none) and a new one."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    sections: tuple[SectionChange, ...] = field(default_factory=tuple)

    @property
    def empty(self) -> bool:
        """Nothing changes: the upload is the current version."""
        return not (self.added or self.removed or self.changed or self.sections)


def taxonomy_diff(
    old: Taxonomy | None, old_text: str | None, new: Taxonomy, new_text: str
) -> TaxonomyDiff:
    """Categories added, removed and changed, and the top-level sections that change."""
    before = {c.key: dataclasses.asdict(c) for c in old.categories} if old else {}
    after = {c.key: dataclasses.asdict(c) for c in new.categories}
    return TaxonomyDiff(
        added=tuple(key for key in after if key not in before),
        removed=tuple(key for key in before if key not in after),
        changed=tuple(key for key in after if key in before and before[key] != after[key]),
        sections=tuple(section_changes(_top(old_text), _top(new_text))),
    )


def _top(text: str | None) -> dict[str, Any]:
    data = yaml.safe_load(text) if text else None
    if not isinstance(data, dict):
        return {}
    return {key: value for key, value in data.items() if key != "categories"}


def section_changes(before: dict[str, Any], after: dict[str, Any]) -> list[SectionChange]:
    """Each top-level section (but `categories`) whose value differs, with its diff."""
    changes = []
    for name in [*after, *(key for key in before if key not in after)]:
        if before.get(name) == after.get(name):
            continue
        old = _dump(name, before) if name in before else []
        new = _dump(name, after) if name in after else []
        lines = difflib.unified_diff(old, new, "current", "uploaded", lineterm="", n=2)
        changes.append(SectionChange(str(name), tuple(lines)))
    return changes


def _dump(name: str, data: dict[str, Any]) -> list[str]:
    text = yaml.safe_dump(
        {name: data[name]}, allow_unicode=True, sort_keys=False, default_flow_style=False
    )
    return text.splitlines()
