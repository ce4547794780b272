"""Which document a crowd worker gets from GET /start.

The arrival has been admitted before (app.crowd.submissions.admit, from GET /start): platform
placeholders refused, a Prolific arrival's STUDY_ID checked against the study's, its
submission verified with Prolific's API or bound to the participant (first binding wins).

Rules (rule 6 is applied first, rule 7 last):
1. An arrival with a platform submission (Prolific's SESSION_ID, MTurk's assignmentId:
   app.crowd.submissions) resumes that submission's session, whatever its step, and no other
   session of the worker: one submission, one session. Without one it gets a new document
   (rules 3-5): the worker's other sessions belong to other submissions. Any other worker
   with an *active* session resumes it (the one seen most recently), also when
   it had released its place for want of activity (app.crowd.assignment.claims): the worker
   keeps their work and takes the place back, over the quota if need be.
2. A worker whose session was marked abandoned resumes it when its document still has a
   free place (their annotations are kept either way).
3. Otherwise the worker gets a new document they have never had a session for (in any
   status) and that is not retired (`documents.retired_at`: retired in the console, its
   sessions go on and it stays in the exports). Regular documents are filled evenly:
   the one with the fewest *occupied* places (submitted sessions and active ones that
   hold their place: the claim rule of app.crowd.assignment.claims) below the quota
   (`annotators_per_document`), ties broken by the lower document id, so every document
   reaches its quota before any gets more and none exceeds it.
4. Attention checks (documents with gold spans) are not bound by the quota: their purpose
   is to check workers, not to collect annotations. A worker gets one, if one is left that
   they have not done, when the study's check sessions are below the configured share of
   all occupied sessions counting this one: ``checks < share * (occupied + 1)``. This
   deterministic rule keeps the share exact over a study's arrivals one after another (a
   worker-level share would give a check to every worker who does only one document);
   workers arriving in the same instant may each get one.
5. When no regular document has a free place for this worker, there is no task, even if
   attention checks remain: checks alone collect nothing.
6. A worker flagged by attention checks (app.crowd.checks.flagged: a `failed_checks` outcome,
   or their submitted checks below the thresholds) gets no new document: /start shows
   them the study's end (`Stopped`), with the study's `failed_checks` completion address
   for a Prolific worker when it has one. A reopened submission still resumes its own
   session at its step (rule 1: its end page shows that session's outcome). Looked up
   only for a worker the snapshot shows with a submitted attention check, so every other
   arrival costs no statement more.
7. A new session needs room in the worker's client network (`study: max_open_per_network`
   open sessions at most, app.crowd.networks), else PlaceRefused (a 429 page); resuming needs
   none. A session that ended before the task (no_consent, failed_training) never
   becomes active again nor takes a place: resuming it (rule 2) leads to its end page.

Abandonment: an active session not seen for `abandon_after_minutes` is marked
'abandoned', lazily, each time an assignment is made; its annotations stay in the
database and in exports. (It released its place long before, after `claim_minutes`.)

Concurrency: decisions are serialised per document, not globally: arrivals that end on
different documents never wait for each other, and simultaneous arrivals cannot both
take the last place of a document (nor can one worker's double click take two).
- PostgreSQL: a transaction-level advisory lock on the worker's identity comes first (one
  decision per worker at a time), after one on their client network when it is capped
  (one decision per network at a time: its count of open sessions is exact). The
  documents are ranked from one snapshot query (their occupied places and this worker's
  sessions, read without a lock); then the best one's
  row is locked with `SELECT ... FOR NO KEY UPDATE SKIP LOCKED` and its occupied places
  are counted again under the lock (read committed: the count sees every session
  committed by the arrivals that held the lock before). A free place is taken by
  inserting the session and committing, which releases the locks. A full document is
  passed over for the next one, and so is a document locked by another arrival; only
  when every document with room was locked does the decision wait for them, in turn,
  and before it waits it gives back every lock it holds (a rollback; then the worker's
  lock again), so no two decisions ever wait for each other. A lock lasts a few
  statements. `NO KEY UPDATE`, not `UPDATE`: it does not block the foreign-key checks of
  sessions inserted for the document by /annotate/<document>.
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

from sqlalchemy import (
    Boolean,
    and_,
    bindparam,
    case,
    func,
    insert,
    literal_column,
    null,
    select,
    text,
    update,
)

from app.core.extensions import db
from app.core.persistence import autocommit_connection, end_orm_transaction
from app.crowd.assignment.claims import ClaimRule, holds_place
from app.crowd.checks.flagged import flagged_by_checks
from app.crowd.identity import WorkerIdentity
from app.crowd.networks import (
    NETWORK,
    PlaceRefused,
    capped_network,
    has_room,
    lock_network,
    room_params,
)
from app.crowd.sessions import (
    DOCUMENT_STUDY,
    inherits_failures,
    new_session_values,
    resume_session,
    start_or_resume_session,
    worker_failure,
)
from app.crowd.settings import EffectiveStudySettings, study_settings
from app.crowd.submissions import submission_session
from app.models import AnnotationSession, Annotator, Document, new_completion_code, new_token
from app.rules.outcomes import CODE_PLACEHOLDER, completion_address
from app.rules.statuses import SessionStatus
from app.studies import current_study_id, remember_session_version
from app.taxonomy import current_taxonomy

SESSIONS = AnnotationSession.__table__
DOCUMENTS = Document.__table__
ANNOTATORS = Annotator.__table__

Place = Literal["taken", "full", "busy"]

# The statements are built once: each request only binds its values.
_WORKER = (
    select(ANNOTATORS.c.id)
    .where(
        ANNOTATORS.c.platform == bindparam("platform"),
        ANNOTATORS.c.external_id == bindparam("external_id"),
    )
    .scalar_subquery()
)
_MINE = SESSIONS.c.annotator_id == _WORKER
_SNAPSHOT = (
    select(
        DOCUMENTS.c.id,
        DOCUMENTS.c.gold,
        DOCUMENTS.c.retired_at.is_not(None),  # retired: resumed, never handed out anew
        func.count(SESSIONS.c.id).filter(holds_place(SESSIONS.c)),
        func.max(SESSIONS.c.status).filter(_MINE),  # a worker has one session per document
        func.max(SESSIONS.c.last_seen_at).filter(_MINE),
        _WORKER,
    )
    .select_from(DOCUMENTS.outerjoin(SESSIONS, SESSIONS.c.document_id == DOCUMENTS.c.id))
    # Practice documents (the taxonomy's `training:`) are never handed out (app.crowd.training).
    .where(
        DOCUMENTS.c.study_id == bindparam("study_id"),
        DOCUMENTS.c.external_id.not_in(bindparam("training_ids", expanding=True)),
    )
    .group_by(DOCUMENTS.c.id)
)
_OCCUPIED = (
    select(SESSIONS.c.document_id, func.count())
    .where(holds_place(SESSIONS.c))
    .group_by(SESSIONS.c.document_id)
)
_OCCUPIED_OF = select(func.count(SESSIONS.c.id)).where(
    SESSIONS.c.document_id == bindparam("document_id"), holds_place(SESSIONS.c)
)
_LOCK_DOCUMENT = {
    skip: select(DOCUMENTS.c.id)
    .where(DOCUMENTS.c.id == bindparam("document_id"))
    .with_for_update(key_share=True, skip_locked=skip)  # FOR NO KEY UPDATE [SKIP LOCKED]
    for skip in (True, False)
}
_WORKER_LOCK = func.pg_advisory_xact_lock(func.hashtextextended(bindparam("worker"), 0))
# A capped worker's network first, then the worker: every decision takes them in this order.
_LOCK_WORKER = {False: select(_WORKER_LOCK), True: select(lock_network(), _WORKER_LOCK)}
_MARK_ABANDONED = (
    update(SESSIONS)
    .where(SESSIONS.c.status == SessionStatus.ACTIVE, SESSIONS.c.last_seen_at < bindparam("cutoff"))
    .values(status=SessionStatus.ABANDONED)
)
_MY_SESSIONS = select(SESSIONS.c.document_id, SESSIONS.c.status).where(
    SESSIONS.c.annotator_id == _WORKER, SESSIONS.c.study_id == bindparam("study_id")
)
_SUBMISSION_OF = select(SESSIONS.c.id).where(
    _MINE, SESSIONS.c.submission == bindparam("submission")
)
_NEW_ANNOTATOR = insert(ANNOTATORS).returning(ANNOTATORS.c.id)
# A worker who failed in the study: the new session ends at once with that outcome
# (sessions.worker_failure).
_INHERIT = bindparam("inherit", type_=Boolean)
_FAILURE = worker_failure(
    bindparam("worker_id", type_=SESSIONS.c.annotator_id.type), DOCUMENT_STUDY
)
_ACTIVE = literal_column(f"'{SessionStatus.ACTIVE}'")
_ENDED = literal_column(f"'{SessionStatus.ABANDONED}'")
_NEW_SESSION_VALUES = {
    **{
        name: bindparam(name, type_=SESSIONS.c[name].type)
        for name in (
            "token",
            "completion_code",
            "document_id",
            "annotator_id",
            "platform",
            "platform_params",
            "taxonomy_version",
            "is_attention_check",
            "submission",
            "verification",
            "started_at",
            "last_seen_at",
        )
    },
    "outcome": case((_INHERIT, _FAILURE), else_=null()),
    "status": case((and_(_INHERIT, _FAILURE.is_not(None)), _ENDED), else_=_ACTIVE),
    "study_id": DOCUMENT_STUDY,  # a session belongs to its document's study
    "position": literal_column("0"),
    "furthest": literal_column("0"),
    "network": NETWORK,
}
# The session, unless the worker's network holds its cap of open sessions (app.crowd.networks):
# under the network's lock (PostgreSQL) or the database's (SQLite), so the count is exact.
_NEW_SESSION = (
    insert(SESSIONS)
    .from_select(list(_NEW_SESSION_VALUES), select(*_NEW_SESSION_VALUES.values()).where(has_room()))
    .returning(SESSIONS.c.id, SESSIONS.c.token)
)


@dataclass(frozen=True)
class DocumentOption:
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
    my_status: str | None  # the worker's session on it, if any
    my_seen: datetime | None
    retired: bool = False  # retired in the console: no new sessions (rule 3)


@dataclass(frozen=True)
class Assignment:
    """Where /start sends the worker: the page of this session."""

    id: int
    token: str


@dataclass(frozen=True)
class Stopped:
    """Rule 6: the worker's attention checks flagged them; nothing more in this study."""

    exit_url: str | None  # the study's failed_checks completion address, if any


