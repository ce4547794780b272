"""Coreference cues: the entity strings whose mentions the page highlights on hover.

The rule for `entities: auto` (pure, documented here because researchers ask what it
finds). It reads the whole document:

1. A *capitalised word* is a run of Unicode letters, digits, apostrophes and hyphens that
   starts with an upper-case letter (`Zoë`, `O'Brien`, `Jean-Luc`); a trailing possessive
   `'s`/`’s` and trailing apostrophes or hyphens are dropped (`Findon's` -> `Findon`).
2. Consecutive capitalised words separated by one space form a *name* (`Lord Findon`);
   a lower-case particle (de, van, von, ...) between two capitalised words belongs to the
   name (`Madame de Pastourelles`). Common words from STOP_WORDS at the start of a name
   are dropped (`In London` -> `London`); a name of stop words only is no name.
3. A candidate is every name and every single capitalised word inside it. A single word
   is *sentence-initial* where it opens the paragraph or follows `.`, `!`, `?` or `…`
   (and possibly quotes or brackets), except after a title such as `Mr.` or `Dr.`.
4. A candidate is an entity when it occurs at least twice, is not a stop word, and (for
   single words) occurs at least once where it is not sentence-initial: a capitalised
   word seen only at sentence starts may be an ordinary word.

Entities are returned in order of first appearance.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

# Word characters except a leading digit or underscore, then letters/digits/' ’ -.
WORD_RE = re.compile(r"\b[^\W\d_][\w'’-]*")
POSSESSIVE_RE = re.compile(r"(?:['’]s)?['’-]*$")
# What may stand between the end of a sentence and its first word.
SENTENCE_START_RE = re.compile(r"(?:^|[.!?…]['\"’”)\]]*)\s*['\"‘“(\[]*$")
# Abbreviations whose full stop does not end a sentence ("Mr. Morrison").
ABBREVIATIONS_RE = re.compile(r"\b(?:Mr|Mrs|Ms|Dr|St|Prof|Sr|Jr|Mt|Capt|Col|Gen|Lt|Sgt)\.\s*$")
PARTICLES = frozenset({"de", "del", "della", "der", "di", "du", "da", "la", "le", "van", "von"})
STOP_WORDS = frozenset(
    """
    A About After Afterwards Again Against All Also Although Among An And Another Any As At
    Back Because Before Being Both But By Chapter Despite During Each Eventually Even Every
    Finally First For From He Her Here Hers Him His How However I If In Initially Instead
    Into It Its Later Like Many Me Meanwhile Meantime More Most My No Nor Not Now Of Off On
    Once One Only Or Other Our Out Over Part Since So Some Soon Still Subsequently Such That
    The Their Them Then There These They This Those Though Through Throughout Thus To
    Together Ultimately Under Unfortunately Until Upon Us We What When Where Whether Which
    While Who Whom Whose Why With Within Without Yes Yet You Your
    """.split()
)


@dataclass(frozen=True)
class _Word:
    text: str
    start: int
    end: int
    capitalised: bool
    sentence_initial: bool


def _words(paragraph: str) -> list[_Word]:
    words = []
    for match in WORD_RE.finditer(paragraph):
        text = POSSESSIVE_RE.sub("", match.group())
        if not text:
            continue
        before = paragraph[: match.start()]
        words.append(
            _Word(
                text=text,
                start=match.start(),
                end=match.start() + len(text),
                capitalised=text[0].isupper(),
                sentence_initial=bool(SENTENCE_START_RE.search(before))
                and not ABBREVIATIONS_RE.search(before),
            )
        )
    return words


def _runs(paragraph: str, words: list[_Word]) -> list[list[_Word]]:
    """Group capitalised words joined by single spaces (and particles) into runs."""
    runs: list[list[_Word]] = []
    current: list[_Word] = []
    for index, word in enumerate(words):
        joined = bool(current) and paragraph[current[-1].end : word.start] == " "
        following = words[index + 1] if index + 1 < len(words) else None
        is_particle = (
            word.text in PARTICLES
            and following is not None
            and following.capitalised
            and paragraph[word.end : following.start] == " "
        )
        if word.capitalised or (joined and is_particle):
            if not joined:
                current = []
                runs.append(current)
            current.append(word)
        else:
            current = []
    return runs


def _strip_stop_words(run: list[_Word]) -> list[_Word]:
    while run and (run[0].text in STOP_WORDS or not run[0].capitalised):
        run = run[1:]
    while run and not run[-1].capitalised:
        run = run[:-1]
    return run


def auto_entities(paragraphs: list[str]) -> list[str]:
    """Names that occur at least twice in the document (see the module docstring)."""
    counts: Counter[str] = Counter()
    seen_mid_sentence: set[str] = set()
    order: dict[str, int] = {}
    for paragraph in paragraphs:
        words = _words(paragraph)
        for run in _runs(paragraph, words):
            run = _strip_stop_words(run)
            if not run:
                continue
            candidates = [(word.text, word.sentence_initial) for word in run if word.capitalised]
            if len(run) > 1:
                # Several capitalised words in a row are a name wherever they stand.
                name = paragraph[run[0].start : run[-1].end]
                candidates.append((name, False))
            for text, sentence_initial in candidates:
                if text in STOP_WORDS:
                    continue
                counts[text] += 1
                order.setdefault(text, len(order))
                if not sentence_initial:
                    seen_mid_sentence.add(text)
    entities = [text for text, count in counts.items() if count >= 2 and text in seen_mid_sentence]
    return sorted(entities, key=order.__getitem__)


def entities_for(mode: str, document_entities: list[str], paragraphs: list[str]) -> list[str]:
    """The entity strings for a page: taxonomy mode auto | document | none."""
    if mode == "none":
        return []
    if mode == "document" or document_entities:
        return list(document_entities)
    return auto_entities(paragraphs)
