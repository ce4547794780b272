"""The dashboard's per-document table and study counts, paged, sorted and filtered in SQL.

A 10,000-document study cannot send one row per document, nor load every session and
annotation to count them: the dashboard asks the database for

- `study_counts`: documents, attention checks, sessions per effective status (an active
  session idle past `abandon_after_minutes` counts as abandoned, as app.research.dashboard
  shows it), places held and released (app.crowd.assignment.claims' `holds_place`),
  outcomes, unverified arrivals and the documents over quota: GROUP BY aggregates, a few
  rows whatever the study's size;
- `document_page`: one page (PAGE_SIZE rows) of documents in the order and with the
  filter the researcher asked for (`TableQuery`, from the query string), and how many
  documents match. The page's own figures (BooookScore, alpha, F1, gamma, ...) are then
  loaded for those documents only (`load_study(document_ids=...)`).

Sortable columns are the ones the database counts: document id, places, submitted,
active, abandoned, annotations. A bad page, sort or filter is never an error page: it is
ignored, and `TableQuery.notes` says what was ignored and why (the page shows them).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from math import ceil
from typing import Any

from sqlalchemy import Integer, and_, case, func, literal, select

from app.core.extensions import db
from app.crowd.assignment.claims import ClaimRule, holds_place
from app.crowd.settings import EffectiveStudySettings
from app.models import NOT_FROM_DECOY, Annotation, AnnotationSession, Document
from app.rules.outcomes import OUTCOMES
from app.rules.statuses import SessionStatus
from app.studies import current_study_id
from app.taxonomy import current_taxonomy

PAGE_SIZE = 50
MAX_SEARCH = 200  # characters of ?q= (an external id is at most 200)
SORTS = ("document", "places", "submitted", "active", "abandoned", "annotations")
DIRECTIONS = ("asc", "desc")
FILTERS = {
    "all": "all documents",
    "open": "documents with a place left",
    "full": "documents whose places are all taken",
    "over-quota": "documents over quota",
    "in-progress": "documents with an active session",
    "checks": "attention checks",
    "flagged": "documents with a session of a worker left out",
}


@dataclass
class TableQuery:
    """The table's page, order and filter, as asked in the query string and checked."""

    page: int = 1
    sort: str = "document"
    direction: str = "asc"
    filter: str = "all"
    search: str = ""
    notes: list[str] = field(default_factory=list)  # what was ignored, and why

    @classmethod
    def from_args(cls, args: Any) -> TableQuery:
        """Read ?page=, ?sort= (a column, `-column` for descending), ?filter= and ?q=;
        what is not valid is ignored with a note."""
        query = cls()
        page = args.get("page", "")
        if page:
            if page.isdigit() and 0 < int(page) < 10**9:
                query.page = int(page)
            else:
                query.notes.append("page must be a whole number from 1: showing page 1")
        sort = args.get("sort", "")
        if sort:
            name = sort.removeprefix("-")
            if name in SORTS:
                query.sort, query.direction = name, "desc" if sort.startswith("-") else "asc"
            else:
                query.notes.append(f"sort must be one of {', '.join(SORTS)}: sorted by document")
        chosen = args.get("filter", "")
        if chosen:
            if chosen in FILTERS:
                query.filter = chosen
            else:
                query.notes.append(f"filter must be one of {', '.join(FILTERS)}: showing all")
        search = args.get("q", "").strip()
        if len(search) > MAX_SEARCH:
            query.notes.append(f"the search is at most {MAX_SEARCH} characters: ignored")
        else:
            query.search = search
        return query

    def args(self, **changes: Any) -> dict[str, Any]:
        """The query string of this view with some changes (links to other pages or
        orders), leaving out what is the default."""
        values = {
            "page": self.page,
            "sort": self.sort if self.direction == "asc" else f"-{self.sort}",
            "filter": self.filter,
            "q": self.search,
        } | changes
        defaults = {"page": 1, "sort": "document", "filter": "all", "q": ""}
        return {k: v for k, v in values.items() if v != defaults[k]}

    def sort_link(self, column: str) -> dict[str, Any]:
        """The query string that sorts by `column`: ascending, or descending when it is
        the current ascending order; back to page 1."""
        flip = column == self.sort and self.direction == "asc"
        return self.args(sort=f"-{column}" if flip else column, page=1)

    def aria_sort(self, column: str) -> str | None:
        """The column header's aria-sort: ascending / descending on the sorted column."""
        if column != self.sort:
            return None
        return "ascending" if self.direction == "asc" else "descending"


