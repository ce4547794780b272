"""How many errors did nobody find? Capture-recapture estimates. Pure.

Each annotator who submitted a document is one capture occasion of that document's
errors; an error is a connected component of matching spans (app.analysis.matching), its
capture history the set of annotators who found it. An annotator who read a document and
marked nothing is still an occasion (they missed every error).

Estimators (docs/analyses.md gives them in plain words):

- ``chapman``, two annotators per document: Chapman's (1951) nearly unbiased form of the
  Lincoln-Petersen estimator, ``N = (n1 + 1)(n2 + 1) / (m + 1) - 1``, with Seber's variance
  ``(n1 + 1)(n2 + 1)(n1 - m)(n2 - m) / ((m + 1)^2 (m + 2))`` (Seber 1982, "The Estimation of
  Animal Abundance", 2nd ed., p. 60). The study's estimate is the sum over
  documents, its variance the sum of theirs (documents are independent).
- ``loglinear-mt``, three annotators or more: model M_t (Darroch 1958, "The multiple-
  recapture census I", Biometrika 45; Otis et al. 1978, Wildlife Monographs 62), in which
  each annotator finds any error with their own probability p_j, independently, fitted
  as a Poisson log-linear model of the capture histories (Cormack 1989, "Log-linear
  models for capture-recapture", Biometrics 45) with a stratum per document and the
  annotator effects shared across documents, so that designs in which different workers
  read different documents are handled. The maximum-likelihood solution satisfies
  Darroch's equations ``N_d = S_d / (1 - prod_j (1 - p_j))`` and ``p_j = n_j / sum_d N_d``
  and is found by iterating them (an EM algorithm for the unseen cell). The variance of
  the estimated missed errors m_0 is ``m_0 + m_0^2 Var(log m_0)`` from the Fisher
  information of the log-linear model (for one document and two annotators it reduces to
  the Lincoln-Petersen variance ``N q1 q2 / (p1 p2)``; for one document and t annotators to
  Darroch's ``N / (1/prod q_j + t - 1 - sum 1/q_j)``).
- ``chao``: Chao's (1987) lower bound for model M_h (errors of unequal findability, e.g.
  obvious and subtle ones): ``N = S + f1^2 / (2 f2)`` with f_k the errors found by exactly k
  annotators, variance ``f2 (a^4/4 + a^3 + a^2/2)`` with a = f1/f2 (Chao 1987, "Estimating
  the population size for capture-recapture data with unequal catchability", Biometrics
  43). Undefined without an error found twice (f2 = 0). On the study,
  the frequencies of all documents are pooled. With annotators of unequal skill and
  errors equally hard it is not a lower bound and overestimates (the tests show it);
  `loglinear-mt` is the default for three annotators or more.

Every interval is Chao's (1987) log-normal interval, which never falls below
the errors found: with f0 = N - S the estimated missed errors,
``C = exp(1.96 sqrt(log(1 + Var / f0^2)))`` and the interval is ``[S + f0 / C, S + f0 C]``
(``[S, S]`` when f0 = 0). ``share_found`` is 100 * found / estimated.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from app.analysis.matching import MatchRule, SpanLike, group_matches, iou_match

Z95 = 1.959963984540054
CHAPMAN = "chapman"
LOGLINEAR_MT = "loglinear-mt"
CHAO = "chao"
METHODS = (CHAPMAN, LOGLINEAR_MT, CHAO)
_TOLERANCE = 1e-12
_MAX_ITERATIONS = 100_000
_ALMOST_ONE = 1 - 1e-12


class Estimate(NamedTuple):
    """A population estimate: errors found (S), estimated (N) and the variance of N."""

    found: int
    estimated: float
    variance: float


@dataclass(frozen=True)
class DocumentCaptures:
    """One document's capture data: who read it, and each error's category and finders."""

    document_id: Hashable
    readers: frozenset
    errors: tuple[tuple[Hashable, frozenset], ...]

    def of_category(self, category: Hashable) -> DocumentCaptures:
        """The same document with only the errors of one category."""
        kept = tuple(error for error in self.errors if error[0] == category)
        return DocumentCaptures(self.document_id, self.readers, kept)


def captures_of(
    document_id: Hashable,
    readings: Mapping[Hashable, Sequence[SpanLike]],
    match: MatchRule = iou_match,
) -> DocumentCaptures:
    """A document's captures from its readings (annotator -> spans, every reader listed,
    an empty list for one who marked nothing): errors are the components of matches."""
    errors = []
    for component in group_matches(readings, match):
        annotator, index = component.members[0]
        errors.append((readings[annotator][index][3], component.annotators))
    return DocumentCaptures(document_id, frozenset(readings), tuple(errors))


def log_normal_ci(estimate: Estimate, z: float = Z95) -> tuple[float, float]:
    """Chao's (1987) interval: log-normal for the missed errors, never below S."""
    missed = estimate.estimated - estimate.found
    if missed <= 0 or estimate.variance <= 0:
        return float(estimate.found), float(estimate.estimated)
    factor = math.exp(z * math.sqrt(math.log(1 + estimate.variance / missed**2)))
    return estimate.found + missed / factor, estimate.found + missed * factor