class DecisionLocks:
    """The locks of one worker's assignment decision (see Concurrency above)."""

    def __init__(self, identity: WorkerIdentity, rule: ClaimRule, network: str | None) -> None:
        self.worker = f"{identity.platform}:{identity.external_id}"
        self.network = network
        self.params = rule.params()
        self.per_document = db.session.get_bind().dialect.name == "postgresql"
        self.holding = False  # some document's row lock

    def lock_worker(self) -> None:
        """Before the decision's first read: PostgreSQL, this worker's advisory lock (a
        hash of the identity: two workers may share one, and then wait a moment), after
        their network's when it is capped (app.crowd.networks); SQLite, the database's write
        lock."""
        if self.per_document:
            params = {"worker": self.worker, "network": self.network}
            db.session.execute(_LOCK_WORKER[self.network is not None], params)
        else:
            db.session.commit()  # SQLite cannot BEGIN IMMEDIATE inside an open transaction
            db.session.execute(text("BEGIN IMMEDIATE"))

    def take_place(self, document_id: int, quota: int, *, wait: bool) -> Place:
        """Whether the document has a free place now; "taken" leaves it locked until the
        caller commits. "busy": another arrival holds it (only when not `wait`)."""
        if self.per_document:
            if wait and self.holding:  # never wait while holding a lock
                db.session.rollback()
                self.holding = False
                self.lock_worker()
            lock = _LOCK_DOCUMENT[not wait]
            if db.session.execute(lock, {"document_id": document_id}).first() is None:
                return "busy"
            self.holding = True
        occupied = db.session.scalar(_OCCUPIED_OF, {"document_id": document_id, **self.params})
        return "taken" if occupied < quota else "full"


