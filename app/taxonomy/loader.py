"""The taxonomy file -> a validated Taxonomy (app.taxonomy.model), every problem with its line.

A bad file never half-loads: `load_taxonomy` collects every problem, each with its
line, and raises them together, so one run of `flask check-taxonomy` shows them all.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
from collections.abc import Callable
from typing import Any

from app.core.errors import ProblemsError
from app.core.i18n import INTERFACE_LANGUAGES, html_lang, interface_locale
from app.core.yaml_checker import (
    REQUIRED,
    Checker,
    KeyPath,
    Problem,
    flag,
    integer,
    number,
    one_of,
    parse_yaml,
    read_yaml,
    text,
)
from app.interop.payments import BonusRule
from app.rules.outcomes import (
    ATTENTION_CHECK_MODES,
    OUTCOMES,
    completion_target,
    completion_url,
)
from app.rules.platforms import is_placeholder
from app.taxonomy.model import (
    BOOOOKSCORE_REASONS,
    CATEGORY_KEYS,
    CATEGORY_REASONS,
    CATEGORY_SEVERITY_KEY,
    CHECK_TYPES,
    COLOR_RE,
    COMMENT_MAX_LENGTH,
    DEFAULT_COMMENT_LABEL,
    DEFAULT_PAIRED_PROMPT,
    DOCUMENT_ID_MAX_LENGTH,
    ENTITY_MODES,
    KEY_MAX_LENGTH,
    KEY_RE,
    PALETTE,
    PASS_KEYS,
    SECTIONS,
    SEVERITY_KEYS,
    SEVERITY_WEIGHT_MAX,
    SUGGESTION_ARMS,
    TOP_KEYS,
    TRAINING_KEYS,
    TYPES,
    Category,
    CommentSettings,
    Severity,
    StudySettings,
    Taxonomy,
    TaxonomyError,
    TrainingSettings,
    ValidationSettings,
)
from app.taxonomy.surveys import parse_consent, parse_survey


def _completion(check: Checker, value: Any) -> tuple[tuple[str, str], ...]:
    """study.completion: {outcome: code or URL}, each problem at its own line."""
    path: KeyPath = ("study", "completion")
    if not isinstance(value, dict):
        raise ValueError(f"must be a mapping of outcomes ({', '.join(OUTCOMES)}) to codes")
    data = check.mapping(value, path, OUTCOMES)
    targets = []
    for outcome in OUTCOMES:
        if outcome in data:
            url = check.convert(data[outcome], (*path, outcome), REQUIRED, completion_target)
            if url:
                targets.append((outcome, url))
    return tuple(targets)


def _suggestion_arms(check: Checker, value: Any) -> tuple[tuple[str, float], ...]:
    """study.suggestion_arms: {show: weight, none: weight}, weights > 0 (ties go to show)."""
    path: KeyPath = ("study", "suggestion_arms")
    if not isinstance(value, dict) or not value:
        raise ValueError(f"must be a mapping of arms ({', '.join(SUGGESTION_ARMS)}) to weights")
    data = check.mapping(value, path, SUGGESTION_ARMS)
    arms = []
    for arm in (arm for arm in SUGGESTION_ARMS if arm in data):
        converted = check.convert(data[arm], (*path, arm), REQUIRED, number(0.001, 1000.0))
        if converted is not None:
            arms.append((arm, converted))
    return tuple(arms)


BONUS_KEYS = ("per_validated", "per_planted", "cap", "currency")
BONUS_AMOUNT = number(0.0, 10_000.0)


def _currency(value: Any) -> str:
    if not isinstance(value, str) or not re.fullmatch(r"[A-Z]{3}", value):
        raise ValueError(f"must be the currency as 3 capitals (GBP, USD, EUR), got {value!r}")
    return value


def _bonus(check: Checker, value: Any) -> BonusRule | None:
    """study.bonus: {per_validated, per_planted, cap, currency} (app.interop.payments'
    BonusRule: `flask payments` pays it), each problem at its own line."""
    path: KeyPath = ("study", "bonus")
    if not isinstance(value, dict):
        raise ValueError(f"must be a mapping of {', '.join(BONUS_KEYS)}")
    data = check.mapping(value, path, BONUS_KEYS)
    settings = {
        key: check.convert(data.get(key), (*path, key), None, BONUS_AMOUNT)
        for key in BONUS_KEYS[:3]
    }
    settings["currency"] = check.convert(data.get("currency"), (*path, "currency"), None, _currency)
    pays = any(settings[key] for key in BONUS_KEYS[:2])
    if pays and settings["currency"] is None:
        if "currency" not in data:
            check.problem((*path, "currency"), "is required when a bonus is paid (GBP, USD...)")
        return None
    try:
        return BonusRule.from_settings({k: v for k, v in settings.items() if v is not None})
    except ValueError as exc:
        check.problem(path, str(exc))
        return None


def _platform_id(value: Any) -> str:
    """An id as a platform shows it: printable, no spaces, at most 200 characters."""
    if not isinstance(value, str) or not re.fullmatch(r"[!-~]{1,200}", value.strip()):
        raise ValueError(
            "must be the study's id as the platform shows it (letters, digits and "
            f"punctuation, no spaces, at most 200 characters), got {value!r}"
        )
    if is_placeholder(value):
        raise ValueError(f"must be the study's id itself, not a placeholder, got {value!r}")
    return value.strip()


def _contact(value: Any) -> str:
    """Text of at most 300 characters on one line."""
    contact = text(value)
    if len(contact) > 300 or "\n" in contact:
        raise ValueError("must be one line of at most 300 characters")
    return contact


def _key(value: Any) -> str:
    if not isinstance(value, str) or not KEY_RE.match(value) or len(value) > KEY_MAX_LENGTH:
        raise ValueError(
            "must be lower-case letters, digits and '-', starting with a letter or digit, "
            f"at most {KEY_MAX_LENGTH} characters, got {value!r}"
        )
    return value


def _shortcut(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)  # `shortcut: 1` without quotes means the key "1"
    if not isinstance(value, str) or len(value) != 1 or not value.isprintable() or value.isspace():
        raise ValueError(f"must be one printable character other than space, got {value!r}")
    return value


def _color(value: Any) -> str:
    if not isinstance(value, str) or not COLOR_RE.match(value):
        raise ValueError(f"must be a colour written #rgb or #rrggbb, got {value!r}")
    return value.lower()


def _language(value: Any) -> str:
    locale = interface_locale(value) if isinstance(value, str) else None
    if locale is None:
        shipped = ", ".join(html_lang(name) for name in INTERFACE_LANGUAGES)
        raise ValueError(f"must be an interface language shipped here ({shipped}), got {value!r}")
    return locale


def load_taxonomy(path: str | os.PathLike) -> Taxonomy:
    """Read and validate a taxonomy file; raise TaxonomyError listing every problem."""
    try:
        raw, data, check = read_yaml(path)
    except ProblemsError as exc:
        raise TaxonomyError(exc.problems) from None
    return _validated(raw, data, check, str(path))


def load_taxonomy_text(raw: bytes, name: str) -> Taxonomy:
    """load_taxonomy for a file's bytes (an upload, a stored version), checked exactly the
    same; problems name the file `name`. The version is the same hash as the file's."""
    try:
        raw, data, check = parse_yaml(raw, name)
    except ProblemsError as exc:
        raise TaxonomyError(exc.problems) from None
    return _validated(raw, data, check, name)