@dataclass(frozen=True)
class DocumentPage:
    """One page of the table: the documents' ids in order, how many match, the pages."""

    ids: list[int]
    total: int
    page: int
    pages: int
    size: int = PAGE_SIZE

    @property
    def first(self) -> int:
        """The 1-based position of the page's first row (0 on an empty table)."""
        return (self.page - 1) * self.size + 1 if self.total else 0

    @property
    def last(self) -> int:
        """The 1-based position of the page's last row."""
        return min(self.page * self.size, self.total)

    def window(self, around: int = 2) -> list[int | None]:
        """Page numbers to link: the first, the last and `around` either side of the
        current one; None where pages are skipped."""
        shown = {1, self.pages} | set(range(self.page - around, self.page + around + 1))
        numbers: list[int | None] = []
        for number in sorted(n for n in shown if 1 <= n <= self.pages):
            if numbers and numbers[-1] is not None and number - numbers[-1] > 1:
                numbers.append(None)
            numbers.append(number)
        return numbers


def _not_practice():
    practice = list(current_taxonomy().training.documents)
    return Document.external_id.not_in(practice) if practice else literal(True)


def _is_check():
    return Document.gold.is_not(None)


def _effective_status(settings: EffectiveStudySettings, now: datetime):
    """The session's status as the dashboard shows it: active but idle past the abandon
    cutoff is abandoned (app.research.dashboard._sessions)."""
    idle = and_(
        AnnotationSession.status == SessionStatus.ACTIVE,
        AnnotationSession.last_seen_at < settings.abandoned_before(now),
    )
    return case((idle, literal(SessionStatus.ABANDONED)), else_=AnnotationSession.status)


def _session_counts(settings: EffectiveStudySettings, now: datetime):
    """Per document: submitted, active, abandoned (effective) and places held."""
    status = _effective_status(settings, now)

    def count(condition):
        return func.sum(case((condition, 1), else_=0)).label(None)

    return (
        select(
            AnnotationSession.document_id.label("document_id"),
            count(status == SessionStatus.SUBMITTED).label("submitted"),
            count(status == SessionStatus.ACTIVE).label("active"),
            count(status == SessionStatus.ABANDONED).label("abandoned"),
            count(holds_place(AnnotationSession)).label("places"),
        )
        .where(AnnotationSession.study_id == current_study_id())
        .group_by(AnnotationSession.document_id)
        .subquery("session_counts")
    )


def _annotation_counts():
    """Live annotations per document (what the table's Annotations column counts)."""
    return (
        select(
            AnnotationSession.document_id.label("document_id"),
            func.count(Annotation.id).label("annotations"),
        )
        .join(Annotation, Annotation.session_id == AnnotationSession.id)
        .where(
            AnnotationSession.study_id == current_study_id(),
            Annotation.deleted_at.is_(None),
            NOT_FROM_DECOY,
        )
        .group_by(AnnotationSession.document_id)
        .subquery("annotation_counts")
    )