def mark_abandoned(settings: EffectiveStudySettings, now: datetime | None = None) -> int:
    """Mark active sessions not seen within the timeout 'abandoned'; returns how many.

    One statement in autocommit on PostgreSQL: it holds its row locks for no longer
    than itself (no decision waits for another's marks)."""
    result = autocommit_connection().execute(
        _MARK_ABANDONED, {"cutoff": settings.abandoned_before(now)}
    )
    return result.rowcount or 0


def occupied_places(rule: ClaimRule) -> Counter[int]:
    """Per document id: the sessions that occupy one of its places (the claim rule)."""
    rows = db.session.execute(_OCCUPIED, rule.params())
    return Counter({document_id: count for document_id, count in rows})


def snapshot(
    rule: ClaimRule, identity: WorkerIdentity, connection=None
) -> tuple[list[DocumentState], int | None]:
    """Every document with its occupied places and this worker's session on it, and the
    worker's annotator id (None when new), in one query (on `connection`, else the ORM
    session). Read without a lock: a place is checked again under its document's lock."""
    rows = (
        (connection or db.session)
        .execute(
            _SNAPSHOT,
            {
                "platform": identity.platform,
                "external_id": identity.external_id,
                "study_id": current_study_id(),
                "training_ids": list(current_taxonomy().training.documents),
                **rule.params(),
            },
        )
        .all()
    )
    documents = [
        DocumentState(doc_id, bool(gold), occupied, status, seen, bool(retired))
        for doc_id, gold, retired, occupied, status, seen, _worker in rows
    ]
    return documents, rows[0][6] if rows else None