def _validated(raw: bytes, data: Any, check: Checker, path: str) -> Taxonomy:
    if not isinstance(data, dict):
        found = "an empty file" if data is None else f"a {type(data).__name__}"
        message = f"must be a mapping with title, instructions and categories, found {found}"
        raise TaxonomyError([Problem(str(path), 1, "file", message)])
    taxonomy = _build(check, data, str(path), hashlib.sha256(raw).hexdigest()[:16])
    if check.problems:
        raise TaxonomyError(check.sorted_problems())
    return taxonomy


def _build(check: Checker, data: dict, file: str, version: str) -> Taxonomy:
    top = check.mapping(data, (), TOP_KEYS)
    categories = _categories(check, top.get("categories"), top.get("severities") is not None)
    severities = _severities(check, top.get("severities"), categories)
    categories = _category_severities(check, top.get("categories"), categories, severities)
    return Taxonomy(
        path=file,
        version=version,
        title=check.get(top, ("title",), REQUIRED, text) or "",
        instructions=check.get(top, ("instructions",), REQUIRED, text) or "",
        categories=categories,
        comment=_section(
            check,
            top,
            CommentSettings,
            label=(DEFAULT_COMMENT_LABEL, text),
            required=(False, flag),
            max_length=(2000, integer(1, COMMENT_MAX_LENGTH)),
        ),
        entities=check.get(top, ("entities",), "auto", one_of(*ENTITY_MODES)),
        study=_section(
            check,
            top,
            StudySettings,
            annotators_per_document=(3, integer(1, 1000)),
            completion_url=(None, completion_url),
            completion=((), lambda value: _completion(check, value)),
            attention_checks=("flag", one_of(*ATTENTION_CHECK_MODES)),
            abandon_after_minutes=(120, integer(1, 100_000)),
            # A working page records activity at least every two minutes (a heartbeat a
            # minute, written at most once a minute): less would release working workers.
            claim_minutes=(10, integer(3, 100_000)),
            attention_check_share=(0.0, number(0.0, 0.5)),
            anonymous=(False, flag),
            max_open_per_network=(3, integer(1, 100_000)),
            min_words_per_minute=(None, number(1.0, 100_000.0)),
            suggestions=("none", one_of(*SUGGESTION_ARMS)),
            suggestion_arms=((), lambda value: _suggestion_arms(check, value)),
            language=(None, _language),
            prolific_study_id=(None, _platform_id),
            contact=(None, _contact),
            bonus=(None, lambda value: _bonus(check, value)),
        ),
        validation=_section(
            check,
            top,
            ValidationSettings,
            partial_counts_as_valid=(True, flag),
            reasons=(BOOOOKSCORE_REASONS, lambda value: _reasons(check, value, "reasons")),
            category_reasons=(
                CATEGORY_REASONS,
                lambda value: _reasons(check, value, "category_reasons"),
            ),
        ),
        checks=_checks(check, top.get("checks"), categories),
        training=_training(check, top.get("training")),
        **_study_steps(check, top),
        severities=severities,
    )


