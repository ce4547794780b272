"""Can a model replace a human annotator? The Alternative Annotator Test. Pure.

Definition: Calderon, Reichart & Dror (ACL 2025), "The Alternative Annotator Test for
LLM-as-a-Judge: How to Statistically Justify Replacing Human Annotators with LLMs"
(arXiv 2501.10970), the procedure of its method section, as the authors' reference code
computes it (the `alt_test` function of github.com/nitaytech/alttest; the examples of
tests/unit/test_analysis_alttest.py were cross-checked against it):

1. Leave one human j out. On each instance i that j annotated with at least one other
   human, score the judge f and the left-out human h_j by their alignment with the
   remaining humans: here the instance is a document and the alignment score is the mean
   category-aware span F1 (the attention-check matching rule, app.analysis.matching)
   against each remaining human.
2. Indicators: W^f_i = 1 when the judge's score >= the human's, W^h_i = 1 when the
   human's >= the judge's (a tie counts for both). The advantage probability of the judge
   is rho_j = mean of W^f_i.
3. Paired one-sided t-test with the cost-benefit margin epsilon on d_i = W^h_i - W^f_i:
   H0: mean(d) >= epsilon (the human keeps an edge larger than epsilon), H1: mean(d) <
   epsilon; t = (mean(d) - epsilon) / (s_d / sqrt(n)), p = P(T_{n-1} <= t). With s_d = 0 the
   p-value is 0 when mean(d) < epsilon, else 1.
4. Benjamini-Yekutieli (2001) correction over the m left-out humans at q = 0.05:
   adjusted p_(k) = min over l >= k of min(1, p_(l) m c(m) / l), c(m) = sum_{i<=m} 1/i; the
   judge *wins* against human j when j's adjusted p-value is <= q.
5. The winning rate omega is the share of humans the judge wins against; the judge passes
   when omega >= 0.5. The average advantage probability rho is the mean of rho_j.

epsilon: the paper's guidance (its FAQ, and the reference code's docstring) is 0.2 for
expert annotators, 0.15 for skilled ones and 0.1 for crowd-workers. The default here is
0.1 (`CROWD_EPSILON`): this tool's annotators are crowd-workers, and the margin is the
advantage a judge is allowed to be *behind* them, so the crowd's value is the strict one
(issue 32 proposed 0.2 "for crowd-workers"; checked against the paper, 0.2 is its value
for experts, whose time is dearer). `EXPERT_EPSILON` and `SKILLED_EPSILON` name the
others; the reference code's own default is 0.2.

Humans with fewer than `MIN_INSTANCES` (30) instances are left out, as the reference code
does (the t-test's normality needs about 30); the test needs at least three humans (the
paper's recommendation).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np
from scipy.stats import t as student_t

from app.analysis.matching import MatchRule, SpanLike, f1_score, iou_match, pair_counts

EXPERT_EPSILON = 0.2
SKILLED_EPSILON = 0.15
CROWD_EPSILON = 0.1
DEFAULT_EPSILON = CROWD_EPSILON
FDR_LEVEL = 0.05
MIN_INSTANCES = 30
MIN_HUMANS = 3
PASS_RATE = 0.5

Readings = Mapping[Hashable, Mapping[Hashable, Sequence[SpanLike]]]


def one_sided_t(differences: Sequence[float], epsilon: float) -> tuple[float, float]:
    """(t, p) of H1: mean(differences) < epsilon (Student's t with n - 1 degrees)."""
    values = np.asarray(differences, dtype=float)
    if values.size < 2:
        raise ValueError("the t-test needs at least two instances")
    mean = float(values.mean())
    spread = float(values.std(ddof=1))
    if spread == 0:
        return (-math.inf, 0.0) if mean < epsilon else (math.inf, 1.0)
    statistic = (mean - epsilon) / (spread / math.sqrt(values.size))
    return statistic, float(student_t.cdf(statistic, values.size - 1))


def benjamini_yekutieli(p_values: Sequence[float]) -> list[float]:
    """BY-adjusted p-values (Benjamini & Yekutieli 2001, theorem 1.3), in input order."""
    count = len(p_values)
    if count == 0:
        return []
    harmonic = sum(1 / k for k in range(1, count + 1))
    order = sorted(range(count), key=lambda k: p_values[k])
    adjusted = [0.0] * count
    smallest = 1.0
    for rank in range(count, 0, -1):
        index = order[rank - 1]
        smallest = min(smallest, p_values[index] * count * harmonic / rank)
        adjusted[index] = smallest
    return adjusted


def alt_test_from_scores(
    scores: Mapping[Hashable, Sequence[tuple[float, float]]],
    epsilon: float = DEFAULT_EPSILON,
    q: float = FDR_LEVEL,
) -> dict[str, Any]:
    """The alt-test from alignment scores: per left-out human, per instance, (judge's
    score, human's score)."""
    rows = []
    for annotator, pairs in scores.items():
        judge = np.array([pair[0] for pair in pairs])
        human = np.array([pair[1] for pair in pairs])
        judge_wins = (judge >= human).astype(float)
        human_wins = (human >= judge).astype(float)
        statistic, p = one_sided_t(human_wins - judge_wins, epsilon)
        rows.append(
            {
                "annotator_id": annotator,
                "instances": len(pairs),
                "advantage": float(judge_wins.mean()),
                "t": statistic,
                "p_unadjusted": p,
            }
        )
    adjusted = benjamini_yekutieli([row["p_unadjusted"] for row in rows])
    for row, p in zip(rows, adjusted, strict=True):
        row["p_value"] = p
        row["won"] = p <= q
    winning_rate = sum(row["won"] for row in rows) / len(rows) if rows else 0.0
    return {
        "epsilon": epsilon,
        "q": q,
        "winning_rate": winning_rate,
        "rho": float(np.mean([row["advantage"] for row in rows])) if rows else None,
        "passed": bool(rows) and winning_rate >= PASS_RATE,
        "annotators": rows,
    }


def alignment(
    spans: Sequence[SpanLike], others: Sequence[Sequence[SpanLike]], match: MatchRule
) -> float:
    """Mean F1 (0-1) of `spans` against each of the other humans' spans on one document."""
    return float(np.mean([f1_score(pair_counts(spans, other, match)) for other in others]))


def alignment_scores(
    readings: Readings, judge: Hashable, match: MatchRule = iou_match
) -> dict[Hashable, list[tuple[float, float]]]:
    """Per human: on each document the judge and that human read with another human,
    (judge's alignment, the human's alignment) with the remaining humans."""
    scores: dict[Hashable, list[tuple[float, float]]] = {}
    for document in readings.values():
        if judge not in document:
            continue
        humans = [annotator for annotator in document if annotator != judge]
        if len(humans) < 2:
            continue
        for left_out in humans:
            others = [document[h] for h in humans if h != left_out]
            scores.setdefault(left_out, []).append(
                (
                    alignment(document[judge], others, match),
                    alignment(document[left_out], others, match),
                )
            )
    return scores


def alt_test(
    readings: Readings,
    judge: Hashable,
    epsilon: float = DEFAULT_EPSILON,
    q: float = FDR_LEVEL,
    min_instances: int = MIN_INSTANCES,
    match: MatchRule = iou_match,
) -> tuple[dict[str, Any] | None, str | None]:
    """(alt_test, None), or (None, the reason it cannot be run): readings are per
    document, annotator -> spans, the judge among them."""
    scores = alignment_scores(readings, judge, match)
    kept = {h: pairs for h, pairs in scores.items() if len(pairs) >= min_instances}
    if len(kept) < MIN_HUMANS:
        return None, (
            f"The alt-test needs at least {MIN_HUMANS} human annotators who each share "
            f"{min_instances} documents or more with the judge and another human; "
            f"this study has {len(kept)}."
        )
    result = alt_test_from_scores(kept, epsilon, q)
    result["skipped"] = sorted((h for h in scores if h not in kept), key=repr)
    return result, None
