"""Which document a crowd worker gets from GET /start.

Rules, in order:
1. A worker with an *active* session resumes it (the one seen most recently), also when
   it had released its place for want of activity (app.assignment.claims): the worker
   keeps their work and takes the place back, over the quota if need be.
2. A worker whose session was marked abandoned resumes it when its document still has a
   free place (their annotations are kept either way).
3. Otherwise the worker gets a new document they have never had a session for (in any
   status). Regular documents are filled evenly: the one with the fewest *occupied*
   places (submitted sessions and active ones that hold their place: the claim rule of
   app.assignment.claims) below the quota (`annotators_per_document`), ties broken by
   the lower document id, so every document reaches its quota before any gets more and
   none exceeds it.
4. Attention checks (documents with gold spans) are not bound by the quota: their purpose
   is to check workers, not to collect annotations. A worker gets one, if one is left that
   they have not done, when the study's check sessions are below the configured share of
   all occupied sessions counting this one: ``checks < share * (occupied + 1)``. This
   deterministic rule keeps the share exact over a study's arrivals one after another (a
   worker-level share would give a check to every worker who does only one document);
   workers arriving in the same instant may each get one.
5. When no regular document has a free place for this worker, there is no task, even if
   attention checks remain: checks alone collect nothing.

Abandonment: an active session not seen for `abandon_after_minutes` is marked
'abandoned', lazily, each time an assignment is made; its annotations stay in the
database and in exports. (It released its place long before, after `claim_minutes`.)

Concurrency: decisions are serialised per document, not globally: arrivals that end on
different documents never wait for each other, and simultaneous arrivals cannot both
take the last place of a document (nor can one worker's double click take two).
- PostgreSQL: a transaction-level advisory lock on the worker's identity comes first (one
  decision per worker at a time). The documents are ranked from one snapshot query (their
  occupied places and this worker's sessions, read without a lock); then the best one's
  row is locked with `SELECT ... FOR NO KEY UPDATE SKIP LOCKED` and its occupied places
  are counted again under the lock (read committed: the count sees every session
  committed by the arrivals that held the lock before). A free place is taken by
  inserting the session and committing, which releases the locks. A full document is
  passed over for the next one, and so is a document locked by another arrival; only
  when every document with room was locked does the decision wait for them, in turn,
  after giving back the locks it took (a savepoint rolled back), so that no two
  decisions ever wait for each other. A lock lasts a few statements. `NO KEY UPDATE`,
  not `UPDATE`: it does not block the foreign-key checks of sessions inserted for the
  document by /annotate/<document>.
- SQLite has one writer at a time anyway: `BEGIN IMMEDIATE` takes the database's write
  lock before the first read, and the whole decision runs under it.

Cost: a study's link is opened by many workers at once, so a decision is a handful of
statements and one commit (see bench/start_burst.py): the abandonment marks are one
autocommit UPDATE, the snapshot one query, and a worker who gets no task writes nothing
(not even an annotator row).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from sqlalchemy import func, insert, select, text, update

from app.annotate.sessions import start_or_resume_session
from app.assignment.claims import ClaimRule
from app.extensions import db
from app.identity import WorkerIdentity, get_or_create_annotator
from app.models import AnnotationSession, Annotator, Document
from app.persistence import autocommit_connection
from app.study import EffectiveStudySettings, as_utc, study_settings
from app.taxonomy import current_taxonomy

SESSIONS = AnnotationSession.__table__
DOCUMENTS = Document.__table__
ANNOTATORS = Annotator.__table__

Place = Literal["taken", "full", "busy"]


@dataclass(frozen=True)
class Candidate:
    """A document the worker could get, with the places it already has occupied."""

    document_id: int
    occupied: int
    is_check: bool


@dataclass(frozen=True)
class DocumentState:
    """One row of the snapshot: a document, its occupied places, this worker's session."""

    document_id: int
    is_check: bool
    occupied: int
    my_status: str | None  # the worker's session on it, if any (at most one)
    my_seen: datetime | None


@dataclass(frozen=True)
class Assignment:
    """Where /start sends the worker: the page of this session."""

    token: str