def _training(check: Checker, value: Any) -> TrainingSettings:
    """training: {documents: [ids], pass: {recall, precision}, attempts}; absent: none."""
    if value is None:
        return TrainingSettings()
    data = check.mapping(value, ("training",), TRAINING_KEYS)
    if not data:
        if isinstance(value, dict):
            check.problem(("training",), "must name its practice documents under documents")
        return TrainingSettings()
    documents = check.get(data, ("training", "documents"), REQUIRED, lambda v: v)
    rule = check.mapping(data.get("pass"), ("training", "pass"), PASS_KEYS)
    share = number(0.0, 1.0)
    return TrainingSettings(
        documents=_training_documents(check, documents),
        min_recall=check.get(rule, ("training", "pass", "recall"), 0.5, share),
        min_precision=check.get(rule, ("training", "pass", "precision"), 0.5, share),
        attempts=check.get(data, ("training", "attempts"), 2, integer(1, 20)),
    )


def _training_documents(check: Checker, value: Any) -> tuple[str, ...]:
    """training.documents: a non-empty list of distinct imported document ids."""
    path: KeyPath = ("training", "documents")
    if value is None:
        return ()
    if not isinstance(value, list) or not value:
        check.problem(path, "must be a non-empty list of imported document ids")
        return ()
    ids: list[str] = []
    for index, item in enumerate(value):
        if isinstance(item, int) and not isinstance(item, bool):
            item = str(item)  # `- 12` means the document "12"
        if not isinstance(item, str) or not item.strip() or len(item) > DOCUMENT_ID_MAX_LENGTH:
            message = f"must be a document id (text, at most {DOCUMENT_ID_MAX_LENGTH} characters)"
            check.problem((*path, index), f"{message}, got {item!r}")
        elif item in ids:
            check.problem((*path, index), f"duplicate document {item!r}")
        else:
            ids.append(item)
    return tuple(ids)


