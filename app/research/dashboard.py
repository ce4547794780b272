"""The dashboard's data: a fixed handful of queries, then arithmetic in app.rules.metrics.

Whatever the amount of data, `load_study` runs the same four SELECTs (documents,
paragraphs, sessions with their annotators, live annotations packed per session);
everything else is computed in Python. No
per-row queries: the tests count statements for 2 and 20 documents and expect equality.
Two pure computations are memoised per process, keyed by everything they depend on:
sentence splitting (by document content hash) and each document's agreement figures (by
content hash and the exact live spans of its submitted, read-only sessions). Nothing here
writes: a stale active session is *shown* as abandoned (the assignment code
marks it in the database when it next hands out work). Whether a session holds a place of
its document's quota follows app.crowd.assignment.claims, the rule the assignment uses.

Workers left out (app.crowd.checks.flagged: flagged by attention checks, failed checks or
failed training) keep their rows, sessions and counts, but no figure counts their
sessions (BooookScore, Table 1, alpha, F1, gamma, linked-pair F1, MQM, gold scores)
unless `include_flagged`; `left_out_workers` adds its one query to the four. Annotations
made from a decoy suggestion (`import-suggestions --decoy`) are not loaded: no figure
counts them (study-report's `decoys` reports how often workers took decoys).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property

from sqlalchemy import String, cast, func

from app.adjudication.gamma import Unit, mean_linked_pair_f1
from app.adjudication.gamma_cache import content_key, continuum, defined
from app.core.extensions import db
from app.crowd.assignment.claims import ClaimRule
from app.crowd.checks.flagged import LeftOut, left_out_workers
from app.crowd.paragraph_times import iter_paragraph_records
from app.crowd.settings import EffectiveStudySettings
from app.models import (
    NOT_FROM_DECOY,
    UNIT_ID,
    Annotation,
    AnnotationSession,
    Annotator,
    Document,
    Paragraph,
)
from app.research import mqm, pacing
from app.rules import metrics
from app.rules.intervals import AlphaParts, alpha_parts
from app.rules.metrics import GoldRecall, Sentence
from app.rules.outcomes import OUTCOMES
from app.rules.statuses import SessionStatus
from app.studies import current_study_id
from app.taxonomy import current_taxonomy

SENTENCE_CACHE_SIZE = 50_000
_SENTENCE_CACHE: dict[tuple[int, str, int, str | None], list[Sentence]] = {}
FIGURES_CACHE_SIZE = 20_000
_FIGURES_CACHE: dict[tuple, DocumentFigures] = {}
RECENT_SESSIONS = 100  # the dashboard lists these; document pages and sessions.csv list all


@dataclass
class SessionRow:
    """One annotation session as the dashboard lists it."""

    id: int
    document_id: int
    annotator: str
    status: str  # effective: a stale active session shows as abandoned
    reached: int  # paragraphs reached (furthest + 1)
    started_at: datetime
    seconds: float
    is_check: bool
    holds_place: bool = False  # occupies a place of the quota (app.crowd.assignment.claims)
    flagged: bool = False  # its worker is left out of the figures (app.crowd.checks.flagged)
    outcome: str | None = None  # completed | failed_training | failed_checks | no_consent
    # Prolific's API on the arrival (app.crowd.submissions): verified | unverified | None
    # (not asked)
    verification: str | None = None
    annotations: int = 0
    categories: Counter[str] = field(default_factory=Counter)
    # live spans "p:start:end:category:severity:pp:ps:pe:unit;..." (category empty: none;
    # severity, pp:ps:pe: the severity key and the paired span, or empty; unit: the row's
    # error unit, models.UNIT_ID), kept for submitted sessions
    packed: str = ""

    @cached_property
    def _items(self) -> list[list[str]]:
        return [item.split(":") for item in self.packed.split(";")] if self.packed else []

    @cached_property
    def spans(self) -> list[tuple[int, int, int, str | None]]:
        """Live spans (paragraph_id, start, end, category or None) of a submitted session,
        one per annotation row (a unit with two labels is two rows)."""
        return [(int(p), int(a), int(b), c or None) for p, a, b, c, *_ in self._items]

    @cached_property
    def pairs(self) -> list[tuple[int, int, int] | None]:
        """The paired span of each of `spans` (paragraph_id, start, end), or None."""
        return [(int(p), int(a), int(b)) if p else None for *_, p, a, b, _unit in self._items]

    @cached_property
    def unit_ids(self) -> list[int]:
        """The error unit of each of `spans` (rows of one released span share one)."""
        return [int(item[-1]) for item in self._items]

    @property
    def error_units(self) -> int:
        """The error units of the session: what its BooookScore counts (app.rules.metrics)."""
        return metrics.error_units(self.unit_ids)

    @cached_property
    def units(self) -> list[tuple[tuple[int, int, int], frozenset]]:
        """One (span, categories) per error unit: what span F1 counts."""
        return metrics.error_units_of(self.spans, self.unit_ids)

    @cached_property
    def unit_spans(self) -> list[tuple[int, int, int, str | None]]:
        """One row of `spans` per error unit (its first): what gamma counts."""
        return metrics.unit_rows(self.spans, self.unit_ids)

    @cached_property
    def severities(self) -> list[str | None]:
        """The severity key of each of `spans` (None: none recorded)."""
        return [item[4] or None for item in self._items]


@dataclass
class DocumentRow:
    """One document's progress, error counts and agreement."""

    id: int
    external_id: str
    title: str | None
    paragraph_count: int
    is_check: bool
    gold: list[dict] | None
    content_hash: str = ""
    sentences: list[Sentence] = field(default_factory=list)
    sessions: list[SessionRow] = field(default_factory=list)
    coherence: float | None = None
    error_sentences: float | None = None  # BooookScore's error units, mean over sessions
    alpha: float | None = None
    f1: float | None = None
    f1_same_category: float | None = None
    paragraph_lengths: list[int] = field(default_factory=list)
    figures: DocumentFigures | None = None  # agreement inputs (app.research.agreement_figures)
    gamma: float | None = None  # from analysis_results; None while pending or undefined
    gamma_pending: bool = False
    gamma_mc_se: float | None = None  # gamma's Monte-Carlo standard error
    gamma_skipped: str | None = None  # why gamma was not computed: over a limit (time...)

    @property
    def pair_f1(self) -> float | None:
        """Mean F1 of linked span pairs over annotator pairs (paired categories)."""
        return self.figures.pair_f1 if self.figures else None

    words: int = 0
    # MQM-style severity-weighted errors per 100 words (app/research/mqm.py); None when the
    # taxonomy has no severities or no session is submitted.
    mqm: float | None = None

    @cached_property
    def statuses(self) -> Counter[str]:
        """Sessions per effective status (computed once, after the sessions are attached)."""
        return Counter(session.status for session in self.sessions)

    def count(self, status: str) -> int:
        """Sessions in this (effective) status."""
        return self.statuses[status]

    @property
    def occupied(self) -> int:
        """Places taken: submitted sessions and active ones that hold their place."""
        return sum(session.holds_place for session in self.sessions)

    @cached_property
    def categories(self) -> Counter[str]:
        """Live annotations per category over all sessions."""
        return _total(session.categories for session in self.sessions)

    @property
    def annotations(self) -> int:
        """Live annotations over all sessions."""
        return sum(session.annotations for session in self.sessions)

    @cached_property
    def mean_reached(self) -> float | None:
        """Average paragraphs reached over non-abandoned sessions."""
        return metrics.mean(s.reached for s in self.sessions if s.status != SessionStatus.ABANDONED)