def rank_documents(
    candidates: list[DocumentOption],
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
    candidates: list[DocumentOption],
    quota: int,
    check_share: float,
    checks_so_far: int,
    occupied_so_far: int,
) -> int | None:
    """The document id rules 3-5 hand out when nothing else arrives meanwhile, or None."""
    ranked = rank_documents(candidates, quota, check_share, checks_so_far, occupied_so_far)
    return ranked[0] if ranked else None


@dataclass(frozen=True)
class Plan:
    """What rules 1-5 make of a snapshot."""

    active: int | None  # the document of the session to resume (rule 1)
    abandoned: list[int]  # documents of abandoned sessions to resume if there is room
    ranked: list[int]  # new documents to try, best first
    checks: frozenset[int]  # attention checks (not bound by the quota)
    mine: dict[int, str]  # the worker's sessions: document id -> status

    @property
    def empty(self) -> bool:
        """No task for this worker."""
        return self.active is None and not self.abandoned and not self.ranked


def plan(
    documents: list[DocumentState], settings: EffectiveStudySettings, resume: bool = True
) -> Plan:
    """Rules 1-5 applied to a snapshot; rules 3-5 only when not `resume` (an arrival with
    a platform submission: it resumes its own session only, app.crowd.submissions)."""
    quota = settings.annotators_per_document
    resumable = _resumable(documents, quota) if resume else []
    active = [d.document_id for d in resumable if d.my_status == SessionStatus.ACTIVE]
    checks = [d for d in documents if d.is_check]
    ranked = rank_documents(
        [
            DocumentOption(d.document_id, d.occupied, d.is_check)
            for d in documents
            if not d.my_status and not d.retired
        ],
        quota=quota,
        check_share=settings.attention_check_share,
        checks_so_far=sum(d.occupied for d in checks),
        occupied_so_far=sum(d.occupied for d in documents),
    )
    return Plan(
        active=active[0] if active else None,
        abandoned=[d.document_id for d in resumable if d.my_status == SessionStatus.ABANDONED],
        ranked=ranked,
        checks=frozenset(d.document_id for d in checks),
        mine={d.document_id: d.my_status for d in documents if d.my_status},
    )


def assign(identity: WorkerIdentity, now: datetime | None = None) -> Assignment | Stopped | None:
    """The session this worker should work in (resumed or new); None when no task is left;
    Stopped for a worker flagged by attention checks (rule 6).
    PlaceRefused when a new session would exceed the cap of the worker's client network
    (app.crowd.networks, rule 7).

    The snapshot is read in autocommit: a worker who resumes an active session or gets
    no task takes no lock and writes nothing. An arrival with a platform submission that
    has no session yet (app.crowd.submissions found none) gets a new document: the worker's
    other sessions belong to other submissions."""
    settings = study_settings()
    now = now or datetime.now(UTC)
    quota = settings.annotators_per_document
    rule = ClaimRule.at(now, settings.claim_minutes)
    mark_abandoned(settings, now)
    resume = identity.submission is None
    documents, annotator_id = snapshot(rule, identity, autocommit_connection())
    own = submission_session(identity)
    if own is not None:  # reopened: the submission's session, at its step (rule 1)
        return _resume_session(own.id, identity)
    checked = any(d.is_check and d.my_status == SessionStatus.SUBMITTED for d in documents)
    if checked and annotator_id is not None and flagged_by_checks(settings, annotator_id):
        stopped = Stopped(_failed_checks_exit(settings, identity, annotator_id))
        end_orm_transaction()
        return stopped
    todo = plan(documents, settings, resume)
    if todo.active is not None:
        return _resume(todo.active, identity)
    if todo.empty:
        end_orm_transaction()
        return None
    network = capped_network(identity.platform)
    locks = DecisionLocks(identity, rule, network)
    locks.lock_worker()
    params = {"platform": identity.platform, "external_id": identity.external_id}
    mine = {**params, "study_id": current_study_id()}
    if dict(db.session.execute(_MY_SESSIONS, mine).all()) != todo.mine:
        # Another request of this worker decided meanwhile: decide again, from now.
        if identity.submission is not None:
            mine = db.session.scalar(_SUBMISSION_OF, {**params, "submission": identity.submission})
            if mine is not None:  # the submission's session, made meanwhile
                return _resume_session(mine, identity)
        documents, annotator_id = snapshot(rule, identity)
        todo = plan(documents, settings, resume)
        if todo.active is not None:
            return _resume(todo.active, identity)
    for document_id in todo.abandoned:
        place = "taken" if document_id in todo.checks else None
        if (place or locks.take_place(document_id, quota, wait=True)) == "taken":
            return _resume(document_id, identity)
    busy = []
    for document_id in todo.ranked:
        place = "taken" if document_id in todo.checks else None
        place = place or locks.take_place(document_id, quota, wait=False)
        if place == "taken":
            return _new_session(
                document_id, document_id in todo.checks, identity, annotator_id, network, now
            )
        if place == "busy":
            busy.append(document_id)
    for document_id in busy:  # every document with room was being decided on: wait
        if locks.take_place(document_id, quota, wait=True) == "taken":
            return _new_session(document_id, False, identity, annotator_id, network, now)
    db.session.commit()  # nothing was written: ends the transaction, releases the locks
    return None


