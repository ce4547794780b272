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
from typing import Protocol

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


def occurrences(
    paragraphs: Sequence[str], text: str, paragraph_id: int | None = None
) -> list[tuple[int, int, int]]:
    """Every (paragraph_id, start, end) of `text`: the exact matches, else the tolerant ones."""
    candidates = (
        [(paragraph_id, paragraphs[paragraph_id])]
        if paragraph_id is not None
        else list(enumerate(paragraphs))
    )
    needle = unicodedata.normalize("NFC", text).strip()
    if not needle:
        return []
    exact = [
        (pid, start, start + len(needle))
        for pid, para in candidates
        for start in _occurrences(para, needle)
    ]
    if exact:
        return exact
    loose_needle = normalise(text)
    loose: list[tuple[int, int, int]] = []
    for pid, para in candidates:
        normalised, index = normalise_with_map(para)
        for start in _occurrences(normalised, loose_needle):
            end = index[start + len(loose_needle) - 1] + 1
            loose.append((pid, index[start], end))
    return loose


def locate(paragraphs: Sequence[str], text: str, paragraph_id: int | None = None) -> Located | None:
    """Find `text` in the paragraphs (or only in `paragraph_id`); None when nowhere."""
    found = occurrences(paragraphs, text, paragraph_id)
    if not found:
        return None
    pid, start, end = found[0]
    return Located(pid, start, end, paragraphs[pid][start:end], len(found))


def overlap(a: Located, b: Located) -> bool:
    """True when two placed spans share a character."""
    return a.paragraph_id == b.paragraph_id and a.start < b.end and b.start < a.end


def place_pair(
    paragraphs: Sequence[str],
    span: tuple[str, int | None],
    paired: tuple[str, int | None],
) -> tuple[Located, Located] | None:
    """Both spans of a pair, (text, paragraph or None) each, at distinct occurrences.

    Used when the two texts, each placed at its first occurrence, would overlap (a
    duplication whose two spans have the same text). The paired span is the earlier text
    (docs/contracts.md#conventions-used-everywhere), so the pair is the first (paired, span)
    choice in reading order where the paired occurrence comes before the span's and they do
    not overlap. When that is the only possible choice (the text occurs exactly twice)
    neither is ambiguous; when there are several, each keeps its number of occurrences and
    is reported ambiguous. None when no two distinct occurrences exist.
    """
    spans = occurrences(paragraphs, *span)
    pairs = occurrences(paragraphs, *paired)
    choices = [
        (p, s)
        for p in pairs
        for s in spans
        if p < s and not (p[0] == s[0] and p[1] < s[2] and s[1] < p[2])
    ]
    if not choices:
        return None
    (ppid, pstart, pend), (spid, sstart, send) = choices[0]
    unique = len(choices) == 1
    return (
        Located(spid, sstart, send, paragraphs[spid][sstart:send], 1 if unique else len(spans)),
        Located(ppid, pstart, pend, paragraphs[ppid][pstart:pend], 1 if unique else len(pairs)),
    )


class _SpanRef(Protocol):
    """A span as files give it: its text, and maybe its paragraph and offsets."""

    text: str
    paragraph_id: int | None
    start: int | None
    end: int | None

    @property
    def has_offsets(self) -> bool: ...


def locate_span(span: _SpanRef, paragraphs: Sequence[str], document_id: str) -> Located | str:
    """Where a span of a file stands: at its offsets when they quote the text, else its
    text's occurrence (locate); a message when it is nowhere."""
    pid = span.paragraph_id
    if pid is not None and pid >= len(paragraphs):
        return f"no paragraph {pid} in {document_id} ({len(paragraphs)} in all)"
    if span.has_offsets and paragraphs[pid][span.start : span.end] == span.text:
        return Located(pid, span.start, span.end, span.text, 1)
    found = locate(paragraphs, span.text, pid)
    if found is None:
        where = f"paragraph {pid} of " if pid is not None else ""
        return f"text {span.text[:60]!r} not found in {where}document {document_id}"
    return found


def locate_pair(
    span: _SpanRef, paired: _SpanRef | None, paragraphs: Sequence[str], document_id: str
) -> tuple[Located, Located | None] | str:
    """A span and its paired span placed (place_pair when their texts would overlap), or
    the message `span: ...` / `paired_span: ...` of the one that is nowhere."""
    placed = locate_span(span, paragraphs, document_id)
    if isinstance(placed, str):
        return f"span: {placed}"
    if paired is None:
        return placed, None
    other = locate_span(paired, paragraphs, document_id)
    if isinstance(other, str):
        return f"paired_span: {other}"
    if overlap(placed, other) and not span.has_offsets:
        placed, other = place_pair(
            paragraphs, (span.text, span.paragraph_id), (paired.text, paired.paragraph_id)
        ) or (placed, other)
    return placed, other


def ambiguity_notes(
    where: str, document_id: str, span: Located, paired: Located | None
) -> list[str]:
    """A line for each of the two spans whose text stands more than once (the first
    occurrence was taken), for the command's summary."""
    return [
        f"{where}: {label} occurs {located.matches} times in {document_id}; the first one "
        f"is used (paragraph {located.paragraph_id}, {located.start}-{located.end})"
        for label, located in (("span", span), ("paired_span", paired))
        if located is not None and located.ambiguous
    ]