@dataclass
class AnnotatorRow:
    """One worker: what they did and how they did on attention checks."""

    label: str
    sessions: int = 0
    submitted: int = 0
    annotations: int = 0
    seconds: float = 0.0
    categories: Counter[str] = field(default_factory=Counter)
    gold: GoldRecall = metrics.NO_GOLD
    flagged: bool = False  # left out of the figures (app.crowd.checks.flagged)
    reason: str | None = None  # why: failed_checks | failed_training | flagged


@dataclass
class DashboardView:
    """Everything the dashboard shows: the study's documents, sessions and annotators, and the
    figures computed from them (app.research.study_report reports the same)."""

    documents: list[DocumentRow]
    sessions: list[SessionRow]
    annotators: list[AnnotatorRow]
    categories: Counter[str]
    submitted_categories: Counter[str]
    submitted_sentences: int
    pooled_alpha: float | None
    mean_f1: float | None
    mean_coherence: float | None
    left_out: list[LeftOut] = field(default_factory=list)  # workers the figures leave out
    include_flagged: bool = False  # the figures count them all the same

    @cached_property
    def by_id(self) -> dict[int, DocumentRow]:
        """The documents by database id."""
        return {document.id: document for document in self.documents}

    @cached_property
    def statuses(self) -> Counter[str]:
        """Sessions per effective status."""
        return Counter(session.status for session in self.sessions)

    def status_count(self, status: str) -> int:
        """Sessions in this effective status."""
        return self.statuses[status]

    @cached_property
    def places(self) -> Counter[str]:
        """Active sessions that hold their place ("claimed") and that gave it back for want
        of activity or because their page was never loaded ("released")."""
        active = (s for s in self.sessions if s.status == SessionStatus.ACTIVE)
        return Counter("claimed" if s.holds_place else "released" for s in active)

    def over_quota(self, quota: int) -> list[DocumentRow]:
        """Regular documents with more places occupied than the quota: workers who had
        released their place came back after it was given to someone else."""
        return [d for d in self.documents if not d.is_check and d.occupied > quota]

    @cached_property
    def outcomes(self) -> list[tuple[str, int]]:
        """(outcome, sessions) for every outcome some session ended with, in OUTCOMES order."""
        counts = Counter(session.outcome for session in self.sessions if session.outcome)
        return [(outcome, counts[outcome]) for outcome in OUTCOMES if counts[outcome]]

    @property
    def unverified(self) -> int:
        """Sessions let in while Prolific's API did not answer (app.crowd.submissions)."""
        return sum(1 for session in self.sessions if session.verification == "unverified")

    @property
    def recent_sessions(self) -> list[SessionRow]:
        """The most recently started sessions, for the dashboard's table."""
        return self.sessions[:RECENT_SESSIONS]

    @property
    def excluded(self) -> list[str]:
        """External ids of the attention checks, which no study figure counts."""
        return [document.external_id for document in self.documents if document.is_check]

    @property
    def excluded_annotators(self) -> list[LeftOut]:
        """The workers whose sessions no study figure counts (none with include_flagged)."""
        return [] if self.include_flagged else self.left_out

    def counted(self, session: SessionRow) -> bool:
        """Whether the study's figures count this session's worker (app.crowd.checks.flagged)."""
        return _counted(session, self.include_flagged)

    @cached_property
    def excluded_annotator_ids(self) -> set[int]:
        """Database ids of `excluded_annotators`."""
        return {worker.annotator_id for worker in self.excluded_annotators}

    @property
    def errors_per_sentence(self) -> dict[str, float]:
        """BooookScore Table 1 rates over submitted sessions (attention checks left out)."""
        return metrics.errors_per_sentence(self.submitted_categories, self.submitted_sentences)


