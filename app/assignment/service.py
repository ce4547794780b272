"""Which document a crowd worker gets from GET /start.

Rules, in order:
1. A worker with an *active* session resumes it (the one seen most recently).
2. A worker whose session was marked abandoned resumes it when its document still has a
   free place (their annotations are kept either way).
3. Otherwise the worker gets a new document they have never had a session for (in any
   status). Regular documents are filled evenly: the one with the fewest *occupied*
   places (submitted + active sessions) below the quota (`annotators_per_document`), ties
   broken by the lower document id, so every document reaches its quota before any gets
   more and none exceeds it.
4. Attention checks (documents with gold spans) are not bound by the quota: their purpose
   is to check workers, not to collect annotations. A worker gets one, if one is left that
   they have not done, when the study's check sessions are below the configured share of
   all occupied sessions counting this one: ``checks < share * (occupied + 1)``. This
   deterministic rule keeps the share exact over the study (a worker-level share would
   give a check to every worker who does only one document).
5. When no regular document has a free place for this worker, there is no task, even if
   attention checks remain: checks alone collect nothing.

Abandonment: an active session not seen for `abandon_after_minutes` no longer holds a
place. It is marked 'abandoned' lazily, each time an assignment is made; its annotations
stay in the database and in exports.

Concurrency: the whole decision runs under one lock, so simultaneous arrivals cannot
both take the last place of a document. PostgreSQL: a transaction-level advisory lock
(`pg_advisory_xact_lock`), released by the commit that stores the new session. SQLite:
`BEGIN IMMEDIATE` takes the database's single write lock before the first read.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import func, text, update

from app.annotate.sessions import start_or_resume_session
from app.extensions import db
from app.identity import WorkerIdentity, get_or_create_annotator
from app.models import AnnotationSession, Document
from app.study import EffectiveStudySettings, as_utc, study_settings

# Any fixed 64-bit number; it names this lock among the database's advisory locks.
ASSIGNMENT_LOCK_KEY = 0x46414C5445  # "FALTE"
OCCUPYING = ("active", "submitted")


@dataclass(frozen=True)
class Candidate:
    """A document the worker could get, with the places it already has occupied."""

    document_id: int
    occupied: int
    is_check: bool


def lock_assignments() -> None:
    """Serialise assignment decisions until the current transaction ends."""
    db.session.commit()  # SQLite cannot BEGIN IMMEDIATE inside an open transaction
    dialect = db.session.get_bind().dialect.name
    if dialect == "postgresql":
        db.session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": ASSIGNMENT_LOCK_KEY})
    elif dialect == "sqlite":
        db.session.execute(text("BEGIN IMMEDIATE"))


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


def occupied_places() -> Counter[int]:
    """Per document id: its submitted + active sessions."""
    query = (
        db.select(AnnotationSession.document_id, func.count())
        .where(AnnotationSession.status.in_(OCCUPYING))
        .group_by(AnnotationSession.document_id)
    )
    return Counter({document_id: count for document_id, count in db.session.execute(query)})


def choose_document(
    candidates: list[Candidate],
    quota: int,
    check_share: float,
    checks_so_far: int,
    occupied_so_far: int,
) -> int | None:
    """Pure rule 3-5 above: the document id to hand out, or None when there is no task."""
    regular = [c for c in candidates if not c.is_check and c.occupied < quota]
    if not regular:
        return None
    checks = [c for c in candidates if c.is_check]
    pool = regular
    if checks and checks_so_far < check_share * (occupied_so_far + 1):
        pool = checks
    best = min(pool, key=lambda c: (c.occupied, c.document_id))
    return best.document_id


def assign(identity: WorkerIdentity, now: datetime | None = None) -> AnnotationSession | None:
    """The session this worker should work in (resumed or new); None when no task is left."""
    settings = study_settings()
    now = now or datetime.now(UTC)
    lock_assignments()
    mark_abandoned(settings, now)
    annotator = get_or_create_annotator(identity)
    own = db.session.scalars(
        db.select(AnnotationSession).where(AnnotationSession.annotator_id == annotator.id)
    ).all()
    occupied = occupied_places()
    resumable = _resumable(own, occupied, settings.annotators_per_document)
    if resumable is not None:
        return start_or_resume_session(resumable.document, identity)

    taken = {session.document_id for session in own}
    documents = db.session.execute(db.select(Document.id, Document.gold)).all()
    check_ids = {doc_id for doc_id, gold in documents if gold}
    candidates = [
        Candidate(doc_id, occupied[doc_id], doc_id in check_ids)
        for doc_id, _gold in documents
        if doc_id not in taken
    ]
    chosen = choose_document(
        candidates,
        quota=settings.annotators_per_document,
        check_share=settings.attention_check_share,
        checks_so_far=sum(occupied[doc_id] for doc_id in check_ids),
        occupied_so_far=sum(occupied.values()),
    )
    if chosen is None:
        db.session.commit()  # keep the abandonment marks and the new annotator
        return None
    document = db.session.get(Document, chosen)
    return start_or_resume_session(document, identity)


def _resumable(
    own: list[AnnotationSession], occupied: Counter[int], quota: int
) -> AnnotationSession | None:
    def seen(session: AnnotationSession) -> datetime:
        return as_utc(session.last_seen_at) or datetime.min.replace(tzinfo=UTC)

    active = [s for s in own if s.status == "active"]
    if active:
        return max(active, key=seen)
    abandoned = [
        s
        for s in own
        if s.status == "abandoned"
        and (s.document.is_attention_check or occupied[s.document_id] < quota)
    ]
    return max(abandoned, key=seen) if abandoned else None
