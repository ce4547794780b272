"""Finding a span's offsets in its document from its text alone. Pure: no app, no database.

Items made elsewhere (BooookScore, model outputs) often carry the span text without
offsets, sometimes with other whitespace or curly quotes than the stored text. We try an
exact match first, then a match on both texts normalised the same way (whitespace runs
as one space, typographic quotes and dashes as ASCII), and map the result back to offsets
in the stored paragraph, so that `paragraph[start:end]` is the stored text.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

_TRANSLATE = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u2032": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u201f": '"',
        "\u2033": '"',
        "\u2013": "-",
        "\u2014": "-",
        "\u2212": "-",
        "\u00a0": " ",
    }
)
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Located:
    """Where a span was found: paragraph, offsets, the stored text, and how many matches."""

    paragraph_id: int
    start: int
    end: int
    text: str
    matches: int

    @property
    def ambiguous(self) -> bool:
        """True when the text occurs more than once (the first occurrence was used)."""
        return self.matches > 1


def normalise_with_map(text: str) -> tuple[str, list[int]]:
    """The text normalised for matching, and for each of its characters the original index."""
    out: list[str] = []
    index: list[int] = []
    in_space = False
    for position, char in enumerate(text):
        char = unicodedata.normalize("NFC", char).translate(_TRANSLATE)
        if char.isspace():
            if in_space:
                continue
            char, in_space = " ", True
        else:
            in_space = False
        for piece in char:
            out.append(piece)
            index.append(position)
    return "".join(out), index


def normalise(text: str) -> str:
    """The text as compared by the tolerant match (stripped)."""
    return _SPACE.sub(" ", unicodedata.normalize("NFC", text).translate(_TRANSLATE)).strip()


def _occurrences(haystack: str, needle: str) -> list[int]:
    found: list[int] = []
    start = haystack.find(needle)
    while start != -1:
        found.append(start)
        start = haystack.find(needle, start + 1)
    return found


def locate(paragraphs: Sequence[str], text: str, paragraph_id: int | None = None) -> Located | None:
    """Find `text` in the paragraphs (or only in `paragraph_id`); None when nowhere."""
    candidates = (
        [(paragraph_id, paragraphs[paragraph_id])]
        if paragraph_id is not None
        else list(enumerate(paragraphs))
    )
    needle = unicodedata.normalize("NFC", text).strip()
    if not needle:
        return None
    exact = [(pid, start) for pid, para in candidates for start in _occurrences(para, needle)]
    if exact:
        pid, start = exact[0]
        end = start + len(needle)
        return Located(pid, start, end, paragraphs[pid][start:end], len(exact))
    loose_needle = normalise(text)
    loose: list[tuple[int, int, int]] = []
    for pid, para in candidates:
        normalised, index = normalise_with_map(para)
        for start in _occurrences(normalised, loose_needle):
            end = index[start + len(loose_needle) - 1] + 1
            loose.append((pid, index[start], end))
    if not loose:
        return None
    pid, start, end = loose[0]
    return Located(pid, start, end, paragraphs[pid][start:end], len(loose))