def load_study(
    settings: EffectiveStudySettings,
    now: datetime | None = None,
    document_id: int | None = None,
    id_prefix: str | None = None,
    include_flagged: bool = False,
    document_ids: Collection[int] | None = None,
    left_out: Mapping[int, LeftOut] | None = None,
) -> DashboardView:
    """Query the study (one document, some documents by database id - a page of the
    dashboard's table, app.research.document_table - or those whose id starts with
    id_prefix): every figure, without the sessions of workers left out unless
    `include_flagged` (`left_out`: app.crowd.checks.flagged's answer, when the caller has
    it already)."""
    now = now or datetime.now(UTC)
    ids = [document_id] if document_id is not None else document_ids
    if ids is not None:
        ids = sorted(ids)
    documents = _documents(ids)
    sessions = _sessions(settings, now, ids)
    if left_out is None:
        left_out = left_out_workers(settings)
    left_out = list(left_out.values())
    flagged = {worker.label for worker in left_out}
    for session in sessions:
        session.flagged = session.annotator in flagged
    # Practice documents (app.crowd.training) are no part of the study: no figure, no row.
    practice = set(current_taxonomy().training.documents)
    if id_prefix or practice:
        documents = {
            k: d
            for k, d in documents.items()
            if d.external_id.startswith(id_prefix or "") and d.external_id not in practice
        }
        sessions = [session for session in sessions if session.document_id in documents]
    by_session = {session.id: session for session in sessions}
    _add_annotations(by_session, ids)
    for session in sessions:
        documents[session.document_id].sessions.append(session)
    weights = current_taxonomy().severity_weights
    study = _compute(list(documents.values()), sessions, weights, include_flagged)
    study.left_out, study.include_flagged = left_out, include_flagged
    reasons = {worker.label: worker.reason for worker in left_out}
    for row in study.annotators:
        row.reason = reasons.get(row.label)
        row.flagged = row.reason is not None
    study.annotators.sort(key=lambda r: (not r.flagged, r.label))
    return study


