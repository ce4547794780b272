"""Pure arithmetic for the researcher dashboard: sentences, error rates, agreement, recall.

Everything here works on plain tuples, so it is unit-tested without an app or database.

Conventions:
- A span is ``(paragraph_id, start, end)`` in code points, ``end`` exclusive, as stored.
- Two spans *overlap* when they are in the same paragraph and share at least one
  character: ``a.start < b.end and b.start < a.end``.
- A sentence is ``(paragraph_id, start, end)`` too; documents are split into paragraphs
  first (as stored), then each paragraph into sentences by `split_sentences`, by the
  rules of the document's language (English's below; others in app.sentences).
- Only an annotation's primary span counts (the error's location); the paired span of a
  repetition or inconsistency points at the earlier text it relates to, which is not
  itself an error.

BooookScore (Chang et al., ICLR 2024, section 4.1, equation 1): the score of a summary is
the share of its sentences without any error, reported 0-100 here:
``booookscore = 100 * (1 - error sentences / sentences)``. Footnote 12 says how human
annotations map to sentences: annotators "can (1) highlight multiples [sic] consecutive
sentences as one span and (2) create relations between two spans, while GPT-4 can only
highlight single sentences as spans. To adjust for this difference, we treat both consecutive
sentences and relations as single sentences when computing BooookScore for humans."
So (`footnote12_counts`), Equation 1 is applied to the sentences as footnote 12 treats
them: the sentences one annotation covers (those its span overlaps, and for a paired
annotation, a relation, those its paired span overlaps too) are one single sentence,
merged (transitively, when annotations share a sentence); the score is the share of
these sentences that hold no annotation. A span over three sentences is one error
sentence out of n - 2; a relation between two sentences one out of n - 1; a sentence
counts once however many annotations fall on it (section 4.1: "each sentence as a
singular unit of confusion"). Without annotations this is Equation 1 over the n
sentences of the summary.
Table 1's "% errors per sentence" of a category is "the number of error occurrences in
all summaries normalized by the total number of sentences in all summaries": every
annotation of that category is one occurrence (an annotation with two labels is two
occurrences, one per category), divided by the sentences, x 100. With several
annotators per document, each submitted session is one reading of the document: the
rate divides by the sentences of every submitted session's document, and a document's
score is the mean over its submitted sessions; the study's score is the mean over
documents ("the mean BooookScore across all summaries").

Agreement (Krippendorff's alpha over sentences) uses `sentence_labels`, where a sentence
is marked when any span overlaps it: it compares where annotators saw errors, which is
not the BooookScore count.
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

from app.languages import primary_subtag
from app.sentences import is_abbreviation, skip_space, split_sentences_multilingual
from app.spans import locates, matches

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


def split_sentences(text: str, language: str | None = None) -> list[tuple[int, int]]:
    """Sentence (start, end) offsets in one paragraph, whitespace trimmed.

    `language` is the document's BCP 47 tag. English (``en``, ``en-GB``, ...) and no
    language use the rule below, which reproduces the BooookScore figures; any other
    language uses app.sentences' rules for its script (docs/languages.md).

    English rule: a sentence ends after . ! ? or … (and any closing quotes or brackets) when
    whitespace follows and the next text starts with an upper-case letter, a digit or an
    opening quote/bracket; except after a single full stop that ends an abbreviation in
    ABBREVIATIONS or a single upper-case initial. Text without such a boundary is one
    sentence; an empty paragraph has none.
    """
    primary = primary_subtag(language)
    if primary not in (None, "en"):
        return split_sentences_multilingual(text, primary)
    sentences: list[tuple[int, int]] = []
    start = skip_space(text, 0)
    for match in _TERMINATOR.finditer(text):
        following = skip_space(text, match.end())
        if following >= len(text) or match.end() <= start:
            continue
        head = text[following]
        if not (head.isupper() or head.isdigit() or head in OPENERS):
            continue
        punctuation = match.group().rstrip(CLOSERS)
        if punctuation == "." and is_abbreviation(text, match.start(), ABBREVIATIONS):
            continue
        sentences.append((start, match.end()))
        start = following
    end = len(text.rstrip())
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


def footnote12_counts(
    sentences: Sequence[Sentence],
    spans: Iterable[Span],
    paired: Sequence[Span | None] | None = None,
) -> tuple[int, int]:
    """(sentences as footnote 12 treats them, how many hold an error) for one reading."""
    return Reading(spans, paired).footnote12_counts(sentence_masks(sentences))


def booookscore(sentences: int, error_sentences: int) -> float | None:
    """BooookScore on the paper's 0-100 scale: 100 * (1 - error sentences / sentences)."""
    if sentences <= 0:
        return None
    return 100 * (1 - error_sentences / sentences)


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

    def __init__(self, spans: Iterable[Span], paired: Sequence[Span | None] | None = None) -> None:
        self.span_masks = [(span[0], _mask(span[1], span[2])) for span in spans]
        # The paired span of each annotation (or None), used only by footnote12_counts.
        self.paired_masks = [
            None if pair is None else (pair[0], _mask(pair[1], pair[2]))
            for pair in (paired or [None] * len(self.span_masks))
        ]
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

    def footnote12_counts(self, sentences: Sequence[tuple[int, int]]) -> tuple[int, int]:
        """(merged sentences, merged sentences with an error) from sentence_masks' output.

        Each annotation's covered sentences (span and paired span) become one sentence:
        a union-find over sentence indices, then one count per group.
        """
        by_paragraph: dict[int, list[tuple[int, int]]] = defaultdict(list)
        for index, (paragraph_id, mask) in enumerate(sentences):
            by_paragraph[paragraph_id].append((index, mask))
        parent = list(range(len(sentences)))

        def root(index: int) -> int:
            while parent[index] != index:
                parent[index] = parent[parent[index]]
                index = parent[index]
            return index

        marked: list[int] = []
        for span, pair in zip(self.span_masks, self.paired_masks, strict=True):
            sides = (span, pair) if pair else (span,)
            covered = [
                index
                for paragraph_id, span_mask in sides
                for index, mask in by_paragraph.get(paragraph_id, ())
                if mask & span_mask
            ]
            if not covered:
                continue
            for index in covered[1:]:
                parent[root(index)] = root(covered[0])
            marked.append(covered[0])
        groups = {root(index) for index in range(len(sentences))}
        return len(groups), len({root(index) for index in marked})

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
    """An attention check's score: gold spans found (recall) and stray spans (precision).

    Rule (app.spans.locates: a check must not be passed by highlighting everything): an
    annotation *locates* a gold span when it is in the same paragraph and their character
    intersection over union is at least 0.5. A gold span is found when an annotation of
    its category locates it (`found_same_category`, app.spans.matches; `found_any` ignores
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