def _study_steps(check: Checker, top: dict) -> dict[str, Any]:
    """consent: and survey: (app.taxonomy.surveys validates them at their lines)."""
    return {
        "consent": parse_consent(check, top.get("consent")),
        "survey": parse_survey(check, top.get("survey")),
    }


def _checks(check: Checker, value: Any, categories: tuple[Category, ...]) -> tuple:
    """checks: {kind: category key}; the key must exist and be of the kind's type."""
    data = check.mapping(value, ("checks",), tuple(CHECK_TYPES))
    types = {category.key: category.type for category in categories}
    pairs = []
    for kind, wanted in CHECK_TYPES.items():
        key = check.get(data, ("checks", kind), None, text)
        if key is None:
            continue
        if key not in types:
            check.problem(("checks", kind), f"no category {key!r} (categories: {', '.join(types)})")
        elif types[key] != wanted:
            check.problem(
                ("checks", kind), f"category {key!r} is {types[key]}; {kind} needs {wanted}"
            )
        else:
            pairs.append((kind, key))
    return tuple(pairs)


def _section(check: Checker, top: dict, cls: type, **spec: tuple[Any, Callable]) -> Any:
    """Build a settings dataclass from the mapping named after it; spec: key=(default, convert)."""
    name = SECTIONS[cls]
    data = check.mapping(top.get(name), (name,), tuple(spec))
    values = {key: check.get(data, (name, key), *rule) for key, rule in spec.items()}
    return cls(**values)