def _documents(ids: list[int] | None) -> dict[int, DocumentRow]:
    query = (
        db.select(
            Document.id,
            Document.external_id,
            Document.title,
            Document.paragraph_count,
            Document.gold,
            Document.content_hash,
            Document.language,
        )
        .where(Document.study_id == current_study_id())
        .order_by(Document.external_id)
    )
    texts = (
        db.select(Paragraph.document_id, Paragraph.text)
        .join(Document, Document.id == Paragraph.document_id)
        .where(Document.study_id == current_study_id())
        .order_by(Paragraph.document_id, Paragraph.position)
    )
    if ids is not None:
        query = query.where(Document.id.in_(ids))
        texts = texts.where(Paragraph.document_id.in_(ids))
    rows: dict[int, DocumentRow] = {}
    hashes: dict[int, str] = {}
    languages: dict[int, str | None] = {}
    for doc_id, external_id, title, count, gold, content_hash, language in db.session.execute(
        query
    ):
        rows[doc_id] = DocumentRow(
            doc_id, external_id, title, count, bool(gold), gold or None, content_hash
        )
        hashes[doc_id] = content_hash
        languages[doc_id] = language
    paragraphs: dict[int, list[str]] = defaultdict(list)
    for doc_id, text in db.session.execute(texts):
        paragraphs[doc_id].append(text)
    for doc_id, row in rows.items():
        row.sentences = _sentences(
            doc_id, hashes[doc_id], paragraphs.get(doc_id, []), languages[doc_id]
        )
        row.words = mqm.word_count(paragraphs.get(doc_id, []))
        row.paragraph_lengths = [len(text) for text in paragraphs.get(doc_id, [])]
    return rows


def _sentences(
    document_id: int, content_hash: str, paragraphs: list[str], language: str | None
) -> list[Sentence]:
    # Splitting is a pure function of the stored text (which the content hash identifies)
    # and the language: remember it per process (bounded) rather than re-split every
    # document on every view.
    key = (document_id, content_hash, len(paragraphs), language)
    sentences = _SENTENCE_CACHE.get(key)
    if sentences is None:
        if len(_SENTENCE_CACHE) >= SENTENCE_CACHE_SIZE:
            _SENTENCE_CACHE.clear()
        sentences = _SENTENCE_CACHE[key] = metrics.document_sentences(paragraphs, language)
    return sentences


