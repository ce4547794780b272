"""Planting known errors into a document's paragraphs. Pure: no app, no database.

Three kinds (issue 17, point 4), each chosen with a seeded `random.Random`, so one seed
always plants the same document:

- ``repetition``: a sentence of an earlier paragraph is copied into a later paragraph, at a
  sentence boundary. Gold: the copy, paired with the original sentence.
- ``inconsistency``: one later mention of a recurring name is replaced by a name the
  document never uses. Gold: the changed mention, paired with the name's first mention.
  Names are app/rules/entities.py's `auto_entities`, one word, not a title (Dr,
  Father...), not part of a longer name (French of French Guiana); of those, the
  MAIN_NAMES mentioned most often, as a summary's characters recur more than places.
- ``new-entity``: a sentence about a person never introduced is inserted at a sentence
  boundary of a paragraph after the first. Gold: the name (a singleton).

Sentences are app/rules/metrics.py's `split_sentences`. Offsets are code points into
the paragraphs returned; every gold span is checked against that text before it is
returned (`PlantedCheck.text` is exactly ``paragraphs[paragraph_id][start:end]``).
Spans already planted are never edited by a later kind; edits after them shift them.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from app.rules.entities import auto_entities
from app.rules.metrics import split_sentences

KINDS = ("repetition", "inconsistency", "new-entity")
PAIRED_KINDS = ("repetition", "inconsistency")
# Names unlikely in a summary; one the document does not use is taken.
NAMES = (
    "Bartholomew",
    "Evangeline",
    "Thaddeus",
    "Philippa",
    "Leopold",
    "Rosamund",
    "Cornelius",
    "Henrietta",
    "Ambrose",
    "Wilhelmina",
)
NEW_ENTITY_SENTENCES = (
    "{name} had been waiting at the door for hours.",
    "A letter from {name} changes everything.",
    "{name} arrives with urgent news.",
    "Only {name} knows where the key is hidden.",
)
TITLES = frozenset(
    "Dr Mr Mrs Ms Mx Miss Sir Lady Lord Father Mother Sister Brother Herr Frau Madame "
    "Monsieur Professor Captain King Queen Prince Princess Saint".split()
)
MAIN_NAMES = 5
# A copied sentence shorter than this (in words) is too slight to be a fair check.
MIN_SENTENCE_WORDS = 5
MAX_SENTENCE_CHARS = 300
EXPLANATIONS = {
    "repetition": "This sentence repeats, word for word, a sentence said earlier.",
    "inconsistency": "{new} is used where the summary has been speaking of {old}.",
    "new-entity": "{name} is never introduced: nothing says who they are.",
}


class PlantError(ValueError):
    """The document has nothing a kind can be planted in (message says what is missing)."""


@dataclass(frozen=True)
class PlantedCheck:
    """One planted error: its span (code points), text, and for paired kinds the other span."""

    kind: str
    category: str
    paragraph_id: int
    start: int
    end: int
    text: str
    explanation: str
    paired: tuple[int, int, int] | None = None  # (paragraph_id, start, end)

    def gold(self) -> dict[str, object]:
        """The document's gold entry (paired_span and explanation are optional:
        docs/contracts.md#input-documents)."""
        entry: dict[str, object] = {
            "paragraph_id": self.paragraph_id,
            "start": self.start,
            "end": self.end,
            "category": self.category,
            "explanation": self.explanation,
        }
        if self.paired:
            paragraph_id, start, end = self.paired
            entry["paired_span"] = {"paragraph_id": paragraph_id, "start": start, "end": end}
        return entry


def parse_kinds(value: str) -> tuple[str, ...]:
    """`repetition,new-entity` -> ("repetition", "new-entity"); unknown or repeated: ValueError."""
    kinds = tuple(part.strip() for part in value.split(",") if part.strip())
    if not kinds:
        raise ValueError(f"give one or more of {', '.join(KINDS)}")
    for kind in kinds:
        if kind not in KINDS:
            raise ValueError(f"unknown kind {kind!r} (choose from {', '.join(KINDS)})")
    if len(set(kinds)) != len(kinds):
        raise ValueError("a kind is given twice")
    return kinds