def _reasons(check: Checker, value: Any, key: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        raise ValueError("must be a non-empty list of reasons")
    reasons: list[str] = []
    for index, reason in enumerate(value):
        path: KeyPath = ("validation", key, index)
        reason = check.convert(reason, path, REQUIRED, text)
        if reason in reasons:
            check.problem(path, f"duplicate reason {reason!r}")
        elif reason:
            reasons.append(reason)
    return tuple(reasons)


def _categories(check: Checker, value: Any, with_severities: bool) -> tuple[Category, ...]:
    if not isinstance(value, list) or not value:
        check.problem(("categories",), "must be a non-empty list of categories")
        return ()
    categories: list[Category] = []
    first_line: dict[tuple[str, str], int] = {}  # (field, value) -> line, for duplicates
    for index, item in enumerate(value):
        path: KeyPath = ("categories", index)
        if not isinstance(item, dict):
            check.problem(path, "must be a mapping with key, name, type and description")
            continue
        # `severities` is checked by _category_severities; named among the keys a category
        # may have only in a taxonomy with severities (else the messages read as before).
        keys = (*CATEGORY_KEYS, CATEGORY_SEVERITY_KEY) if with_severities else CATEGORY_KEYS
        data = check.mapping(without_severities(item), path, keys)
        key = check.get(data, (*path, "key"), REQUIRED, _key)
        kind = check.get(data, (*path, "type"), REQUIRED, one_of(*TYPES))
        shortcut = check.get(data, (*path, "shortcut"), None, _shortcut)
        for name, unique in (("key", key), ("shortcut", shortcut)):
            if unique is None:
                continue
            if (name, unique) in first_line:
                first = first_line[name, unique]
                check.problem((*path, name), f"duplicate {name} {unique!r} (first at line {first})")
            else:
                first_line[name, unique] = check.lines[(*path, name)]
        prompt = check.get(data, (*path, "paired_prompt"), None, text)
        if prompt and kind == "singleton":
            check.problem((*path, "paired_prompt"), "is only allowed on paired categories")
        categories.append(
            Category(
                key=key or "",
                name=check.get(data, (*path, "name"), REQUIRED, text) or "",
                type=kind or "",
                description=check.get(data, (*path, "description"), REQUIRED, text) or "",
                shortcut=shortcut,
                color=check.get(data, (*path, "color"), PALETTE[index % len(PALETTE)], _color),
                paired_prompt=(prompt or DEFAULT_PAIRED_PROMPT) if kind == "paired" else None,
            )
        )
    return tuple(categories)


def without_severities(item: dict) -> dict:
    """A category's mapping without its `severities` (read apart, by _category_severities)."""
    return {key: value for key, value in item.items() if key != CATEGORY_SEVERITY_KEY}


def _severities(
    check: Checker, value: Any, categories: tuple[Category, ...]
) -> tuple[Severity, ...]:
    """severities: [{key, name, weight, description?, shortcut?}]; absent = none."""
    if value is None:
        return ()
    if not isinstance(value, list) or not value:
        check.problem(("severities",), "must be a non-empty list of severities (or left out)")
        return ()
    # Severity keys share the page's keyboard with the category shortcuts.
    taken = {c.shortcut: f"category {c.key!r}" for c in categories if c.shortcut}
    seen: dict[str, int] = {}
    severities: list[Severity] = []
    for index, item in enumerate(value):
        path: KeyPath = ("severities", index)
        if not isinstance(item, dict):
            check.problem(path, "must be a mapping with key, name and weight")
            continue
        data = check.mapping(item, path, SEVERITY_KEYS)
        key = check.get(data, (*path, "key"), REQUIRED, _key)
        if key is not None and key in seen:
            check.problem((*path, "key"), f"duplicate key {key!r} (first at line {seen[key]})")
            key = None
        elif key is not None:
            seen[key] = check.lines[(*path, "key")]
        shortcut = check.get(data, (*path, "shortcut"), None, _shortcut)
        if shortcut is not None and shortcut in taken:
            check.problem(
                (*path, "shortcut"), f"{shortcut!r} is already the key of {taken[shortcut]}"
            )
            shortcut = None
        elif shortcut is not None:
            taken[shortcut] = f"severity {key!r}"
        weight = check.get(data, (*path, "weight"), REQUIRED, number(0.0, SEVERITY_WEIGHT_MAX))
        name = check.get(data, (*path, "name"), REQUIRED, text)
        if key is None or weight is None or name is None:
            continue
        description = check.get(data, (*path, "description"), None, text)
        severities.append(Severity(key, name, weight, description, shortcut))
    return tuple(severities)


def _category_severities(
    check: Checker, value: Any, categories: tuple[Category, ...], severities: tuple[Severity, ...]
) -> tuple[Category, ...]:
    """categories[].severities: a subset of the severity keys, set on each category."""
    if not isinstance(value, list):
        return categories
    known = [severity.key for severity in severities]
    by_key = {category.key: category for category in categories}
    for index, item in enumerate(value):
        if not isinstance(item, dict) or item.get(CATEGORY_SEVERITY_KEY) is None:
            continue
        path: KeyPath = ("categories", index, CATEGORY_SEVERITY_KEY)
        subset = _severity_subset(check, path, item[CATEGORY_SEVERITY_KEY], known)
        category = by_key.get(item.get("key"))  # type: ignore[arg-type]
        if category is not None:
            by_key[category.key] = dataclasses.replace(category, severities=subset)
    out = [by_key.get(category.key, category) for category in categories]
    return tuple(out)


def _severity_subset(check: Checker, path: KeyPath, value: Any, known: list[str]) -> tuple:
    if not known:
        check.problem(path, "needs a top-level severities: list to choose from")
        return ()
    if not isinstance(value, list) or not value:
        check.problem(path, f"must be a non-empty list of severity keys ({', '.join(known)})")
        return ()
    subset: list[str] = []
    for position, key in enumerate(value):
        if key not in known:
            message = f"no severity {key!r} (severities: {', '.join(known)})"
            check.problem((*path, position), message)
        elif key in subset:
            check.problem((*path, position), f"duplicate severity {key!r}")
        else:
            subset.append(key)
    # File order of the top-level list: the buttons keep one order everywhere.
    return tuple(key for key in known if key in subset)
