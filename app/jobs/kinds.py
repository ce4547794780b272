"""The kinds of analysis the queue computes, registered in one line each.

A kind is a name (the `kind` column of `analysis_results`), its algorithm version (part
of every key and checked on every read: a new version never serves an old value) and a
plain function `compute(payload, limits) -> value`: JSON in (everything the value depends
on), JSON out. A value with `"skipped": "time" | "memory" | "error"` is stored as skipped;
`"approximate": true` marks an approximate value. `limited`: the function keeps the
analysis limits itself (gamma's child process); otherwise the job runs it under them (in
RQ's work horse: an address-space limit and the job's timeout).

    GAMMA = register("gamma", ALGORITHM, compute_gamma, limited=True)

A module that registers a kind must be imported by the commands' registry (app/cli.py,
through its package's cli.py), so that the worker knows it (docs/architecture.md).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from app.jobs.limits import Limits

Compute = Callable[[dict[str, Any], Limits], dict[str, Any]]


@dataclass(frozen=True)
class Kind:
    """One kind of analysis: its name, algorithm version and computation."""

    name: str
    version: str
    compute: Compute
    limited: bool = False

    def key(self, content: Any, parameters: Any = None) -> str:
        """SHA-256 of the content, the parameters and this kind's version (JSON, keys
        sorted): the key of one result."""
        body = {"kind": self.name, "content": content, "parameters": parameters}
        body["version"] = self.version
        text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()


KINDS: dict[str, Kind] = {}


def register(name: str, version: str, compute: Compute, *, limited: bool = False) -> Kind:
    """Add a kind of analysis (its name at most 40 characters); returns it."""
    if len(name) > 40 or not name.replace("_", "").replace("-", "").isalnum():
        raise ValueError(f"analysis kind {name!r}: letters, digits, - and _, at most 40")
    kind = Kind(name, version, compute, limited)
    if KINDS.get(name, kind) != kind:
        raise ValueError(f"analysis kind {name!r} is registered twice")
    KINDS[name] = kind
    return kind
