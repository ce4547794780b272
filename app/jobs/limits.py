"""The analysis limits: ANALYSIS_TIME_LIMIT seconds and ANALYSIS_MEMORY_LIMIT megabytes
that one analysis job may take (0: no limit). Beyond them a job's result is stored as
skipped, with the limits it broke, and computed again only under larger ones."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Limits:
    """Seconds and megabytes one analysis may take (0: no limit)."""

    seconds: float = 60.0
    megabytes: int = 1024

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> Limits:
        """ANALYSIS_TIME_LIMIT and ANALYSIS_MEMORY_LIMIT of an app's config."""
        return cls(
            float(config.get("ANALYSIS_TIME_LIMIT", cls.seconds)),
            int(config.get("ANALYSIS_MEMORY_LIMIT", cls.megabytes)),
        )

    def covers(self, other: Sequence[float]) -> bool:
        """Whether these limits are no larger than `other` ([seconds, megabytes]): an
        analysis skipped under `other` would be skipped again."""

        def at_most(mine: float, theirs: float) -> bool:
            return theirs <= 0 or (0 < mine <= theirs)

        return at_most(self.seconds, other[0]) and at_most(self.megabytes, other[1])

    def as_list(self) -> list[float]:
        """[seconds, megabytes], as a skipped result stores them."""
        return [self.seconds, self.megabytes]
