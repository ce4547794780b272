"""The OpenAPI 3.1 document served at /api/openapi.json, merged from this folder's YAML files.

Each blueprint that owns JSON endpoints describes them in its own file (annotate.yaml,
validators.yaml, ...). `openapi.yaml` holds the document's header and the shared
components (error envelope, CSRF header); the others add `paths` and `components`.
"""

from __future__ import annotations

import copy
from functools import cache
from pathlib import Path
from typing import Any

import yaml

SPEC_DIR = Path(__file__).resolve().parent
BASE_FILE = "openapi.yaml"


class SpecError(ValueError):
    """Two spec files define the same path or component, or a file is not a mapping."""


def _read(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(data, dict):
        raise SpecError(f"{path.name}: expected a mapping at the top level")
    return data


def merge_specs(base: dict[str, Any], parts: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """Merge `paths` and every `components` section of `parts` into a copy of `base`."""
    spec = copy.deepcopy(base)
    paths = spec.setdefault("paths", {})
    components = spec.setdefault("components", {})
    for name, part in parts:
        for path, item in (part.get("paths") or {}).items():
            if path in paths:
                raise SpecError(f"{name}: path {path} is already defined")
            paths[path] = item
        for section, entries in (part.get("components") or {}).items():
            target = components.setdefault(section, {})
            for key, value in (entries or {}).items():
                if key in target and target[key] != value:
                    raise SpecError(f"{name}: components.{section}.{key} is already defined")
                target[key] = value
        for tag in part.get("tags") or []:
            if tag not in spec.setdefault("tags", []):
                spec["tags"].append(tag)
    return spec


@cache
def _build(directory: str) -> dict[str, Any]:
    folder = Path(directory)
    base = _read(folder / BASE_FILE)
    parts = [
        (path.name, _read(path)) for path in sorted(folder.glob("*.yaml")) if path.name != BASE_FILE
    ]
    return merge_specs(base, parts)


def build_spec(directory: Path = SPEC_DIR) -> dict[str, Any]:
    """The merged OpenAPI document (read once per process; a copy is returned)."""
    return copy.deepcopy(_build(str(directory)))