class _Planter:
    def __init__(self, paragraphs: Sequence[str], seed: int) -> None:
        self.paragraphs = list(paragraphs)
        self.random = random.Random(seed)
        self.planted: list[PlantedCheck] = []
        self.used_names: set[str] = set()

    # -- shared editing -----------------------------------------------------------------

    def edit(self, paragraph_id: int, start: int, end: int, new: str) -> None:
        """Replace [start, end) of a paragraph and shift planted spans that follow it."""
        text = self.paragraphs[paragraph_id]
        self.paragraphs[paragraph_id] = text[:start] + new + text[end:]
        delta = len(new) - (end - start)

        def shift(span: tuple[int, int, int]) -> tuple[int, int, int]:
            pid, a, b = span
            if pid == paragraph_id and a >= end:
                return pid, a + delta, b + delta
            return span

        moved = []
        for check in self.planted:
            pid, a, b = shift((check.paragraph_id, check.start, check.end))
            paired = shift(check.paired) if check.paired else None
            moved.append(
                PlantedCheck(
                    check.kind, check.category, pid, a, b, check.text, check.explanation, paired
                )
            )
        self.planted = moved

    def taken(self, paragraph_id: int, start: int, end: int) -> bool:
        """True when [start, end) touches a planted span (which must stay as recorded)."""
        spans = [(c.paragraph_id, c.start, c.end) for c in self.planted]
        spans += [c.paired for c in self.planted if c.paired]
        return any(p == paragraph_id and a < end and start < b for p, a, b in spans)

    def boundaries(self, paragraph_id: int) -> list[int]:
        """Where a sentence can be inserted: before each sentence but the first, or at the end."""
        text = self.paragraphs[paragraph_id]
        starts = [start for start, _end in split_sentences(text)[1:]]
        return [*starts, len(text)]

    def insert_sentence(self, paragraph_id: int, sentence: str) -> int:
        """Insert a sentence at a seeded boundary; return where the sentence starts."""
        text = self.paragraphs[paragraph_id]
        at = self.random.choice(self.boundaries(paragraph_id))
        if at == len(text):
            self.edit(paragraph_id, at, at, " " + sentence)
            return at + 1
        self.edit(paragraph_id, at, at, sentence + " ")
        return at

    def fresh_name(self) -> str:
        """A name from NAMES that neither the text nor an earlier check uses."""
        text = "\n".join(self.paragraphs)
        free = [n for n in NAMES if n not in self.used_names and not _mentions(text, n)]
        if not free:
            raise PlantError("every spare name already occurs in the document")
        name = self.random.choice(free)
        self.used_names.add(name)
        return name

    def add(self, check: PlantedCheck) -> None:
        self.planted.append(check)

    # -- the kinds ----------------------------------------------------------------------

    def repetition(self, category: str) -> None:
        candidates = [
            (pid, start, end)
            for pid, text in enumerate(self.paragraphs[:-1])
            for start, end in split_sentences(text)
            if len(text[start:end].split()) >= MIN_SENTENCE_WORDS
            and end - start <= MAX_SENTENCE_CHARS
            and not self.taken(pid, start, end)
        ]
        if not candidates:
            raise PlantError(
                "repetition: needs a sentence of at least "
                f"{MIN_SENTENCE_WORDS} words before the last paragraph"
            )
        source_pid, start, end = self.random.choice(candidates)
        sentence = self.paragraphs[source_pid][start:end]
        target = self.random.randrange(source_pid + 1, len(self.paragraphs))
        at = self.insert_sentence(target, sentence)
        self.add(
            PlantedCheck(
                "repetition",
                category,
                target,
                at,
                at + len(sentence),
                sentence,
                EXPLANATIONS["repetition"],
                (source_pid, start, end),
            )
        )

    def inconsistency(self, category: str) -> None:
        candidates = []
        for name, mentions in self.main_names():
            first = mentions[0]
            candidates += [
                (name, first, mention)
                for mention in mentions[1:]
                if mention[0] > first[0] and not self.taken(*mention)
            ]
        if not candidates:
            raise PlantError(
                "inconsistency: needs a one-word name mentioned again in a later paragraph"
            )
        name, first, (pid, start, end) = self.random.choice(candidates)
        if self.taken(*first):
            raise PlantError("inconsistency: the name's first mention is inside another check")
        new = self.fresh_name()
        self.edit(pid, start, end, new)
        explanation = EXPLANATIONS["inconsistency"].format(new=new, old=name)
        self.add(
            PlantedCheck(
                "inconsistency", category, pid, start, start + len(new), new, explanation, first
            )
        )

    def main_names(self) -> list[tuple[str, list[tuple[int, int, int]]]]:
        """The MAIN_NAMES one-word names mentioned most often, with their mentions."""
        entities = auto_entities(self.paragraphs)
        in_longer = {word for name in entities if " " in name for word in name.split()}
        names = []
        for name in entities:
            if " " in name or name in in_longer or name in TITLES or len(name) < 3:
                continue
            mentions = [
                (pid, match.start(), match.end())
                for pid, text in enumerate(self.paragraphs)
                for match in _mention_re(name).finditer(text)
            ]
            if len(mentions) >= 2:
                names.append((name, mentions))
        names.sort(key=lambda item: -len(item[1]))  # stable: ties keep document order
        return names[:MAIN_NAMES]

    def new_entity(self, category: str) -> None:
        if len(self.paragraphs) < 2:
            raise PlantError("new-entity: needs at least two paragraphs")
        name = self.fresh_name()
        sentence = self.random.choice(NEW_ENTITY_SENTENCES).format(name=name)
        target = self.random.randrange(1, len(self.paragraphs))
        at = self.insert_sentence(target, sentence) + sentence.index(name)
        explanation = EXPLANATIONS["new-entity"].format(name=name)
        self.add(
            PlantedCheck("new-entity", category, target, at, at + len(name), name, explanation)
        )