class DecisionLocks:
    """The locks of one assignment decision on the session's database (see Concurrency)."""

    def __init__(self) -> None:
        self.per_document = db.session.get_bind().dialect.name == "postgresql"
        self.before_documents = None

    def lock_worker(self, identity: WorkerIdentity) -> None:
        """Before the decision's first read: PostgreSQL, this worker's advisory lock;
        SQLite, the database's write lock."""
        if self.per_document:
            key = func.hashtextextended(f"{identity.platform}:{identity.external_id}", 0)
            db.session.execute(select(func.pg_advisory_xact_lock(key)))
        else:
            db.session.commit()  # SQLite cannot BEGIN IMMEDIATE inside an open transaction
            db.session.execute(text("BEGIN IMMEDIATE"))

    def take_place(self, document_id: int, quota: int, rule: ClaimRule, *, wait: bool) -> Place:
        """Whether the document has a free place now; "taken" leaves it locked until the
        caller commits. "busy": another arrival holds it (only when not `wait`)."""
        if not self.per_document:
            return "taken" if occupied_places_of(document_id, rule) < quota else "full"
        if wait:
            self.release_documents()  # never wait while holding a document's lock
        if self.before_documents is None:
            self.before_documents = db.session.begin_nested()
        locked = db.session.execute(
            select(DOCUMENTS.c.id)
            .where(DOCUMENTS.c.id == document_id)
            .with_for_update(key_share=True, skip_locked=not wait)
        ).first()
        if locked is None:
            return "busy"
        return "taken" if occupied_places_of(document_id, rule) < quota else "full"

    def release_documents(self) -> None:
        """Give back the locks of the documents tried so far (rolls back their savepoint)."""
        if self.before_documents is not None:
            self.before_documents.rollback()
            self.before_documents = None


def mark_abandoned(settings: EffectiveStudySettings, now: datetime | None = None) -> int:
    """Mark active sessions not seen within the timeout 'abandoned'; returns how many.

    One statement in autocommit on PostgreSQL: it holds its row locks for no longer
    than itself (no decision waits for another's marks)."""
    cutoff = settings.abandoned_before(now)
    result = autocommit_connection().execute(
        update(SESSIONS)
        .where(SESSIONS.c.status == "active", SESSIONS.c.last_seen_at < cutoff)
        .values(status="abandoned")
    )
    return result.rowcount or 0


def occupied_places(rule: ClaimRule) -> Counter[int]:
    """Per document id: the sessions that occupy one of its places (the claim rule)."""
    query = (
        select(SESSIONS.c.document_id, func.count())
        .where(rule.condition(SESSIONS.c))
        .group_by(SESSIONS.c.document_id)
    )
    return Counter({document_id: count for document_id, count in db.session.execute(query)})


def occupied_places_of(document_id: int, rule: ClaimRule) -> int:
    """The sessions that occupy one of this document's places (the claim rule)."""
    query = select(func.count(SESSIONS.c.id)).where(
        SESSIONS.c.document_id == document_id, rule.condition(SESSIONS.c)
    )
    return db.session.scalar(query) or 0


def snapshot(rule: ClaimRule, annotator_id: int | None) -> list[DocumentState]:
    """Every document with its occupied places and this worker's session, in one query
    (read without a lock: the place is checked again under the document's lock)."""
    mine = SESSIONS.c.annotator_id == (annotator_id or -1)
    query = (
        select(
            DOCUMENTS.c.id,
            DOCUMENTS.c.gold,
            func.count(SESSIONS.c.id).filter(rule.condition(SESSIONS.c)),
            func.max(SESSIONS.c.status).filter(mine),
            func.max(SESSIONS.c.last_seen_at).filter(mine),
        )
        .select_from(DOCUMENTS.outerjoin(SESSIONS, SESSIONS.c.document_id == DOCUMENTS.c.id))
        .group_by(DOCUMENTS.c.id)
    )
    return [
        DocumentState(doc_id, bool(gold), occupied, status, as_utc(seen))
        for doc_id, gold, occupied, status, seen in db.session.execute(query)
    ]