def _sessions(
    settings: EffectiveStudySettings,
    now: datetime,
    ids: list[int] | None,
    limit: int | None = None,
) -> list[SessionRow]:
    query = (
        db.select(
            AnnotationSession.id,
            AnnotationSession.document_id,
            Annotator.platform,
            Annotator.external_id,
            AnnotationSession.status,
            AnnotationSession.furthest,
            AnnotationSession.started_at,
            AnnotationSession.last_seen_at,
            AnnotationSession.page_loaded_at,
            AnnotationSession.submitted_at,
            AnnotationSession.is_attention_check,
            AnnotationSession.outcome,
            AnnotationSession.worked_at,
            AnnotationSession.verification,
        )
        .join(Annotator, Annotator.id == AnnotationSession.annotator_id)
        .where(AnnotationSession.study_id == current_study_id())
        .order_by(AnnotationSession.started_at.desc(), AnnotationSession.id.desc())
    )
    if ids is not None:
        query = query.where(AnnotationSession.document_id.in_(ids))
    if limit is not None:
        query = query.limit(limit)
    cutoff = settings.abandoned_before(now)
    rule = ClaimRule.at(now, settings.claim_minutes)
    rows = []
    for (
        sid,
        doc_id,
        platform,
        ext_id,
        status,
        furthest,
        started,
        seen,
        loaded,
        submitted,
        check,
        outcome,
        worked,
        verification,
    ) in db.session.execute(query):
        if status == SessionStatus.ACTIVE and seen < cutoff:
            status = SessionStatus.ABANDONED
        ended = submitted or seen
        rows.append(
            SessionRow(
                id=sid,
                document_id=doc_id,
                annotator=f"{platform}:{ext_id}",
                status=status,
                reached=furthest + 1,
                started_at=started,
                seconds=max((ended - started).total_seconds(), 0.0),
                is_check=bool(check),
                holds_place=rule.occupies(status, loaded, seen, started, worked),
                outcome=outcome,
                verification=verification,
            )
        )
    return rows


def load_recent(
    settings: EffectiveStudySettings, now: datetime
) -> list[tuple[SessionRow, DocumentRow]]:
    """The RECENT_SESSIONS most recently started sessions with their documents (the
    dashboard's table of sessions), in three statements whatever the study's size."""
    sessions = _sessions(settings, now, None, limit=RECENT_SESSIONS)
    documents = _documents(sorted({session.document_id for session in sessions}))
    practice = set(current_taxonomy().training.documents)
    shown = [s for s in sessions if documents[s.document_id].external_id not in practice]
    _add_annotations({s.id: s for s in shown}, sorted({s.document_id for s in shown}))
    return [(session, documents[session.document_id]) for session in shown]


def _add_annotations(by_session: dict[int, SessionRow], ids: list[int] | None) -> None:
    """Live annotations, one row per session with its spans packed "p:start:end:category;..."
    by the database: a few thousand strings travel instead of a row per annotation."""
    packed = (
        cast(Annotation.paragraph_id, String)
        + ":"
        + cast(Annotation.span_start, String)
        + ":"
        + cast(Annotation.span_end, String)
        + ":"
        + func.coalesce(Annotation.category, "")
        + ":"
        + func.coalesce(Annotation.severity, "")
        + ":"
        + func.coalesce(cast(Annotation.paired_paragraph_id, String), "")
        + ":"
        + func.coalesce(cast(Annotation.paired_start, String), "")
        + ":"
        + func.coalesce(cast(Annotation.paired_end, String), "")
        + ":"
        + cast(UNIT_ID, String)
    )
    query = (
        db.select(Annotation.session_id, func.aggregate_strings(packed, ";"))
        .where(Annotation.deleted_at.is_(None), NOT_FROM_DECOY)
        .group_by(Annotation.session_id)
    )
    if ids is None:
        query = query.join(AnnotationSession).where(
            AnnotationSession.study_id == current_study_id()
        )
    else:
        # By the sessions' ids (the study's, as loaded), not their documents': PostgreSQL
        # then reads these sessions' rows through the (session_id, ...) index instead of
        # scanning every annotation or hashing every session of the study.
        query = query.where(Annotation.session_id.in_(sorted(by_session)))
    for session_id, spans in db.session.execute(query):
        session = by_session.get(session_id)
        if session is None or not spans:
            continue
        items = spans.split(";")
        # A row without a category (an imported error without a label) is in none.
        session.categories.update(c for item in items if (c := item.split(":")[3]))
        session.annotations = len(items)
        if session.status == SessionStatus.SUBMITTED:
            session.packed = spans  # parsed only if its document's figures are not memoised


