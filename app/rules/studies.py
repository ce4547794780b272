"""The rules of a study row (app.studies): its slug, its kinds, its statuses and which
status may follow which.

A study is `draft` while it is set up, `open` while workers may enter, `closed` when it
takes no new workers (its data stays, sessions already open may finish), `archived` when
it is put away (read-only, its data stays). Workers enter only an open study; a draft is
entered only by signed links (the researchers trying it). The default study (`default`)
is the one today's unprefixed addresses serve (`/start`, `/research/...`).
"""

from __future__ import annotations

import re
from enum import StrEnum

DEFAULT_SLUG = "default"
DEMO_SLUG = "demo"
SLUG_MAX_LENGTH = 64
# Lower-case letters, digits and single hyphens inside: safe in a URL path, a file name,
# a CSV cell and a log line as it is.
SLUG_PATTERN = re.compile(r"^[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){0,63}$")


class StudyKind(StrEnum):
    """What workers do in a study."""

    ANNOTATION = "annotation"  # mark errors in documents
    VALIDATION = "validation"  # judge the annotations of an annotation study


class StudyStatus(StrEnum):
    """Where a study is in its life."""

    DRAFT = "draft"
    OPEN = "open"
    CLOSED = "closed"
    ARCHIVED = "archived"


STUDY_KINDS = tuple(kind.value for kind in StudyKind)
STUDY_STATUSES = tuple(status.value for status in StudyStatus)
STUDY_ROLES = ("owner", "editor", "viewer")

# status -> the statuses it may change to. Archived is the end; a closed study may be
# opened again (more documents, a second batch), a draft may not be archived before it
# was ever opened or closed (delete it instead, once deleting studies exists).
TRANSITIONS: dict[str, frozenset[str]] = {
    StudyStatus.DRAFT: frozenset({StudyStatus.OPEN, StudyStatus.CLOSED}),
    StudyStatus.OPEN: frozenset({StudyStatus.CLOSED}),
    StudyStatus.CLOSED: frozenset({StudyStatus.OPEN, StudyStatus.ARCHIVED}),
    StudyStatus.ARCHIVED: frozenset(),
}


def slug_problem(slug: object) -> str | None:
    """Why `slug` cannot name a study (None: it can)."""
    if not isinstance(slug, str) or not slug:
        return "a study needs a slug"
    if len(slug) > SLUG_MAX_LENGTH:
        return f"a slug has at most {SLUG_MAX_LENGTH} characters"
    if not SLUG_PATTERN.match(slug):
        return "a slug is lower-case letters, digits and single hyphens between them (e.g. pilot-2)"
    return None


def transition_problem(current: str, wanted: str) -> str | None:
    """Why a study with status `current` may not become `wanted` (None: it may)."""
    if wanted not in STUDY_STATUSES:
        return f"unknown status {wanted!r}: one of {', '.join(STUDY_STATUSES)}"
    if wanted == current:
        return None
    if wanted not in TRANSITIONS.get(current, frozenset()):
        allowed = ", ".join(sorted(TRANSITIONS.get(current, frozenset()))) or "none"
        return f"a {current} study cannot become {wanted} (allowed: {allowed})"
    return None


def accepts_new_workers(status: str) -> bool:
    """Whether a start link may open a new session in a study with this status."""
    return status == StudyStatus.OPEN


def lets_workers_finish(status: str) -> bool:
    """Whether sessions already open may still be worked on (open and closed studies)."""
    return status in (StudyStatus.OPEN, StudyStatus.CLOSED, StudyStatus.DRAFT)