def chapman(first: int, second: int, both: int) -> Estimate:
    """Chapman's estimator and Seber's variance for two annotators finding `first` and
    `second` errors, `both` of them in common."""
    if not 0 <= both <= min(first, second):
        raise ValueError(f"errors found by both ({both}) must be within 0..min({first}, {second})")
    estimated = (first + 1) * (second + 1) / (both + 1) - 1
    variance = (
        (first + 1)
        * (second + 1)
        * (first - both)
        * (second - both)
        / ((both + 1) ** 2 * (both + 2))
    )
    return Estimate(first + second - both, estimated, variance)


def frequencies(histories: Iterable[frozenset]) -> Counter:
    """f_k: how many errors were found by exactly k annotators."""
    return Counter(len(finders) for finders in histories)


def chao(f: Mapping[int, int]) -> Estimate | None:
    """Chao's (1987) lower bound and its variance from the frequencies f_k (None when no
    error was found by exactly two annotators)."""
    found = sum(count for k, count in f.items() if k > 0)
    f1, f2 = f.get(1, 0), f.get(2, 0)
    if f2 == 0:
        return None
    ratio = f1 / f2
    variance = f2 * (ratio**4 / 4 + ratio**3 + ratio**2 / 2)
    return Estimate(found, found + f1 * f1 / (2 * f2), variance)


class MtFit(NamedTuple):
    """Model M_t fitted over documents: per document the estimate, and the study's."""

    documents: list[Estimate]
    study: Estimate
    probabilities: dict[Hashable, float]


def _design(captures: Sequence[DocumentCaptures]) -> tuple[list, np.ndarray, np.ndarray]:
    """Annotators, the readers matrix R (documents x annotators) and captures n_dj."""
    annotators = sorted({a for doc in captures for a in doc.readers}, key=repr)
    column = {a: j for j, a in enumerate(annotators)}
    readers = np.zeros((len(captures), len(annotators)))
    caught = np.zeros_like(readers)
    for d, doc in enumerate(captures):
        for annotator in doc.readers:
            readers[d, column[annotator]] = 1
        for _, finders in doc.errors:
            for annotator in finders:
                caught[d, column[annotator]] += 1
    return annotators, readers, caught


def _darroch(found: np.ndarray, readers: np.ndarray, caught: np.ndarray) -> np.ndarray:
    """p_j solving Darroch's equations by iteration (EM for the unseen cell)."""
    exposure = readers.T @ found
    p = np.divide(caught, exposure, out=np.zeros_like(caught), where=exposure > 0)
    p = np.minimum(p, _ALMOST_ONE)
    for _ in range(_MAX_ITERATIONS):
        missed_all = np.exp(readers @ np.log1p(-p))
        totals = np.divide(found, 1 - missed_all, out=np.zeros_like(found), where=found > 0)
        exposure = readers.T @ totals
        updated = np.divide(caught, exposure, out=np.zeros_like(caught), where=exposure > 0)
        updated = np.minimum(updated, _ALMOST_ONE)
        if np.max(np.abs(updated - p), initial=0.0) < _TOLERANCE:
            return updated
        p = updated
    return p


def _missed_variances(
    found: np.ndarray, totals: np.ndarray, missed: np.ndarray, readers: np.ndarray, p: np.ndarray
) -> tuple[np.ndarray, float]:
    """Var(N_d) per document and Var(N) of the study, from the log-linear model's Fisher
    information (alpha_d = log m0_d per document, beta_j = logit p_j per annotator)."""
    active = found > 0
    weight = np.where(active, missed / np.where(active, found, 1), 0.0)  # m0_d / S_d
    cross = readers * totals[:, None] * p[None, :]  # I_alpha_beta[d, j] = N_d p_j R_dj
    info_beta = (readers * totals[:, None]).T @ readers * np.outer(p, p)
    np.fill_diagonal(info_beta, cross.sum(axis=0))
    inverse_alpha = np.where(active, 1 / np.where(active, found, 1), 0.0)
    schur = info_beta - cross.T @ (cross * inverse_alpha[:, None])
    schur_inverse = np.linalg.pinv(schur)
    v = cross * weight[:, None]  # per document: I_beta_alpha I_alpha_alpha^-1 g_d
    per_document = missed**2 * inverse_alpha + np.einsum("dj,jk,dk->d", v, schur_inverse, v)
    u = v.sum(axis=0)
    study = float(np.sum(missed**2 * inverse_alpha) + u @ schur_inverse @ u)
    return per_document + missed, study + float(missed.sum())


def recaptured(captures: Sequence[DocumentCaptures]) -> bool:
    """True when some error was found by two annotators or more (without one, M_t's
    estimate is infinite and Chao's undefined)."""
    return any(len(finders) >= 2 for doc in captures for _, finders in doc.errors)