def _mention_re(name: str) -> re.Pattern[str]:
    # A whole word: not inside a longer word (Luc in Lucas), possessive 's allowed after.
    return re.compile(r"(?<![\w'’-])" + re.escape(name) + r"(?![\w-])")


def _mentions(text: str, name: str) -> bool:
    return bool(_mention_re(name).search(text))


def plant(
    paragraphs: Sequence[str], kinds: Sequence[str], seed: int, categories: Mapping[str, str]
) -> tuple[tuple[str, ...], list[PlantedCheck]]:
    """Plant each kind once, in the order given; the new paragraphs and the checks.

    `categories` maps each kind to its taxonomy category key (the taxonomy's `checks:`).
    Raises PlantError when the document offers nothing for a kind.
    """
    planter = _Planter(paragraphs, seed)
    for kind in kinds:
        getattr(planter, kind.replace("-", "_"))(categories[kind])
    for check in planter.planted:
        _verify(planter.paragraphs, check)
    return tuple(planter.paragraphs), planter.planted


def _verify(paragraphs: Sequence[str], check: PlantedCheck) -> None:
    """The recorded text is the stored text at the recorded offsets (a bug otherwise)."""
    found = paragraphs[check.paragraph_id][check.start : check.end]
    if found != check.text:
        raise AssertionError(f"{check.kind}: span holds {found!r}, not {check.text!r}")
    if check.paired:
        pid, start, end = check.paired
        if not 0 <= start < end <= len(paragraphs[pid]):
            raise AssertionError(f"{check.kind}: paired span {check.paired} out of range")
