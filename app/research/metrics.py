"""Pure arithmetic for the researcher dashboard: sentences, error rates, agreement, recall.

Everything here works on plain tuples, so it is unit-tested without an app or database.

Conventions:
- A span is ``(paragraph_id, start, end)`` in code points, ``end`` exclusive, as stored.
- Two spans *overlap* when they are in the same paragraph and share at least one
  character: ``a.start < b.end and b.start < a.end``.
- A sentence is ``(paragraph_id, start, end)`` too; documents are split into paragraphs
  first (as stored), then each paragraph into sentences by `split_sentences`.
- Only an annotation's primary span counts (the error's location); the paired span of a
  repetition or inconsistency points at the earlier text it relates to, which is not
  itself an error.

BooookScore (Chang et al., ICLR 2024, section 3): the score of a summary is the share of
its sentences without any error; Table 1's "errors per sentence" of a category is its
number of occurrences divided by the total number of sentences. With several annotators
per document, each submitted session is one reading of the document: the rate divides by
the sentences of every submitted session's document, and a document's score is the mean
over its submitted sessions.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

import krippendorff
import numpy as np

Span = tuple[int, int, int]  # (paragraph_id, start, end)
Sentence = tuple[int, int, int]  # (paragraph_id, start, end)

# A full stop after one of these words (compared in lower case, inner dots kept) does not
# end a sentence. Single capital letters (initials such as "J. R. R. Tolkien") never do.
ABBREVIATIONS = frozenset(
    """
    mr mrs ms mx dr st jr sr prof rev fr hon gen col lt capt cmdr sgt maj gov sen rep pres
    mt ft ave blvd rd vol vols fig figs ch chap pp eds est approx dept univ inc
    ltd co corp bros vs etc e.g i.e cf al a.m p.m u.s u.k jan feb mar apr jun jul aug sep
    sept oct nov dec
    """.split()
)
CLOSERS = "\"'”’»)]"
OPENERS = "\"'“‘«(["
# Sentence-final punctuation, then closing quotes/brackets, where whitespace follows.
_TERMINATOR = re.compile(r"[.!?…]+[" + re.escape(CLOSERS) + r"]*(?=\s)")


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Sentence (start, end) offsets in one paragraph, whitespace trimmed.

    Rule: a sentence ends after . ! ? or … (and any closing quotes or brackets) when
    whitespace follows and the next text starts with an upper-case letter, a digit or an
    opening quote/bracket; except after a single full stop that ends an abbreviation in
    ABBREVIATIONS or a single upper-case initial. Text without such a boundary is one
    sentence; an empty paragraph has none.
    """
    sentences: list[tuple[int, int]] = []
    start = _skip_space(text, 0)
    for match in _TERMINATOR.finditer(text):
        following = _skip_space(text, match.end())
        if following >= len(text) or match.end() <= start:
            continue
        head = text[following]
        if not (head.isupper() or head.isdigit() or head in OPENERS):
            continue
        punctuation = match.group().rstrip(CLOSERS)
        if punctuation == "." and _is_abbreviation(text, match.start()):
            continue
        sentences.append((start, match.end()))
        start = following
    end = len(text.rstrip())
    if start < end:
        sentences.append((start, end))
    return sentences


def _skip_space(text: str, index: int) -> int:
    while index < len(text) and text[index].isspace():
        index += 1
    return index


def _is_abbreviation(text: str, dot: int) -> bool:
    # Walk back over the word (letters, digits, inner dots) that the full stop ends.
    start = dot
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] == "."):
        start -= 1
    token = text[start:dot].lstrip(".")
    if not token:
        return False
    if len(token) == 1 and token.isupper():
        return True
    return token.lower() in ABBREVIATIONS


def document_sentences(paragraphs: Sequence[str]) -> list[Sentence]:
    """All sentences of a document in reading order, as (paragraph_id, start, end)."""
    return [
        (paragraph_id, start, end)
        for paragraph_id, text in enumerate(paragraphs)
        for start, end in split_sentences(text)
    ]


def overlaps(a: Span, b: Span) -> bool:
    """True when two spans are in the same paragraph and share a character."""
    return a[0] == b[0] and a[1] < b[2] and b[1] < a[2]


def _mask(start: int, end: int) -> int:
    """The characters start..end-1 as bits of an integer: overlap becomes a bitwise AND."""
    return ((1 << (end - start)) - 1) << start


def sentence_labels(sentences: Sequence[Sentence], spans: Iterable[Span]) -> list[bool]:
    """For each sentence: True when some error span overlaps it."""
    return Reading(spans).labels(sentences)


def coherence_score(sentences: Sequence[Sentence], spans: Iterable[Span]) -> float | None:
    """BooookScore of one reading: the share of sentences no error span overlaps."""
    if not sentences:
        return None
    labels = sentence_labels(sentences, spans)
    return labels.count(False) / len(labels)


def errors_per_sentence(counts: Mapping[str, int], sentences: int) -> dict[str, float]:
    """BooookScore Table 1: occurrences of each category divided by the number of sentences."""
    if sentences <= 0:
        return {key: 0.0 for key in counts}
    return {key: count / sentences for key, count in counts.items()}


def mean(values: Iterable[float | None]) -> float | None:
    """Arithmetic mean of the values that are not None; None when there are none."""
    kept = [value for value in values if value is not None and not math.isnan(value)]
    return sum(kept) / len(kept) if kept else None


def label_value_counts(rows: Sequence[Sequence[bool]]) -> list[tuple[int, int]]:
    """Per sentence (unit): how many annotators said (no error, error); rows = annotators."""
    counts = []
    for column in zip(*rows, strict=True):
        errors = sum(column)
        counts.append((len(column) - errors, errors))
    return counts