def _counted(session: SessionRow, include_flagged: bool) -> bool:
    return include_flagged or not session.flagged


def _compute(
    documents: list[DocumentRow],
    sessions: list[SessionRow],
    weights: dict[str, float],
    include_flagged: bool = False,
) -> DashboardView:
    # Attention checks (documents with gold spans) measure the workers, not the texts: every
    # study figure leaves them out; their rows still show their own figures. Sessions of
    # workers left out (app.crowd.checks.flagged) count in no figure, unless include_flagged.
    value_counts: list[tuple[int, int]] = []
    all_submitted: list[SessionRow] = []
    submitted_sentences = 0
    for document in documents:
        submitted = [
            s
            for s in document.sessions
            if s.status == SessionStatus.SUBMITTED and _counted(s, include_flagged)
        ]
        figures = document.figures = _document_figures(document, submitted)
        document.coherence, document.alpha, document.f1 = (
            figures.coherence,
            figures.alpha,
            figures.f1,
        )
        document.f1_same_category = figures.f1_same_category
        document.error_sentences = figures.error_sentences
        readings = [session.severities for session in submitted]
        document.mqm = mqm.document_mqm(readings, weights, document.words)
        if document.is_check:
            continue
        value_counts.extend(figures.value_counts)
        all_submitted.extend(submitted)
        submitted_sentences += len(document.sentences) * len(submitted)
    regular = [d for d in documents if not d.is_check]
    return DashboardView(
        documents=documents,
        sessions=sessions,
        annotators=_annotators(documents, sessions),
        categories=_total(session.categories for session in sessions),
        submitted_categories=_total(session.categories for session in all_submitted),
        submitted_sentences=submitted_sentences,
        pooled_alpha=metrics.krippendorff_alpha(value_counts),
        mean_f1=metrics.mean(d.f1 for d in regular),
        mean_coherence=metrics.mean(d.coherence for d in regular),
    )


@dataclass(frozen=True)
class DocumentFigures:
    """Agreement and BooookScore of one document over its submitted sessions."""

    coherence: float | None  # BooookScore (0-1 here), mean over the submitted sessions
    error_sentences: float | None  # error units, mean over the submitted sessions
    value_counts: list[tuple[int, int]]
    alpha: float | None
    f1: float | None
    f1_same_category: float | None = None
    alpha_parts: AlphaParts = (0.0, 0, 0)
    pair_f1: float | None = None
    gamma_units: list[Unit] = field(default_factory=list)  # the continuum, for gamma
    gamma_annotators: list[str] = field(default_factory=list)
    gamma_key: str | None = None  # content_key of the continuum; None: gamma undefined


