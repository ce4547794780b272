"""Opening a task: a worker's first session on a document in one statement.

GET /annotate/<document> runs for every worker at the start of a study, all at once when
a study is published, so it skips the ORM: the document is read with one Core SELECT on
the request's autocommit connection, and on PostgreSQL the annotator row and the session
are created by one `WITH ... INSERT` (writes' autocommit connection: no BEGIN/COMMIT).
When it inserts nothing (a returning worker: the session exists; a race between two first
opens; a retired document; the worker's client network at its cap of open sessions, or
another first open from it in progress: app.crowd.networks) and on SQLite, open_session
goes on with sessions.start_or_resume_session, which is where a resume is checked
(app.crowd.identity: only the worker may resume their session), a retired document
refused a new session (its existing ones resume) and the network's cap counted under its
lock.
A Prolific arrival is admitted first (app.crowd.submissions: its study, Prolific's API when
there is a token, its binding: one INSERT), and a platform submission that has a session
on another document meets the unique constraint on (annotator, submission) here, so the
ORM path resumes that session: one submission, one session.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import (
    Boolean,
    Integer,
    and_,
    bindparam,
    case,
    literal_column,
    null,
    select,
    union_all,
)
from sqlalchemy.dialects.postgresql import insert as postgresql_insert

from app.annotate.writes import DOCUMENTS, SESSIONS
from app.core.extensions import db
from app.core.persistence import autocommit_connection, orm_transaction_open
from app.crowd.identity import WorkerIdentity
from app.crowd.networks import NETWORK, capped_network, has_room, room_params, try_network_lock
from app.crowd.sessions import (
    DOCUMENT_STUDY,
    inherits_failures,
    new_session_values,
    start_or_resume_session,
    worker_failure,
)
from app.models import Annotator, Document, Study, new_completion_code, new_token, utcnow
from app.rules.statuses import SessionStatus
from app.rules.studies import DEFAULT_SLUG
from app.studies import default_study, remember_session_version, study_from_row

ANNOTATORS = Annotator.__table__

# A worker's first session on a document, in one statement (PostgreSQL): the annotator row
# (inserted if new, else the existing one: both sub-statements see the same snapshot, so
# exactly one of them yields the id) and the session, unless the worker already has one.
_NEW_ANNOTATOR = (
    postgresql_insert(ANNOTATORS)
    .values(
        platform=bindparam("platform"),
        external_id=bindparam("external_id"),
        created_at=bindparam("now"),
    )
    .on_conflict_do_nothing(index_elements=["platform", "external_id"])
    .returning(ANNOTATORS.c.id)
    .cte("new_annotator")
)
_WORKER = union_all(
    select(_NEW_ANNOTATOR.c.id),
    select(ANNOTATORS.c.id).where(
        ANNOTATORS.c.platform == bindparam("platform"),
        ANNOTATORS.c.external_id == bindparam("external_id"),
    ),
).cte("worker")
# A returning worker who failed in the study: the session ends at once with that outcome
# (sessions.worker_failure; not for a Prolific submission, which is a worker by itself).
_INHERIT = bindparam("inherit", type_=Boolean)
_DOCUMENT_ACTIVE = (
    select(DOCUMENTS.c.retired_at)
    .where(DOCUMENTS.c.id == bindparam("document_id", type_=Integer))
    .scalar_subquery()
    .is_(None)
)
_FAILURE = worker_failure(_WORKER.c.id, DOCUMENT_STUDY)
_SESSION_VALUES = {
    **{
        name: bindparam(name, type_=SESSIONS.c[name].type)
        for name in (
            "token",
            "document_id",
            "taxonomy_version",
            "platform",
            "platform_params",
            "completion_code",
            "is_attention_check",
            "submission",
            "verification",
        )
    },
    "annotator_id": _WORKER.c.id,
    "outcome": case((_INHERIT, _FAILURE), else_=null()),
    "status": case(
        (and_(_INHERIT, _FAILURE.is_not(None)), literal_column(f"'{SessionStatus.ABANDONED}'")),
        else_=literal_column(f"'{SessionStatus.ACTIVE}'"),
    ),
    "study_id": DOCUMENT_STUDY,  # a session belongs to its document's study
    "position": literal_column("0"),
    "furthest": literal_column("0"),
    "started_at": bindparam("now", type_=SESSIONS.c.started_at.type),
    "last_seen_at": bindparam("now", type_=SESSIONS.c.last_seen_at.type),
    "network": NETWORK,
}
# Unless the document is retired (documents.retired_at: no new sessions; the ORM path
# resumes the worker's session or refuses, PlaceRefused.document_retired), or the
# worker's client network holds its cap of open sessions (app.crowd.networks), or
# another decision on that network is in progress (its advisory lock is taken): then
# nothing is inserted and open_session decides on the exact path, which waits for that
# lock and counts again. (The statement counts in its own snapshot, taken a moment before
# it tries the lock: an open from the network committed in that moment is not counted,
# so simultaneous first opens may, rarely, pass the cap by one. /start is exact.)
_NEW_SESSION = (
    postgresql_insert(SESSIONS)
    .from_select(
        list(_SESSION_VALUES),
        select(*_SESSION_VALUES.values())
        .where(_DOCUMENT_ACTIVE, try_network_lock(), has_room())
        .limit(1),
    )
    # The worker's session on the document, or their submission's on another (one
    # submission, one session): either way start_or_resume_session takes over.
    .on_conflict_do_nothing()
    .returning(SESSIONS.c.id)
    .execution_options(prepare=True)  # app.core.prepared: every worker's first open
)


@dataclass(frozen=True, slots=True)
class Opened:
    """The session a start link opened: its id (for the browser's cookie) and token."""

    session_id: int
    token: str


@dataclass(frozen=True, slots=True)
class DocumentKey:
    """What opening a document needs of it."""

    id: int
    content_hash: str
    paragraph_count: int
    is_attention_check: bool


_DOCUMENT_KEY = (
    select(
        DOCUMENTS.c.id,
        DOCUMENTS.c.content_hash,
        DOCUMENTS.c.paragraph_count,
        DOCUMENTS.c.gold.is_not(None),  # an attention check (Document.is_attention_check)
    )
    .where(
        DOCUMENTS.c.study_id == bindparam("study_id"),
        DOCUMENTS.c.external_id == bindparam("external_id"),
    )
    .execution_options(prepare=True)
)


def find_document_key(study_id: int, external_id: str) -> DocumentKey | None:
    """The study's document with this external id, read without an ORM transaction; None
    when there is none."""
    if not external_id or len(external_id) > 200:
        return None
    params = {"study_id": study_id, "external_id": external_id}
    row = autocommit_connection().execute(_DOCUMENT_KEY, params).first()
    return None if row is None else DocumentKey(*row)


STUDIES = Study.__table__

# A start link's study and its document of that external id (an outer join: the study
# without the document is an answer too), in one statement: every worker's first open.
_STUDY_AND_DOCUMENT = (
    select(
        *STUDIES.c,
        DOCUMENTS.c.id.label("document_pk"),
        DOCUMENTS.c.content_hash,
        DOCUMENTS.c.paragraph_count,
        DOCUMENTS.c.gold.is_not(None).label("is_attention_check"),
    )
    .select_from(
        STUDIES.outerjoin(
            DOCUMENTS,
            and_(
                DOCUMENTS.c.study_id == STUDIES.c.id,
                DOCUMENTS.c.external_id == bindparam("external_id"),
            ),
        )
    )
    .where(STUDIES.c.slug == bindparam("slug"))
    .execution_options(prepare=True)  # app.core.prepared
)


def study_and_document(
    slug: str | None, external_id: str
) -> tuple[Study | None, DocumentKey | None]:
    """The study a start link names (the default study without a slug; None when there
    is none) and its document with this external id (None when it has none), read in one
    statement without an ORM transaction (app.studies.study_of_link and find_document_key
    in one)."""
    wanted = external_id if external_id and len(external_id) <= 200 else None
    params = {"slug": slug or DEFAULT_SLUG, "external_id": wanted}
    row = autocommit_connection().execute(_STUDY_AND_DOCUMENT, params).first()
    if row is None:  # no such study; the default one is made on first use
        if slug is not None:
            return None, None
        study = default_study()
        return study, find_document_key(study.id, external_id)
    columns = row._mapping
    key = (
        None
        if columns["document_pk"] is None
        else DocumentKey(
            columns["document_pk"],
            columns["content_hash"],
            columns["paragraph_count"],
            columns["is_attention_check"],
        )
    )
    return study_from_row(columns), key


def open_session(
    document: DocumentKey, identity: WorkerIdentity, *, may_create: bool = True
) -> Opened | None:
    """Open the worker's session on the document: a new one in one statement (the
    worker's annotator row too, when new) on PostgreSQL; otherwise, or when that inserts
    nothing, through sessions.start_or_resume_session (the resume checks, the cap of the
    worker's client network: app.crowd.networks). Without `may_create` only an existing session
    opens (PlaceRefused otherwise). None when the document was deleted a moment ago."""
    network = capped_network(identity.platform)
    if may_create:
        opened = _insert_new_session(document, identity, network)
        if opened is not None:
            return opened
    found = db.session.get(Document, document.id)
    if found is None:
        return None
    session = start_or_resume_session(found, identity, network=network, may_create=may_create)
    return Opened(session.id, session.token)


def _insert_new_session(
    document: DocumentKey, identity: WorkerIdentity, network: str | None
) -> Opened | None:
    connection = autocommit_connection()
    if connection.dialect.name != "postgresql" or orm_transaction_open():
        return None
    token = new_token()
    params = {
        **new_session_values(identity, document.is_attention_check),
        "external_id": identity.external_id,
        "now": utcnow(),
        "token": token,
        "document_id": document.id,
        "completion_code": new_completion_code(),
        "inherit": inherits_failures(identity),
        **room_params(network),
    }
    session_id = connection.execute(_NEW_SESSION, params).scalar()
    if session_id is None:
        return None
    remember_session_version(token, params["taxonomy_version"])
    return Opened(session_id, token)
