"""Sentence boundaries in scripts other than English's, chosen by the document's language.

app/rules/metrics.py's `split_sentences` splits English and documents without a language with
NLTK's Punkt English parameters (as BooookScore's scorer does); every other language
comes here. Pure: offsets are code points into the paragraph, whitespace trimmed.

Rules (docs/languages.md):

1. Full-width terminators -- the ideographic full stop 。, ！ ？ ． and the half-width ｡
   (Chinese, Japanese) -- end a sentence where they stand, with any closing quotes or
   brackets after them (」』”）), whitespace or not: CJK text has no spaces.
2. Other terminators end a sentence when whitespace follows and the next character is
   not a lower-case letter: . ! ? … ‼ ⁇ ⁈ ⁉, Arabic/Persian/Urdu question mark ؟ (U+061F),
   Urdu full stop ۔ (U+06D4), Devanagari danda । and double danda ॥ (Hindi, Marathi,
   Nepali, Sanskrit), Ethiopic ። and ፧, Armenian ։, Myanmar ။, Khmer ។ and ៕, Tibetan །
   -- each with any closing quotes or brackets after it. "Not lower-case" lets caseless
   scripts (Arabic, Hebrew, Devanagari) split, while "e.g. this" in a cased script does
   not. A single upper-case letter before a full stop is an initial, not an end, and so
   is a full stop after a title or abbreviation in ABBREVIATIONS (Dr., Prof., z.B., Mme.).
3. Thai and Lao write no sentence-final punctuation; a space between two characters of
   those scripts marks the end of a sentence or clause (the convention of Thai
   typography, used by Thai sentence segmenters as their baseline), so each such space
   ends a sentence. Latin text inside the paragraph follows rules 1 and 2.

pysbd was tried (0.3.4, its last release, 2021): it splits Arabic at commas and colons
("نعم، رآها" became two sentences) and cuts a Chinese closing quote ” off its sentence,
so it is not used.
"""

from __future__ import annotations

import re

# Closing quotes and brackets that stay with the sentence they close.
CLOSERS = "\"'”’»)]」』）】〕〉》"
FULL_WIDTH_TERMINATORS = "。！？．｡"
SPACED_TERMINATORS = ".!?…‼⁇⁈⁉؟۔।॥።፧։။។៕།"
NO_PUNCTUATION_LANGUAGES = frozenset({"th", "lo"})
# Titles and abbreviations of European languages whose full stop ends no sentence
# (compared in lower case, inner dots kept).
ABBREVIATIONS = frozenset(
    """
    dr prof st mr mrs ms hr fr frl nr bzw usw vgl ca z.b d.h u.a s.o etc mme mlle mm sr sra
    srta dra ing gen col sig dott av str
    """.split()
)

_CLOSE = "[" + re.escape(CLOSERS) + "]*"
_FULL_WIDTH = re.compile("[" + re.escape(FULL_WIDTH_TERMINATORS) + "]+" + _CLOSE)
_SPACED = re.compile("[" + re.escape(SPACED_TERMINATORS) + "]+" + _CLOSE + r"(?=\s)")
# A space between two Thai or Lao characters (rule 3).
_THAI_LAO_SPACE = re.compile(r"(?<=[\u0e00-\u0eff])\s+(?=[\u0e00-\u0eff])")


def split_sentences_multilingual(text: str, language: str) -> list[tuple[int, int]]:
    """Sentence (start, end) offsets of one paragraph by the rules above; `language` is
    the primary subtag (``zh``, ``ar``, ``th``)."""
    ends: set[int] = set()
    for match in _FULL_WIDTH.finditer(text):
        ends.add(match.end())
    for match in _SPACED.finditer(text):
        following = skip_space(text, match.end())
        if following >= len(text) or text[following].islower():
            continue
        if match.group().rstrip(CLOSERS) == "." and is_abbreviation(text, match.start()):
            continue
        ends.add(match.end())
    if language in NO_PUNCTUATION_LANGUAGES:
        ends.update(match.start() for match in _THAI_LAO_SPACE.finditer(text))
    sentences: list[tuple[int, int]] = []
    start = skip_space(text, 0)
    for end in sorted(ends):
        trimmed = len(text[:end].rstrip())
        if trimmed > start:
            sentences.append((start, trimmed))
            start = skip_space(text, end)
    last = len(text.rstrip())
    if start < last:
        sentences.append((start, last))
    return sentences


def skip_space(text: str, index: int) -> int:
    """The first index at or after `index` that is not white space."""
    while index < len(text) and text[index].isspace():
        index += 1
    return index


def is_abbreviation(text: str, dot: int, abbreviations: frozenset[str] = ABBREVIATIONS) -> bool:
    """Whether the full stop at `dot` ends an initial or one of `abbreviations`."""
    # Walk back over the word (letters, digits, inner dots) that the full stop ends.
    start = dot
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] == "."):
        start -= 1
    token = text[start:dot].lstrip(".")
    if len(token) == 1 and token.isupper():  # an initial: "J. R. R. Tolkien"
        return True
    return token.lower() in abbreviations
