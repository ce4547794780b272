"""The W3C Web Annotation Data Model's MUST rules for what our export writes, and the
terms of its JSON-LD context (tests/fixtures/w3c/anno.jsonld, the W3C's own file), so
tests can check every exported line offline.

`model_problems(annotation)` lists what breaks the Recommendation (23 February 2017)
in an Annotation: 3.1 (@context, id, type, target), 3.2.4 (TextualBody value), 3.3.1
(created), 3.3.2 (agents), 3.3.5 and 4.1 (motivation and purpose from the model's list),
4.2.4 and 4.2.5 (selectors), and every key, type and motivation that the context does
not define (a JSON-LD processor would drop it).
"""

from __future__ import annotations

import json
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

CONTEXT_URL = "http://www.w3.org/ns/anno.jsonld"
CONTEXT_FILE = Path(__file__).resolve().parent.parent / "fixtures" / "w3c" / "anno.jsonld"
# 3.3.5: the Motivation instances of the Recommendation.
MOTIVATIONS = frozenset(
    "assessing bookmarking classifying commenting describing editing highlighting "
    "identifying linking moderating questioning replying tagging".split()
)
# Keys whose values are data, not JSON-LD terms to look up.
VALUE_KEYS = frozenset({"value", "exact", "prefix", "suffix", "nickname", "name", "format"})


@cache
def context_terms() -> frozenset[str]:
    """The terms the anno.jsonld context defines."""
    return frozenset(json.loads(CONTEXT_FILE.read_text("utf-8"))["@context"])


def _many(value: Any) -> list[Any]:
    return [] if value is None else value if isinstance(value, list) else [value]


def _is_iri(value: Any) -> bool:
    return isinstance(value, str) and ":" in value and " " not in value


def _terms(node: Any, path: str, problems: list[str]) -> None:
    """Every key of every object is a context term; so is every type and motivation."""
    if isinstance(node, list):
        for index, item in enumerate(node):
            _terms(item, f"{path}[{index}]", problems)
        return
    if not isinstance(node, dict):
        return
    terms = context_terms()
    for key, value in node.items():
        if key != "@context" and key not in terms:
            problems.append(f"{path}.{key}: not a term of the anno.jsonld context")
        if key in ("type", "motivation", "purpose"):
            problems += [
                f"{path}.{key}: {v!r} is not a term of the anno.jsonld context"
                for v in _many(value)
                if v not in terms
            ]
        elif key not in VALUE_KEYS and key != "@context":
            _terms(value, f"{path}.{key}", problems)


def _selector(selector: Any, path: str, problems: list[str]) -> None:
    kind = selector.get("type") if isinstance(selector, dict) else None
    if kind == "TextQuoteSelector":  # 4.2.4
        if not isinstance(selector.get("exact"), str):
            problems.append(f"{path}: a TextQuoteSelector MUST have exactly 1 exact")
        for key in ("prefix", "suffix"):
            if key in selector and not isinstance(selector[key], str):
                problems.append(f"{path}.{key}: MUST NOT have more than 1")
    elif kind == "TextPositionSelector":  # 4.2.5
        for key in ("start", "end"):
            value = selector.get(key)
            if not (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
                problems.append(f"{path}.{key}: MUST be exactly 1 non-negative integer")
    else:
        problems.append(f"{path}: a selector this export does not write ({kind!r})")


def _resource(node: Any, path: str, problems: list[str]) -> None:
    if isinstance(node, str):
        if not _is_iri(node):
            problems.append(f"{path}: an external resource MUST be an IRI")
        return
    if not isinstance(node, dict):
        problems.append(f"{path}: neither an IRI nor an object")
        return
    kinds = _many(node.get("type"))
    if "TextualBody" in kinds and not isinstance(node.get("value"), str):  # 3.2.4
        problems.append(f"{path}: a TextualBody MUST have exactly 1 value")
    if ("SpecificResource" in kinds or "selector" in node) and not _is_iri(node.get("source")):
        problems.append(f"{path}: a SpecificResource MUST have exactly 1 source IRI")  # 4
    for purpose in _many(node.get("purpose")):  # 3.3.5, 4.1
        if purpose not in MOTIVATIONS:
            problems.append(f"{path}.purpose: {purpose!r} is not a Motivation")
    for index, selector in enumerate(_many(node.get("selector"))):
        _selector(selector, f"{path}.selector[{index}]", problems)


def model_problems(annotation: Any) -> list[str]:
    """What in `annotation` breaks the Web Annotation Data Model's MUST rules, or uses a
    term the anno.jsonld context does not define; [] when nothing does."""
    if not isinstance(annotation, dict):
        return ["an Annotation is a JSON object"]
    problems: list[str] = []
    context = annotation.get("@context")
    if context != CONTEXT_URL and (
        not isinstance(context, list) or CONTEXT_URL not in context or len(context) < 2
    ):  # 3.1: one value MUST be the string itself
        problems.append("@context: MUST be (or include) http://www.w3.org/ns/anno.jsonld")
    if not _is_iri(annotation.get("id")):
        problems.append("id: an Annotation MUST have exactly 1 IRI")
    if "Annotation" not in _many(annotation.get("type")):
        problems.append("type: MUST include Annotation")
    targets = _many(annotation.get("target"))
    if not targets:
        problems.append("target: MUST have 1 or more")
    for index, target in enumerate(targets):
        _resource(target, f"target[{index}]", problems)
    for index, body in enumerate(_many(annotation.get("body"))):
        _resource(body, f"body[{index}]", problems)
    for motivation in _many(annotation.get("motivation")):
        if motivation not in MOTIVATIONS:
            problems.append(f"motivation: {motivation!r} is not a Motivation")
    created = annotation.get("created")
    if created is not None:
        try:
            datetime.fromisoformat(created)
        except (TypeError, ValueError):
            problems.append("created: MUST be an xsd:dateTime")
    for creator in _many(annotation.get("creator")):  # 3.3.2
        if isinstance(creator, dict) and "id" in creator and not _is_iri(creator["id"]):
            problems.append("creator.id: an Agent MUST NOT have more than 1 IRI")
    _terms(annotation, "", problems)
    return problems