def rank_documents(
    candidates: list[Candidate],
    quota: int,
    check_share: float,
    checks_so_far: int,
    occupied_so_far: int,
) -> list[int]:
    """Pure rules 3-5 above: the document ids to try, best first; empty when no task."""

    def fewest_first(pool):
        return sorted(pool, key=lambda c: (c.occupied, c.document_id))

    regular = fewest_first(c for c in candidates if not c.is_check and c.occupied < quota)
    if not regular:
        return []
    checks = fewest_first(c for c in candidates if c.is_check)
    pool = regular
    if checks and checks_so_far < check_share * (occupied_so_far + 1):
        pool = checks
    return [c.document_id for c in pool]


def choose_document(
    candidates: list[Candidate],
    quota: int,
    check_share: float,
    checks_so_far: int,
    occupied_so_far: int,
) -> int | None:
    """The document id rules 3-5 hand out when nothing else arrives meanwhile, or None."""
    ranked = rank_documents(candidates, quota, check_share, checks_so_far, occupied_so_far)
    return ranked[0] if ranked else None


def assign(identity: WorkerIdentity, now: datetime | None = None) -> Assignment | None:
    """The session this worker should work in (resumed or new); None when no task is left."""
    settings = study_settings()
    now = now or datetime.now(UTC)
    rule = ClaimRule.at(now, settings.claim_minutes)
    quota = settings.annotators_per_document
    mark_abandoned(settings, now)
    locks = DecisionLocks()
    locks.lock_worker(identity)
    annotator_id = db.session.scalar(
        select(ANNOTATORS.c.id).where(
            ANNOTATORS.c.platform == identity.platform,
            ANNOTATORS.c.external_id == identity.external_id,
        )
    )
    documents = snapshot(rule, annotator_id)
    for state in _resumable(documents, quota):
        if state.my_status == "active" or state.is_check:
            return _resume(state.document_id, identity)
        if locks.take_place(state.document_id, quota, rule, wait=True) == "taken":
            return _resume(state.document_id, identity)
        locks.release_documents()

    checks = [d for d in documents if d.is_check]
    ranked = rank_documents(
        [Candidate(d.document_id, d.occupied, d.is_check) for d in documents if not d.my_status],
        quota=quota,
        check_share=settings.attention_check_share,
        checks_so_far=sum(d.occupied for d in checks),
        occupied_so_far=sum(d.occupied for d in documents),
    )
    is_check = {d.document_id for d in checks}
    busy = []
    for document_id in ranked:
        place = "taken" if document_id in is_check else None
        place = place or locks.take_place(document_id, quota, rule, wait=False)
        if place == "taken":
            return _new_session(document_id, document_id in is_check, identity)
        if place == "busy":
            busy.append(document_id)
    for document_id in busy:  # every document with room was being decided on: wait
        if locks.take_place(document_id, quota, rule, wait=True) == "taken":
            return _new_session(document_id, False, identity)
    db.session.commit()  # nothing was written: ends the transaction, releases the locks
    return None


def _resumable(documents: list[DocumentState], quota: int) -> list[DocumentState]:
    """Rules 1-2: the worker's sessions to resume, best first (the caller checks an
    abandoned one's place again under its document's lock)."""

    def seen(state: DocumentState) -> datetime:
        return state.my_seen or datetime.min.replace(tzinfo=UTC)

    active = [d for d in documents if d.my_status == "active"]
    if active:
        return [max(active, key=seen)]
    abandoned = [
        d for d in documents if d.my_status == "abandoned" and (d.is_check or d.occupied < quota)
    ]
    return sorted(abandoned, key=seen, reverse=True)


def _resume(document_id: int, identity: WorkerIdentity) -> Assignment:
    session = start_or_resume_session(db.session.get(Document, document_id), identity)
    return Assignment(session.token)


def _new_session(document_id: int, is_check: bool, identity: WorkerIdentity) -> Assignment:
    """Insert the worker's session on the document (its place is locked) and commit."""
    annotator_id = get_or_create_annotator(identity).id
    token = db.session.execute(
        insert(SESSIONS)
        .values(
            document_id=document_id,
            annotator_id=annotator_id,
            platform=identity.platform,
            platform_params=dict(identity.params),
            taxonomy_version=current_taxonomy().version,
            is_attention_check=is_check,
        )
        .returning(SESSIONS.c.token)
    ).scalar_one()
    db.session.commit()
    return Assignment(token)
