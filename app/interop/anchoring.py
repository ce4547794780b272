"""A document's text as exchange formats see it, and the offsets between it and a paragraph.

The app stores a document as paragraphs (normalised at import: NFC, LF line ends,
trimmed; app.imports.document_formats) and a span as (paragraph, start, end) in code points of
that paragraph. W3C selectors and brat offsets address one text per document instead:
the paragraphs joined by a blank line (PARAGRAPH_SEPARATOR, "\\n\\n"), counted in
Unicode code points, end exclusive (W3C Web Annotation Data Model 4.2.4 and 4.2.5 count
code points; brat counts characters of the .txt as Python reads it, the same thing).
`DocumentText` converts both ways; a span that crosses from one paragraph into the next
(or starts in the blank line between them) has no place in the app and is refused.

`locate_quote` finds a TextQuoteSelector's quote (4.2.4): every occurrence of the exact
text, ranked by how much of the prefix and suffix agree with the text around it, then by
nearness to a position the file also gave.
"""

from __future__ import annotations

import unicodedata
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

PARAGRAPH_SEPARATOR = "\n\n"
QUOTE_CONTEXT = 32  # characters of prefix and suffix written with a quote


def normalise_quote(text: str) -> str:
    """Text from another tool as the stored text is normalised: NFC, LF line ends."""
    return unicodedata.normalize("NFC", text.replace("\r\n", "\n").replace("\r", "\n"))


@dataclass(frozen=True)
class DocumentText:
    """A document's paragraphs and their joined text, with offset conversions."""

    paragraphs: tuple[str, ...]

    @classmethod
    def of(cls, paragraphs: Sequence[str]) -> DocumentText:
        """From any sequence of paragraphs."""
        return cls(tuple(paragraphs))

    @cached_property
    def text(self) -> str:
        """The paragraphs joined by PARAGRAPH_SEPARATOR."""
        return PARAGRAPH_SEPARATOR.join(self.paragraphs)

    @cached_property
    def starts(self) -> tuple[int, ...]:
        """Where each paragraph starts in `text`."""
        starts, at = [], 0
        for paragraph in self.paragraphs:
            starts.append(at)
            at += len(paragraph) + len(PARAGRAPH_SEPARATOR)
        return tuple(starts)

    def to_document(self, paragraph_id: int, start: int, end: int) -> tuple[int, int]:
        """A paragraph's (start, end) as offsets in `text`."""
        base = self.starts[paragraph_id]
        return base + start, base + end

    def span_offsets(self, span: Mapping[str, Any]) -> tuple[int, int]:
        """A stored span (``{paragraph_id, start, end, text}``) as offsets in `text`;
        ValueError when it does not quote its paragraph there."""
        pid, start, end = span["paragraph_id"], span["start"], span["end"]
        paragraphs = self.paragraphs
        if not (0 <= pid < len(paragraphs) and 0 <= start < end <= len(paragraphs[pid])) or (
            paragraphs[pid][start:end] != span["text"]
        ):
            raise ValueError("does not quote the document at its offsets")
        return self.to_document(pid, start, end)

    def to_paragraph(self, start: int, end: int) -> tuple[int, int, int]:
        """Offsets in `text` as (paragraph_id, start, end); ValueError says why they have
        no place in one paragraph (out of the text, between or across paragraphs)."""
        if not 0 <= start < end <= len(self.text):
            raise ValueError(
                f"offsets {start}-{end} are not a span of the document's text "
                f"({len(self.text)} characters; start must be below end)"
            )
        paragraph_id = bisect_right(self.starts, start) - 1
        base = self.starts[paragraph_id]
        length = len(self.paragraphs[paragraph_id])
        if start - base >= length:
            raise ValueError(
                f"offset {start} falls between paragraphs {paragraph_id} and {paragraph_id + 1}"
            )
        if end - base > length:
            last = bisect_right(self.starts, end - 1) - 1
            into = (
                f"into paragraph {last}" if last > paragraph_id else "into the blank line after it"
            )
            raise ValueError(
                f"the span {start}-{end} crosses from paragraph {paragraph_id} {into}; a span "
                "must lie within one paragraph"
            )
        return paragraph_id, start - base, end - base

    def context(self, start: int, end: int, size: int = QUOTE_CONTEXT) -> tuple[str, str]:
        """Up to `size` characters before `start` and after `end` (TextQuoteSelector's
        prefix and suffix)."""
        return self.text[max(0, start - size) : start], self.text[end : end + size]


@dataclass(frozen=True)
class QuoteMatch:
    """Where a quote was placed in a document's text, and how sure that is."""

    start: int
    end: int
    candidates: int  # occurrences of the exact text
    ties: int  # occurrences that fit prefix, suffix and position as well as this one

    @property
    def ambiguous(self) -> bool:
        """True when another occurrence fits as well (this one is the first of them)."""
        return self.ties > 1


def _common_suffix(a: str, b: str) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[-1 - n] == b[-1 - n]:
        n += 1
    return n


def _common_prefix(a: str, b: str) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def locate_quote(
    text: str, exact: str, prefix: str = "", suffix: str = "", near: int | None = None
) -> QuoteMatch | None:
    """The occurrence of `exact` in `text` that the prefix and suffix fit best (the most
    characters agreeing next to it), then the one nearest to `near`; None when absent."""
    if not exact:
        return None
    ranked: list[tuple[tuple[int, int], int]] = []
    at = text.find(exact)
    while at != -1:
        end = at + len(exact)
        fit = _common_suffix(text[max(0, at - len(prefix)) : at], prefix) + _common_prefix(
            text[end : end + len(suffix)], suffix
        )
        distance = abs(at - near) if near is not None else 0
        ranked.append(((-fit, distance), at))
        at = text.find(exact, at + 1)
    if not ranked:
        return None
    best = min(rank for rank, _ in ranked)
    ties = [at for rank, at in ranked if rank == best]
    return QuoteMatch(ties[0], ties[0] + len(exact), len(ranked), len(ties))
