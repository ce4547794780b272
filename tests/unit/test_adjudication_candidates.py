"""Candidate grouping and merge rules of adjudication (pure, no app)."""

from __future__ import annotations

import pytest

from app.adjudication.candidates import (
    Mark,
    Proposal,
    accepted,
    candidate_key,
    group_candidates,
    merged,
)
from app.rules.spans import Span, SpanError

TEXT = "Anna met Bob at the old mill. Then Anna met Bob again."


def span(start: int, end: int, paragraph: int = 0) -> Span:
    return Span(paragraph, start, end, TEXT[start:end])


def mark(ident, who, start, end, category="new-person", paired=None, comment=None) -> Mark:
    return Mark(ident, who, category, span(start, end), paired, comment)


def test_overlapping_spans_of_one_category_are_one_candidate():
    marks = [
        mark(1, "direct:a", 0, 4, comment="who is Anna?"),  # "Anna"
        mark(2, "direct:b", 0, 8),  # "Anna met"
        mark(3, "direct:c", 5, 12),  # "met Bob": overlaps b only, joins transitively
        mark(4, "direct:a", 20, 28),  # "old mill": alone
    ]
    candidates = group_candidates(marks)
    assert [sorted(m.annotation_id for m in c.marks) for c in candidates] == [[1, 2, 3], [4]]
    assert candidates[0].annotators == ["direct:a", "direct:b", "direct:c"]
    assert candidates[0].marks[0].comment == "who is Anna?"
    assert candidates[1].annotators == ["direct:a"]


def test_other_category_or_touching_spans_stay_apart():
    marks = [
        mark(1, "direct:a", 0, 4),
        mark(2, "direct:b", 0, 4, category="missing-info"),
        mark(3, "direct:c", 4, 8),  # touches [0, 4) without overlapping
    ]
    groups = [sorted(m.annotation_id for m in c.marks) for c in group_candidates(marks)]
    assert sorted(groups) == [[1], [2], [3]]


def test_spans_in_other_paragraphs_stay_apart():
    marks = [mark(1, "direct:a", 0, 4), Mark(2, "direct:b", "new-person", span(0, 4, 1))]
    assert len(group_candidates(marks)) == 2


def test_paired_spans_group_only_when_both_spans_overlap():
    early = span(0, 12)  # "Anna met Bob"
    other = span(20, 28)  # "old mill"
    marks = [
        mark(1, "direct:a", 35, 47, "repetition", paired=early),
        mark(2, "direct:b", 35, 41, "repetition", paired=span(5, 12)),  # both overlap a's
        mark(3, "direct:c", 35, 47, "repetition", paired=other),  # second span elsewhere
    ]
    groups = sorted(sorted(m.annotation_id for m in c.marks) for c in group_candidates(marks))
    assert groups == [[1, 2], [3]]


def test_candidate_key_is_stable_and_order_free():
    a, b = mark(7, "direct:a", 0, 4), mark(3, "direct:b", 0, 4)
    assert candidate_key([a, b]) == candidate_key([b, a])
    assert candidate_key([a]) != candidate_key([a, b])
    assert group_candidates([a, b])[0].key == candidate_key([a, b])


def test_accept_takes_the_span_most_annotators_marked():
    candidate = group_candidates(
        [mark(1, "direct:a", 0, 8), mark(2, "direct:b", 0, 4), mark(3, "direct:c", 0, 4)]
    )[0]
    assert accepted(candidate) == Proposal("new-person", span(0, 4))


def test_accept_breaks_ties_by_earliest_then_shortest():
    candidate = group_candidates([mark(1, "direct:a", 5, 12), mark(2, "direct:b", 0, 8)])[0]
    assert accepted(candidate).span == span(0, 8)


def test_merge_union_covers_every_mark_and_takes_text_from_paragraph():
    candidate = group_candidates([mark(1, "direct:a", 0, 4), mark(2, "direct:b", 5, 12)])
    assert len(candidate) == 2  # not overlapping: no union across them
    candidate = group_candidates([mark(1, "direct:a", 0, 8), mark(2, "direct:b", 5, 12)])[0]
    assert merged(candidate, "union") == Proposal("new-person", span(0, 12))
    assert merged(candidate, "union", texts={0: TEXT}).span.text == "Anna met Bob"


def test_merge_union_of_paired_spans_unites_both_spans():
    candidate = group_candidates(
        [
            mark(1, "direct:a", 35, 43, "repetition", paired=span(0, 8)),
            mark(2, "direct:b", 39, 47, "repetition", paired=span(5, 12)),
        ]
    )[0]
    result = merged(candidate, "union", texts={0: TEXT})
    assert result.span == span(35, 47)
    assert result.paired_span == span(0, 12)


def test_merge_with_one_annotators_boundary_and_explicit_category():
    candidate = group_candidates([mark(1, "direct:a", 0, 8), mark(2, "direct:b", 5, 12)])[0]
    result = merged(candidate, "direct:b", category="missing-info")
    assert result == Proposal("missing-info", span(5, 12))


def test_merge_with_a_boundary_of_nobody_in_the_candidate_is_refused():
    candidate = group_candidates([mark(1, "direct:a", 0, 8)])[0]
    with pytest.raises(SpanError) as error:
        merged(candidate, "direct:z")
    assert error.value.field == "boundary"
    assert "direct:a" in error.value.message


def test_proposal_round_trips_through_its_dict():
    proposal = Proposal("repetition", span(35, 47), span(0, 12))
    assert Proposal.from_dict(proposal.to_dict()) == proposal


def graded(ident, who, severity, start=0, end=4) -> Mark:
    """A mark of "Anna" (by default) with a severity."""
    return Mark(ident, who, "new-person", span(start, end), severity=severity)


WEIGHTS = {"minor": 1.0, "major": 5.0}


def test_accept_keeps_the_severity_most_marks_gave():
    """Issue 27.5: gold carried no severity. Severities are decided like categories."""
    (candidate,) = group_candidates(
        [graded(1, "direct:a", "minor"), graded(2, "direct:b", "major"), graded(3, "c", "minor")]
    )
    assert accepted(candidate, WEIGHTS).severity == "minor"
    assert candidate.to_dict(WEIGHTS)["proposal"]["severity"] == "minor"
    assert candidate.to_dict(WEIGHTS)["marks"][1]["severity"] == "major"


def test_a_severity_tie_goes_to_the_heavier_and_none_counts_for_nothing():
    (tie,) = group_candidates(
        [graded(1, "direct:a", "minor"), graded(2, "direct:b", "major"), graded(3, "c", None)]
    )
    assert accepted(tie, WEIGHTS).severity == "major"
    (ungraded,) = group_candidates([graded(1, "direct:a", None), graded(2, "direct:b", None)])
    assert accepted(ungraded, WEIGHTS).severity is None


def test_merge_takes_the_boundarys_severity_or_the_one_chosen():
    (candidate,) = group_candidates(
        [graded(1, "direct:a", "minor", 0, 4), graded(2, "direct:b", "major", 0, 8)]
    )
    assert merged(candidate, "direct:a", weights=WEIGHTS).severity == "minor"
    assert merged(candidate, "direct:b", weights=WEIGHTS).severity == "major"
    assert merged(candidate, "union", weights=WEIGHTS).severity == "major"  # tie: heavier
    assert merged(candidate, "direct:a", severity="major").severity == "major"
    stored = merged(candidate, "union", severity="minor").to_dict()
    assert Proposal.from_dict(stored).severity == "minor"
    del stored["severity"]  # a decision stored before severities
    assert Proposal.from_dict(stored).severity is None