def krippendorff_alpha(value_counts: Sequence[tuple[int, int]]) -> float | None:
    """Nominal Krippendorff's alpha on error/no-error labels, from per-unit value counts.

    Units coded by fewer than two annotators are not pairable and are left out; alpha is
    undefined (None) without pairable units or when every pairable label is the same
    (no expected disagreement), instead of the NaN and warning the package would give.
    """
    pairable = [counts for counts in value_counts if sum(counts) >= 2]
    if not pairable:
        return None
    no_error = sum(counts[0] for counts in pairable)
    error = sum(counts[1] for counts in pairable)
    if no_error == 0 or error == 0:
        return None
    return float(
        krippendorff.alpha(
            value_counts=np.array(pairable, dtype=float), level_of_measurement="nominal"
        )
    )


def sentence_masks(sentences: Sequence[Sentence]) -> list[tuple[int, int]]:
    """(paragraph_id, character mask) per sentence, to label many readings of one document."""
    return [(p, _mask(start, end)) for p, start, end in sentences]


class Reading:
    """One annotator's spans on one document, as character bitmasks per paragraph.

    Two spans overlap exactly when they are in the same paragraph and their masks share
    a bit, so each overlap question is one integer AND (fast, whatever the span count).
    """

    def __init__(self, spans: Iterable[Span]) -> None:
        self.span_masks = [(span[0], _mask(span[1], span[2])) for span in spans]
        self.masks: dict[int, int] = defaultdict(int)
        for paragraph_id, mask in self.span_masks:
            self.masks[paragraph_id] |= mask

    @property
    def spans(self) -> list[tuple[int, int]]:
        """(paragraph_id, mask) per span."""
        return self.span_masks

    def labels(self, sentences: Sequence[Sentence]) -> list[bool]:
        """For each sentence: True when one of these spans overlaps it."""
        return self.labels_from_masks(sentence_masks(sentences))

    def labels_from_masks(self, sentences: Sequence[tuple[int, int]]) -> list[bool]:
        """`labels` for sentences already turned into (paragraph_id, mask) by sentence_masks."""
        masks = self.masks
        return [bool(masks.get(p, 0) & mask) for p, mask in sentences]

    def matched_share(self, other: Reading) -> float:
        """The share of these spans that overlap one of `other`'s (0.0 without spans)."""
        if not self.span_masks:
            return 0.0
        masks = other.masks
        matched = sum(1 for p, mask in self.span_masks if masks.get(p, 0) & mask)
        return matched / len(self.span_masks)


def span_f1(a: Sequence[Span] | Reading, b: Sequence[Span] | Reading) -> float | None:
    """Span-overlap F1 between two annotators: a span matches if it overlaps one of the other's.

    Precision is the share of a's spans matched in b, recall the share of b's matched in
    a. None when neither marked anything (nothing to agree on); 0.0 when only one did.
    """
    a = a if isinstance(a, Reading) else Reading(a)
    b = b if isinstance(b, Reading) else Reading(b)
    if not a.spans and not b.spans:
        return None
    precision = a.matched_share(b)
    recall = b.matched_share(a)
    if precision + recall == 0:
        return 0.0
    return 2 * precision * recall / (precision + recall)


def mean_pairwise_f1(readings: Sequence[Sequence[Span] | Reading]) -> float | None:
    """Mean span F1 over all pairs of annotators of one document (None if no pair counts)."""
    indexed = [r if isinstance(r, Reading) else Reading(r) for r in readings]
    return mean(span_f1(a, b) for a, b in combinations(indexed, 2))


@dataclass(frozen=True)
class GoldRecall:
    """How many gold spans a worker found, with and without the right category."""

    total: int
    found_any: int
    found_same_category: int

    @property
    def recall_any(self) -> float | None:
        """Category-blind recall."""
        return self.found_any / self.total if self.total else None

    @property
    def recall_category(self) -> float | None:
        """Category-aware recall: the overlapping annotation has the gold category."""
        return self.found_same_category / self.total if self.total else None

    def __add__(self, other: GoldRecall) -> GoldRecall:
        return GoldRecall(
            self.total + other.total,
            self.found_any + other.found_any,
            self.found_same_category + other.found_same_category,
        )


NO_GOLD = GoldRecall(0, 0, 0)


def attention_flagged(gold: GoldRecall, min_recall: float) -> bool:
    """The attention-check rule: flagged when category-blind gold recall is below
    `min_recall` (ATTENTION_CHECK_MIN_RECALL); never without gold spans. The dashboard
    flags workers by it, and Submit gives `failed_checks` by it under `attention_checks: fail`."""
    recall = gold.recall_any
    return recall is not None and recall < min_recall


def gold_recall(
    gold: Iterable[Mapping[str, object]], annotations: Sequence[tuple[int, int, int, str]]
) -> GoldRecall:
    """Gold spans found by one worker's live annotations (paragraph_id, start, end, category).

    A gold span is found when an annotation overlaps it in the same paragraph; it is found
    with the right category when such an annotation also has the gold span's category.
    """
    total = found_any = found_category = 0
    for item in gold:
        gold_span = (int(item["paragraph_id"]), int(item["start"]), int(item["end"]))
        hits = [a for a in annotations if overlaps(gold_span, a[:3])]
        total += 1
        found_any += bool(hits)
        found_category += any(a[3] == item.get("category") for a in hits)
    return GoldRecall(total, found_any, found_category)