def loglinear_mt(captures: Sequence[DocumentCaptures]) -> MtFit | None:
    """Model M_t over the documents, annotators' probabilities shared across documents;
    None without a recaptured error (the estimate is infinite)."""
    if not recaptured(captures):
        return None
    annotators, readers, caught = _design(captures)
    found = np.array([len(doc.errors) for doc in captures], dtype=float)
    p = _darroch(found, readers, caught.sum(axis=0))
    missed_all = np.exp(readers @ np.log1p(-p))
    totals = np.divide(found, 1 - missed_all, out=np.zeros_like(found), where=found > 0)
    missed = totals - found
    per_document, study = _missed_variances(found, totals, missed, readers, p)
    documents = [
        Estimate(int(s), float(n), float(v))
        for s, n, v in zip(found, totals, per_document, strict=True)
    ]
    study_estimate = Estimate(int(found.sum()), float(totals.sum()), study)
    return MtFit(documents, study_estimate, dict(zip(annotators, p.tolist(), strict=True)))


def _chapman_of(doc: DocumentCaptures) -> Estimate:
    first, second = sorted(doc.readers, key=repr)
    n1 = sum(first in finders for _, finders in doc.errors)
    n2 = sum(second in finders for _, finders in doc.errors)
    both = sum(first in finders and second in finders for _, finders in doc.errors)
    return chapman(n1, n2, both)


def _summed(estimates: Sequence[Estimate]) -> Estimate:
    return Estimate(
        sum(e.found for e in estimates),
        sum(e.estimated for e in estimates),
        sum(e.variance for e in estimates),
    )


def _row(estimate: Estimate | None, found: int) -> dict[str, Any]:
    """{found, estimated, ci95, share_found} (estimated, ci95, share None without one)."""
    if estimate is None:
        return {"found": found, "estimated": None, "ci95": None, "share_found": None}
    low, high = log_normal_ci(estimate)
    share = 100 * estimate.found / estimate.estimated if estimate.estimated > 0 else None
    return {
        "found": estimate.found,
        "estimated": estimate.estimated,
        "ci95": [low, high],
        "share_found": share,
    }


def choose_method(captures: Sequence[DocumentCaptures]) -> str:
    """`chapman` when every document with two readers or more has exactly two, else
    `loglinear-mt`."""
    counts = {len(doc.readers) for doc in captures if len(doc.readers) >= 2}
    return CHAPMAN if counts == {2} else LOGLINEAR_MT


def _estimates(
    captures: Sequence[DocumentCaptures], method: str
) -> tuple[list[Estimate | None], Estimate | None]:
    """Per document (None with fewer than two readers) and for the study."""
    estimable = [doc for doc in captures if len(doc.readers) >= 2]
    if not estimable:
        return [None] * len(captures), None
    if method == CHAPMAN:
        if any(len(doc.readers) != 2 for doc in estimable):
            raise ValueError("Chapman's estimator needs exactly two annotators per document")
        by_id = {doc.document_id: _chapman_of(doc) for doc in estimable}
        study = _summed(list(by_id.values()))
    elif method == LOGLINEAR_MT:
        fit = loglinear_mt(estimable)
        if fit is None:
            return [None] * len(captures), None
        by_id = dict(zip((doc.document_id for doc in estimable), fit.documents, strict=True))
        study = fit.study
    elif method == CHAO:
        by_id = {doc.document_id: chao(frequencies(f for _, f in doc.errors)) for doc in estimable}
        study = chao(frequencies(f for doc in estimable for _, f in doc.errors))
    else:
        raise ValueError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}")
    return [by_id.get(doc.document_id) for doc in captures], study


def recall_estimate(
    captures: Sequence[DocumentCaptures], method: str | None = None
) -> dict[str, Any]:
    """The recall-estimate JSON: per document, per category and for the study, errors
    found, estimated (with a 95% interval) and the share found (0-100). Documents read by
    fewer than two annotators have no estimate and are left out of the study's; without
    an error found twice there is no estimate (None)."""
    method = method or choose_method(captures)
    per_document, study = _estimates(captures, method)
    estimable = [doc for doc in captures if len(doc.readers) >= 2]
    categories = sorted({c for doc in estimable for c, _ in doc.errors}, key=repr)
    per_category = {}
    for category in categories:
        _, estimate = _estimates([doc.of_category(category) for doc in estimable], method)
        found = sum(c == category for doc in estimable for c, _ in doc.errors)
        per_category[category] = _row(estimate, found)
    return {
        "method": method,
        "documents": [
            {"document_id": doc.document_id, **_row(estimate, len(doc.errors))}
            for doc, estimate in zip(captures, per_document, strict=True)
        ],
        "study": _row(study, sum(len(doc.errors) for doc in estimable)),
        "per_category": per_category,
        "planted": None,
    }


def planted_check(planted: int, captures: Sequence[DocumentCaptures]) -> dict[str, Any]:
    """The `planted` object: the estimate made from the planted errors' captures alone
    (errors the app knows the number of) beside that number."""
    study = recall_estimate(captures)["study"]
    return {"planted": planted, "estimated": study["estimated"], "ci95": study["ci95"]}