def _failed_checks_exit(
    settings: EffectiveStudySettings, identity: WorkerIdentity, annotator_id: int
) -> str | None:
    """Where a flagged Prolific worker goes: the study's failed_checks completion address
    ({code}: the code of their latest submitted attention check); None elsewhere, as
    app.crowd.sessions.exit_url sends only Prolific workers to completion URLs."""
    template = settings.completion_template("failed_checks")
    if identity.platform != "prolific" or not template:
        return None
    code = ""
    if CODE_PLACEHOLDER in template:
        code = db.session.scalar(
            select(AnnotationSession.completion_code)
            .where(
                AnnotationSession.annotator_id == annotator_id,
                AnnotationSession.is_attention_check.is_(True),
                AnnotationSession.status == SessionStatus.SUBMITTED,
            )
            .order_by(AnnotationSession.submitted_at.desc(), AnnotationSession.id.desc())
            .limit(1)
        )
    return completion_address(template, code or "")


def _resumable(documents: list[DocumentState], quota: int) -> list[DocumentState]:
    """Rules 1-2: the worker's sessions to resume, best first (the caller checks an
    abandoned one's place again under its document's lock)."""

    def seen(state: DocumentState) -> datetime:
        return state.my_seen or datetime.min.replace(tzinfo=UTC)

    active = [d for d in documents if d.my_status == SessionStatus.ACTIVE]
    if active:
        return [max(active, key=seen)]
    abandoned = [
        d
        for d in documents
        if d.my_status == SessionStatus.ABANDONED and (d.is_check or d.occupied < quota)
    ]
    return sorted(abandoned, key=seen, reverse=True)


def _resume(document_id: int, identity: WorkerIdentity) -> Assignment:
    session = start_or_resume_session(db.session.get(Document, document_id), identity)
    return Assignment(session.id, session.token)


def _resume_session(session_id: int, identity: WorkerIdentity) -> Assignment:
    session = resume_session(db.session.get(AnnotationSession, session_id), identity)
    return Assignment(session.id, session.token)


def _new_session(
    document_id: int,
    is_check: bool,
    identity: WorkerIdentity,
    annotator_id: int | None,
    network: str | None,
    now: datetime,
) -> Assignment:
    """Insert the worker's session (and annotator row, when new) and commit; PlaceRefused
    (nothing written) when the worker's network holds its cap of open sessions. The
    worker's lock is held (and their network's), so neither insert can meet a concurrent
    twin and the network's count is exact."""
    if annotator_id is None:
        annotator_id = db.session.scalar(
            _NEW_ANNOTATOR, {"platform": identity.platform, "external_id": identity.external_id}
        )
    values = new_session_values(identity, is_check)
    row = db.session.execute(
        _NEW_SESSION,
        {
            **values,
            "token": new_token(),
            "completion_code": new_completion_code(),
            "document_id": document_id,
            "annotator_id": annotator_id,
            "started_at": now,
            "last_seen_at": now,
            "worker_id": annotator_id,
            "inherit": inherits_failures(identity),
            **room_params(network),
        },
    ).first()
    if row is None:
        raise PlaceRefused.network_limit()  # its handler rolls back: nothing is kept
    db.session.commit()
    remember_session_version(row.token, values["taxonomy_version"])
    return Assignment(row.id, row.token)
