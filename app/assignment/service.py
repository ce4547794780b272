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
- PostgreSQL: the worker's annotator row is locked first (one decision per worker at a
  time). The documents are ranked from counts read without a lock; then the best one's
  row is locked with `SELECT ... FOR NO KEY UPDATE SKIP LOCKED` in a savepoint and its
  occupied places are counted again under the lock (read committed: the count sees every
  session committed by the arrivals that held the lock before). A free place is taken by
  inserting the session and committing, which releases the locks; a full document's lock
  is released at once (the savepoint is rolled back) and the next one is tried; a
  document locked by another arrival is skipped for the next one, and only when every
  document with room was locked does the decision wait for them, in turn (a lock lasts a
  few statements). `NO KEY UPDATE`, not `UPDATE`: it does not block the foreign-key
  checks of sessions inserted for the document by /annotate/<document>.
- SQLite has one writer at a time anyway: `BEGIN IMMEDIATE` takes the database's write
  lock before the first read, and the whole decision runs under it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from sqlalchemy import func, text, update

from app.annotate.sessions import start_or_resume_session
from app.assignment.claims import ClaimRule
from app.extensions import db
from app.identity import WorkerIdentity, get_or_create_annotator
from app.models import AnnotationSession, Annotator, Document
from app.study import EffectiveStudySettings, as_utc, study_settings

Place = Literal["taken", "full", "busy"]


@dataclass(frozen=True)
class Candidate:
    """A document the worker could get, with the places it already has occupied."""

    document_id: int
    occupied: int
    is_check: bool


class DecisionLocks:
    """The locks of one assignment decision on the session's database (see Concurrency)."""

    def __init__(self) -> None:
        self.per_document = db.session.get_bind().dialect.name == "postgresql"

    def lock_database(self) -> None:
        """SQLite: take the write lock before the decision's first read."""
        if not self.per_document:
            db.session.commit()  # SQLite cannot BEGIN IMMEDIATE inside an open transaction
            db.session.execute(text("BEGIN IMMEDIATE"))

    def lock_worker(self, annotator_id: int) -> None:
        """PostgreSQL: commit what came before, then hold this worker's row until the end."""
        if self.per_document:
            db.session.commit()
            db.session.execute(
                db.select(Annotator.id)
                .where(Annotator.id == annotator_id)
                .with_for_update(key_share=True)
            )

    def take_place(self, document_id: int, quota: int, rule: ClaimRule, *, wait: bool) -> Place:
        """Whether the document has a free place now; "taken" leaves it locked until the
        caller commits. "busy": another arrival holds it (only when not `wait`)."""
        if not self.per_document:
            return "taken" if occupied_places_of(document_id, rule) < quota else "full"
        savepoint = db.session.begin_nested()
        locked = db.session.execute(
            db.select(Document.id)
            .where(Document.id == document_id)
            .with_for_update(key_share=True, skip_locked=not wait)
        ).first()
        if locked is not None and occupied_places_of(document_id, rule) < quota:
            savepoint.commit()  # RELEASE SAVEPOINT: the transaction keeps the row lock
            return "taken"
        savepoint.rollback()  # releases the row lock at once
        return "busy" if locked is None else "full"


def mark_abandoned(settings: EffectiveStudySettings, now: datetime | None = None) -> int:
    """Mark active sessions not seen within the timeout 'abandoned'; returns how many."""
    cutoff = settings.abandoned_before(now)
    result = db.session.execute(
        update(AnnotationSession)
        .where(AnnotationSession.status == "active", AnnotationSession.last_seen_at < cutoff)
        .values(status="abandoned")
        .execution_options(synchronize_session=False)
    )
    return result.rowcount or 0


def occupied_places(rule: ClaimRule) -> Counter[int]:
    """Per document id: the sessions that occupy one of its places (the claim rule)."""
    query = (
        db.select(AnnotationSession.document_id, func.count())
        .where(rule.condition(AnnotationSession))
        .group_by(AnnotationSession.document_id)
    )
    return Counter({document_id: count for document_id, count in db.session.execute(query)})


def occupied_places_of(document_id: int, rule: ClaimRule) -> int:
    """The sessions that occupy one of this document's places (the claim rule)."""
    query = db.select(func.count(AnnotationSession.id)).where(
        AnnotationSession.document_id == document_id, rule.condition(AnnotationSession)
    )
    return db.session.scalar(query) or 0


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


def assign(identity: WorkerIdentity, now: datetime | None = None) -> AnnotationSession | None:
    """The session this worker should work in (resumed or new); None when no task is left."""
    settings = study_settings()
    now = now or datetime.now(UTC)
    rule = ClaimRule.at(now, settings.claim_minutes)
    quota = settings.annotators_per_document
    locks = DecisionLocks()
    locks.lock_database()
    mark_abandoned(settings, now)
    annotator = get_or_create_annotator(identity)
    locks.lock_worker(annotator.id)
    own = db.session.scalars(
        db.select(AnnotationSession).where(AnnotationSession.annotator_id == annotator.id)
    ).all()
    occupied = occupied_places(rule)
    for session in _resumable(own, occupied, quota):
        document = session.document
        if session.status == "active" or document.is_attention_check:
            return start_or_resume_session(document, identity)
        if locks.take_place(document.id, quota, rule, wait=True) == "taken":
            return start_or_resume_session(document, identity)

    taken = {session.document_id for session in own}
    documents = db.session.execute(db.select(Document.id, Document.gold)).all()
    check_ids = {doc_id for doc_id, gold in documents if gold}
    candidates = [
        Candidate(doc_id, occupied[doc_id], doc_id in check_ids)
        for doc_id, _gold in documents
        if doc_id not in taken
    ]
    ranked = rank_documents(
        candidates,
        quota=quota,
        check_share=settings.attention_check_share,
        checks_so_far=sum(occupied[doc_id] for doc_id in check_ids),
        occupied_so_far=sum(occupied.values()),
    )
    busy = []
    for document_id in ranked:
        place = "taken" if document_id in check_ids else None
        place = place or locks.take_place(document_id, quota, rule, wait=False)
        if place == "taken":
            return start_or_resume_session(db.session.get(Document, document_id), identity)
        if place == "busy":
            busy.append(document_id)
    for document_id in busy:  # every document with room was being decided on: wait
        if locks.take_place(document_id, quota, rule, wait=True) == "taken":
            return start_or_resume_session(db.session.get(Document, document_id), identity)
    db.session.commit()  # keep the abandonment marks and the new annotator; release locks
    return None


def _resumable(
    own: list[AnnotationSession], occupied: Counter[int], quota: int
) -> list[AnnotationSession]:
    """Rules 1-2: the worker's sessions to resume, best first (the caller checks an
    abandoned one's place again under its document's lock)."""

    def seen(session: AnnotationSession) -> datetime:
        return as_utc(session.last_seen_at) or datetime.min.replace(tzinfo=UTC)

    active = [s for s in own if s.status == "active"]
    if active:
        return [max(active, key=seen)]
    abandoned = [
        s
        for s in own
        if s.status == "abandoned"
        and (s.document.is_attention_check or occupied[s.document_id] < quota)
    ]
    return sorted(abandoned, key=seen, reverse=True)