def document_page(
    settings: EffectiveStudySettings,
    query: TableQuery,
    now: datetime,
    left_out_ids: set[int],
) -> DocumentPage:
    """The page of document ids `query` asks for (a page past the end: the last one) and
    how many documents match its filter and search. Two statements (three when sorted or
    filtered by annotations' count)."""
    counts = _session_counts(settings, now)
    quota = settings.annotators_per_document
    zero = literal(0, Integer)
    columns = {
        "places": func.coalesce(counts.c.places, zero),
        "submitted": func.coalesce(counts.c.submitted, zero),
        "active": func.coalesce(counts.c.active, zero),
        "abandoned": func.coalesce(counts.c.abandoned, zero),
    }
    conditions = [Document.study_id == current_study_id(), _not_practice()]
    regular = ~_is_check()
    match query.filter:
        case "open":
            conditions += [regular, columns["places"] < quota]
        case "full":
            conditions += [regular, columns["places"] >= quota]
        case "over-quota":
            conditions += [regular, columns["places"] > quota]
        case "in-progress":
            conditions.append(columns["active"] > 0)
        case "checks":
            conditions.append(_is_check())
        case "flagged":
            conditions.append(
                Document.id.in_(
                    select(AnnotationSession.document_id).where(
                        AnnotationSession.study_id == current_study_id(),
                        AnnotationSession.annotator_id.in_(sorted(left_out_ids) or [-1]),
                    )
                )
            )
    if query.search:
        pattern = "%" + _escape_like(query.search.lower()) + "%"
        conditions.append(func.lower(Document.external_id).like(pattern, escape="\\"))
    base = select(Document.id).outerjoin(counts, counts.c.document_id == Document.id)
    if query.sort == "annotations":
        annotations = _annotation_counts()
        base = base.outerjoin(annotations, annotations.c.document_id == Document.id)
        columns["annotations"] = func.coalesce(annotations.c.annotations, zero)
    base = base.where(*conditions)
    params = ClaimRule.at(now, settings.claim_minutes).params()
    total = db.session.scalar(select(func.count()).select_from(base.subquery()), params) or 0
    pages = max(1, ceil(total / PAGE_SIZE))
    if query.page > pages:
        query.notes.append(f"there are {pages} page{'s' if pages != 1 else ''}: showing the last")
        query.page = pages
    key = Document.external_id if query.sort == "document" else columns[query.sort]
    order = key.asc() if query.direction == "asc" else key.desc()
    ids = db.session.scalars(
        base.order_by(order, Document.external_id.asc())
        .limit(PAGE_SIZE)
        .offset((query.page - 1) * PAGE_SIZE),
        params,
    ).all()
    return DocumentPage(list(ids), total, query.page, pages)


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


@dataclass
class StudyCounts:
    """The study's counts the dashboard shows above its tables (all documents)."""

    documents: int = 0
    checks: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    places: Counter[str] = field(default_factory=Counter)  # active: claimed / released
    sessions: int = 0
    outcomes: list[tuple[str, int]] = field(default_factory=list)
    unverified: int = 0
    over_quota: list[str] = field(default_factory=list)  # external ids

    def status_count(self, status: str) -> int:
        """Sessions in this effective status."""
        return self.statuses[status]


def study_counts(settings: EffectiveStudySettings, now: datetime) -> StudyCounts:
    """The study's counts in four aggregate statements, whatever its size."""
    result = StudyCounts()
    documents = select(func.count(), func.sum(case((_is_check(), 1), else_=0))).where(
        Document.study_id == current_study_id(), _not_practice()
    )
    result.documents, checks = db.session.execute(documents).one()
    result.checks = checks or 0
    status = _effective_status(settings, now).label("status")
    held = holds_place(AnnotationSession).label("held")
    sessions = (
        select(
            status,
            held,
            AnnotationSession.outcome,
            func.sum(case((AnnotationSession.verification == "unverified", 1), else_=0)),
            func.count(),
        )
        .join(Document, Document.id == AnnotationSession.document_id)
        .where(AnnotationSession.study_id == current_study_id(), _not_practice())
        .group_by(status, held, AnnotationSession.outcome)
    )
    rule = ClaimRule.at(now, settings.claim_minutes)
    outcomes: Counter[str] = Counter()
    for state, holds, outcome, unverified, count in db.session.execute(sessions, rule.params()):
        result.statuses[state] += count
        result.sessions += count
        result.unverified += unverified or 0
        if state == SessionStatus.ACTIVE:
            result.places["claimed" if holds else "released"] += count
        if outcome:
            outcomes[outcome] += count
    result.outcomes = [(o, outcomes[o]) for o in OUTCOMES if outcomes[o]]
    counts = _session_counts(settings, now)
    over = (
        select(Document.external_id)
        .join(counts, counts.c.document_id == Document.id)
        .where(
            Document.study_id == current_study_id(),
            ~_is_check(),
            _not_practice(),
            counts.c.places > settings.annotators_per_document,
        )
        .order_by(Document.external_id)
    )
    result.over_quota = list(db.session.scalars(over, rule.params()))
    return result