def _document_figures(document: DocumentRow, submitted: list[SessionRow]) -> DocumentFigures:
    # Submitted sessions are read-only (the API refuses changes), so these figures are a pure
    # function of the text (content hash) and the submitted sessions' exact live spans: the
    # key holds both, so any change to either is a new key, never a stale answer.
    key = (
        document.id,
        document.content_hash,
        len(document.sentences),
        tuple((session.id, session.packed) for session in submitted),
    )
    figures = _FIGURES_CACHE.get(key)
    if figures is not None:
        return figures
    # Span F1 counts one span per error unit (a released span with two labels is one).
    readings = [metrics.Reading.of_units(session.units) for session in submitted]
    masks = metrics.sentence_masks(document.sentences) if readings else []
    labels = [reading.labels_from_masks(masks) for reading in readings]
    counts = metrics.label_value_counts(labels)
    sentences = len(document.sentences)
    scores = [metrics.booookscore(sentences, session.error_units) for session in submitted]
    figures = DocumentFigures(
        coherence=metrics.mean(None if score is None else score / 100 for score in scores),
        error_sentences=metrics.mean(session.error_units for session in submitted),
        value_counts=counts,
        alpha=metrics.krippendorff_alpha(counts),
        f1=metrics.mean_pairwise_f1(readings),
        f1_same_category=metrics.mean_pairwise_f1(readings, same_category=True),
        alpha_parts=alpha_parts(counts),
        **_boundary_inputs(document, submitted),
    )
    if len(_FIGURES_CACHE) >= FIGURES_CACHE_SIZE:
        _FIGURES_CACHE.clear()
    _FIGURES_CACHE[key] = figures
    return figures


def _boundary_inputs(document: DocumentRow, submitted: list[SessionRow]) -> dict:
    """Linked-pair F1 and the gamma continuum (with its cache key) of one document."""
    annotators = sorted({session.annotator for session in submitted})
    linked: dict[str, list[tuple]] = defaultdict(list)
    for session in submitted:
        for (p, start, end, category), pair in zip(session.spans, session.pairs, strict=True):
            if pair is not None:
                linked[session.annotator].append(((p, start, end), pair, category))
    # Gamma counts one unit per error unit (its first row's category; no category: "").
    units = continuum(
        document.paragraph_lengths,
        (
            (session.annotator, [(p, a, b, c or "") for p, a, b, c in session.unit_spans])
            for session in submitted
        ),
    )
    return {
        "pair_f1": mean_linked_pair_f1(linked, annotators) if len(annotators) >= 2 else None,
        "gamma_units": units,
        "gamma_annotators": annotators,
        "gamma_key": content_key(units, annotators) if defined(units, annotators) else None,
    }


def _total(counters: Iterable[Counter[str]]) -> Counter[str]:
    """The sum of many small counters, without building one intermediate Counter each."""
    total: dict[str, int] = defaultdict(int)
    for counter in counters:
        for key, count in counter.items():
            total[key] += count
    return Counter(total)


def _annotators(documents: list[DocumentRow], sessions: list[SessionRow]) -> list[AnnotatorRow]:
    """Each worker's counts and gold score on attention checks (load_study marks the ones
    left out, by app.crowd.checks.flagged's rule)."""
    gold = {d.id: d.gold for d in documents if d.gold}
    rows: dict[str, AnnotatorRow] = {}
    for session in sessions:
        row = rows.setdefault(session.annotator, AnnotatorRow(session.annotator))
        row.sessions += 1
        row.submitted += session.status == SessionStatus.SUBMITTED
        row.annotations += session.annotations
        row.seconds += session.seconds
        row.categories.update(session.categories)
        if session.status == SessionStatus.SUBMITTED and session.document_id in gold:
            row.gold += metrics.gold_recall(gold[session.document_id], session.spans)
    return list(rows.values())


def load_pacing(study: DashboardView, limit: float | None) -> pacing.PacingSummary:
    """Reading pace of the submitted sessions (app/research/pacing.py): rushing, fatigue."""
    labels = {str(session.id): session.annotator for session in study.sessions}
    counts = {document.external_id: document.paragraph_count for document in study.documents}
    rows = (
        pacing.ParagraphTime(
            row["session_id"],
            row["document_id"],
            row["paragraph_id"],
            row["seconds_visible"],
            row["annotations"],
            row["words"],
        )
        for row in iter_paragraph_records(submitted_only=True)
    )
    return pacing.summarise(rows, labels, counts, limit)
