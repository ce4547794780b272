"""The severity rule of an annotation (taxonomy `severities:`), pure: no I/O.

A taxonomy with severities needs one on every annotation, among those its category
offers (`categories[].severities`, else all); a taxonomy without them takes none, so a
page or script written for it keeps working and its export says `"severity": null`.
"""

from __future__ import annotations

from app.rules.spans import SpanError
from app.taxonomy import Taxonomy


class SeverityError(SpanError):
    """An annotation's severity breaks the taxonomy's rule (a 422 with code and field)."""

    @classmethod
    def required(cls, offered: list[str]) -> SeverityError:
        """The taxonomy has severities and none was sent."""
        return cls(
            "severity_required",
            "severity",
            f"Choose a severity ({', '.join(offered)}) for this annotation.",
        )

    @classmethod
    def unknown(cls, key: str, offered: list[str], category: str) -> SeverityError:
        """A key that is no severity of the taxonomy, or not one the category offers."""
        return cls(
            "unknown_severity",
            "severity",
            f"Severity {key!r} is not offered for category {category!r}; "
            f"choose one of {', '.join(offered)}.",
        )

    @classmethod
    def not_used(cls) -> SeverityError:
        """A severity sent under a taxonomy without severities."""
        return cls(
            "severity_not_used",
            "severity",
            "This taxonomy has no severities: send no severity (or null).",
        )


def check_severity(taxonomy: Taxonomy, category: str, severity: str | None) -> None:
    """Raise SeverityError unless `severity` fits the taxonomy and the category."""
    if not taxonomy.severities:
        if severity is not None:
            raise SeverityError.not_used()
        return
    offered = [s.key for s in taxonomy.severities_for(category)]
    if severity is None:
        raise SeverityError.required(offered)
    if severity not in offered:
        raise SeverityError.unknown(severity, offered, category)
