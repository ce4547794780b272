"""Database models. Table names are a contract (docs/contracts.md#5-database-tables);
columns are ours."""

from __future__ import annotations

import base64
import secrets
from datetime import UTC, datetime
from typing import Any

from flask_login import UserMixin
from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    false,
    func,
    or_,
    select,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship
from sqlalchemy.types import TypeDecorator

from app.core.extensions import db
from app.rules.languages import direction_of
from app.rules.statuses import SessionStatus
from app.rules.studies import STUDY_KINDS, STUDY_ROLES, STUDY_STATUSES

# SQLite only auto-increments INTEGER PRIMARY KEY; PostgreSQL gets a BIGINT identity.
BigId = BigInteger().with_variant(Integer(), "sqlite")

SESSION_STATUSES = tuple(status.value for status in SessionStatus)
VERDICTS = ("agree", "partial", "disagree")


def known_values(column: str, values: tuple[str, ...]) -> CheckConstraint:
    """CHECK (<column> IN ('a', 'b')), named <column>_known, as the migrations write it."""
    return CheckConstraint(f"{column} IN {values!r}", name=f"{column}_known")


def utcnow() -> datetime:
    """Timezone-aware now, used as a callable column default."""
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator):
    """A moment, read back as an aware datetime in UTC on both databases; stored as before.

    PostgreSQL stores `timestamp with time zone` and hands values back in the connection's
    time zone; SQLite stores the naive text SQLAlchemy writes (UTC: the app writes nothing
    else) and hands back naive datetimes. Every moment column takes this type, so code
    compares, subtracts and formats moments without converting them first. Written: an
    aware value is converted to UTC (the stored text on SQLite is the one it always was), a
    naive one is taken as UTC. No migration: the column type in the database is unchanged.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Any) -> datetime | None:
        """A moment to store: in UTC."""
        return None if value is None else _in_utc(value)

    def process_result_value(self, value: datetime | None, dialect: Any) -> datetime | None:
        """A stored moment: aware, in UTC."""
        return None if value is None else _in_utc(value)


def _in_utc(value: datetime) -> datetime:
    if value.tzinfo is None:  # SQLite: written in UTC, read back without a zone
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def new_token() -> str:
    """An unguessable capability token (192 bits, URL-safe)."""
    return secrets.token_urlsafe(24)


def new_item_public_id() -> str:
    """What validators see as a validation item's id: random (80 bits), so that it says
    nothing of the item's source, annotator or original id."""
    return f"item-{secrets.token_hex(10)}"


def new_completion_code() -> str:
    """A completion code with 130 bits of entropy, upper-case base32 without padding."""
    return base64.b32encode(secrets.token_bytes(17)).decode("ascii").rstrip("=")[:26]


class Study(db.Model):
    """A study: its documents, sessions, rounds and settings (app.studies, docs/studies.md).

    `settings` holds, as data, what the taxonomy's `study:`, `training:`, `consent:`,
    `survey:`, `suggestions:`, `checks:` and `validation:` sections say (filled from each
    taxonomy version stored for the study); `taxonomy_version` names the version new
    sessions get (a `taxonomy_versions.version` of this study). A study whose
    `taxonomy_file` is set is managed by that file (TAXONOMY_PATH for the default study):
    a changed file becomes a new version at start, and uploads are refused."""

    __tablename__ = "studies"
    __table_args__ = (
        known_values("kind", STUDY_KINDS),
        known_values("status", STUDY_STATUSES),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    slug: Mapped[str] = mapped_column(String(64), unique=True)
    title: Mapped[str] = mapped_column(String(200))
    kind: Mapped[str] = mapped_column(String(12), default="annotation")
    status: Mapped[str] = mapped_column(String(10), default="draft")
    settings: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    # The platform's study (Prolific's STUDY_ID) and its API token; None: none set here
    # (the taxonomy's study.prolific_study_id and PROLIFIC_API_TOKEN apply).
    prolific_study_id: Mapped[str | None] = mapped_column(String(200))
    prolific_api_token: Mapped[str | None] = mapped_column(String(200))
    taxonomy_version: Mapped[str | None] = mapped_column(String(64))
    taxonomy_file: Mapped[str | None] = mapped_column(String(1000))
    # A validation study: the annotation study whose annotations it judges.
    judges_study_id: Mapped[int | None] = mapped_column(ForeignKey("studies.id"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, onupdate=utcnow)


class TaxonomyVersion(db.Model):
    """One taxonomy of a study, as uploaded or read from its file, never changed.

    `version` is the taxonomy's hash (app.taxonomy: the first 16 hex digits of the file's
    SHA-256), what annotation_sessions.taxonomy_version and the exports name."""

    __tablename__ = "taxonomy_versions"
    __table_args__ = (UniqueConstraint("study_id", "version"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    study_id: Mapped[int] = mapped_column(ForeignKey("studies.id", ondelete="CASCADE"))
    version: Mapped[str] = mapped_column(String(64))
    yaml_text: Mapped[str] = mapped_column(Text)
    # Where it came from: the file's path, or the uploaded file's name.
    source: Mapped[str] = mapped_column(String(1000))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class StudyResearcher(db.Model):
    """Who may see or change a study: its owner, and the researchers it is shared with."""

    __tablename__ = "study_researchers"
    __table_args__ = (known_values("role", STUDY_ROLES),)

    study_id: Mapped[int] = mapped_column(
        ForeignKey("studies.id", ondelete="CASCADE"), primary_key=True
    )
    researcher_id: Mapped[int] = mapped_column(
        ForeignKey("researchers.id", ondelete="CASCADE"), primary_key=True
    )
    role: Mapped[str] = mapped_column(String(8))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class Document(db.Model):
    """A generated text to annotate, split into paragraphs at import."""

    __tablename__ = "documents"
    __table_args__ = (UniqueConstraint("study_id", "external_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    study_id: Mapped[int] = mapped_column(ForeignKey("studies.id"), index=True)
    external_id: Mapped[str] = mapped_column(String(200))
    title: Mapped[str | None] = mapped_column(String(500))
    # BCP 47 tag (app.rules.languages): sets the pages' lang/dir and the sentence splitter.
    language: Mapped[str | None] = mapped_column(String(35))
    meta: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    entities: Mapped[list[str]] = mapped_column(JSON, default=list)
    # Attention-check answers: [{"paragraph_id", "start", "end", "category"}] or None.
    gold: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON(none_as_null=True))
    content_hash: Mapped[str] = mapped_column(String(64))
    paragraph_count: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, onupdate=utcnow)

    paragraphs: Mapped[list[Paragraph]] = relationship(
        back_populates="document",
        order_by="Paragraph.position",
        cascade="all, delete-orphan",
    )

    @property
    def is_attention_check(self) -> bool:
        """True when the document carries gold spans (an attention check)."""
        return bool(self.gold)

    @property
    def direction(self) -> str | None:
        """The text direction of the language's script (rtl or ltr); None without a language."""
        return direction_of(self.language)


select_study_of_document = select(Document.__table__.c.study_id)


class Paragraph(db.Model):
    """One paragraph of a document; `position` is the contract's paragraph_id."""

    __tablename__ = "paragraphs"
    __table_args__ = (
        UniqueConstraint("document_id", "position"),
        CheckConstraint("position >= 0", name="position_nonnegative"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    document_id: Mapped[int] = mapped_column(
        ForeignKey("documents.id", ondelete="CASCADE"), index=True
    )
    position: Mapped[int] = mapped_column(Integer)
    text: Mapped[str] = mapped_column(Text)

    document: Mapped[Document] = relationship(back_populates="paragraphs")


class Annotator(db.Model):
    """A worker or validator, identified by platform and the platform's id."""

    __tablename__ = "annotators"
    __table_args__ = (UniqueConstraint("platform", "external_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    platform: Mapped[str] = mapped_column(String(20))  # prolific | mturk | direct | anonymous
    external_id: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)

    @property
    def label(self) -> str:
        """Stable human-readable id used in exports: platform:external_id."""
        return f"{self.platform}:{self.external_id}"


class WorkerSession:
    """The columns an annotation and a validation session share: the capability token, the
    status (app.rules.statuses), the platform that sent the worker, the completion code, times."""

    token: Mapped[str] = mapped_column(String(64), unique=True, default=new_token)
    status: Mapped[str] = mapped_column(String(16), default=SessionStatus.ACTIVE)
    platform: Mapped[str] = mapped_column(String(20))
    # Platform parameters: study_id, session_id, assignment_id, hit_id, turk_submit_to...
    platform_params: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    completion_code: Mapped[str] = mapped_column(String(40), default=new_completion_code)
    started_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    last_seen_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


def _document_study(context: Any) -> int | None:
    """A session's study when its creator did not name it: its document's (for scripts and
    tests that add sessions by hand; the app's own inserts name it)."""
    document_id = context.get_current_parameters().get("document_id")
    query = select_study_of_document.where(Document.__table__.c.id == document_id)
    return context.connection.execute(query).scalar()


class AnnotationSession(WorkerSession, db.Model):
    """One (document, annotator) pair: progress, status and the capability token."""

    __tablename__ = "annotation_sessions"
    __table_args__ = (
        UniqueConstraint("document_id", "annotator_id"),
        known_values("status", SESSION_STATUSES),
        CheckConstraint(
            "outcome IS NULL OR outcome IN "
            "('completed', 'failed_training', 'failed_checks', 'no_consent')",
            name="outcome_known",
        ),
        CheckConstraint(
            "position >= 0 AND furthest >= 0 AND position <= furthest",
            name="progress_consistent",
        ),
        Index("ix_annotation_sessions_document_status", "document_id", "status"),
        Index("ix_annotation_sessions_study_network_status", "study_id", "network", "status"),
        # One platform submission, one session (app.crowd.submissions); NULLs (no submission) never
        # collide.
        UniqueConstraint("annotator_id", "submission"),
        CheckConstraint(
            "verification IS NULL OR verification IN ('verified', 'unverified')",
            name="verification_known",
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    # The document's study, kept on the session so that the study's caps and figures need
    # no join (app.crowd.networks).
    study_id: Mapped[int] = mapped_column(
        ForeignKey("studies.id"), index=True, default=_document_study
    )
    document_id: Mapped[int] = mapped_column(ForeignKey("documents.id"))
    annotator_id: Mapped[int] = mapped_column(ForeignKey("annotators.id"), index=True)
    position: Mapped[int] = mapped_column(Integer, default=0)
    furthest: Mapped[int] = mapped_column(Integer, default=0)
    taxonomy_version: Mapped[str] = mapped_column(String(64))
    # How the worker's part ended (app.rules.outcomes): set when the session ends, None while open.
    outcome: Mapped[str | None] = mapped_column(String(20))
    is_attention_check: Mapped[bool] = mapped_column(Boolean, default=False)
    # When the worker's browser first loaded the page (None: never, e.g. a link opened by a
    # script): whether the session holds its place (app.crowd.assignment.claims).
    page_loaded_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # The first real work (a finished step: consent, a survey, a training check; a save or a
    # move); until then the session holds its place for 5 minutes only (claims).
    worked_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # The keyed hash of the client network that opened it (app.crowd.networks); None for signed
    # annotator links and sessions from before the caps.
    network: Mapped[str | None] = mapped_column(String(32))
    submitted_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # The suggestions arm the worker is in ("show" | "none"; app.suggestions.arms), set when
    # the page is first loaded in a study that uses suggestions; None otherwise.
    arm: Mapped[str | None] = mapped_column(String(20))
    # The platform submission the session belongs to: Prolific's SESSION_ID, MTurk's
    # assignmentId; None for other workers (app.crowd.submissions: one submission, one session).
    submission: Mapped[str | None] = mapped_column(String(200))
    # Prolific's API on this arrival (app.prolific): verified, or unverified when it did not
    # answer in time; None when it was not asked (no PROLIFIC_API_TOKEN, other platforms).
    verification: Mapped[str | None] = mapped_column(String(12))
    # When the task was first served (every step before it done, app.crowd.journey): the task's
    # moves are refused until then, so no paragraph text leaves before consent.
    task_opened_at: Mapped[datetime | None] = mapped_column(UTCDateTime())

    document: Mapped[Document] = relationship()
    annotator: Mapped[Annotator] = relationship()
    annotations: Mapped[list[Annotation]] = relationship(
        back_populates="session", order_by="Annotation.id"
    )


class Annotation(db.Model):
    """One Add by a worker. Remove sets deleted_at: rows are never deleted."""

    __tablename__ = "annotations"
    __table_args__ = (
        UniqueConstraint("session_id", "client_id"),
        CheckConstraint("span_start >= 0 AND span_start < span_end", name="span_ordered"),
        CheckConstraint("paragraph_id >= 0", name="paragraph_nonnegative"),
        CheckConstraint(
            "(paired_paragraph_id IS NULL AND paired_start IS NULL AND paired_end IS NULL"
            " AND paired_text IS NULL) OR (paired_paragraph_id IS NOT NULL"
            " AND paired_start IS NOT NULL AND paired_end IS NOT NULL"
            " AND paired_text IS NOT NULL AND paired_paragraph_id >= 0"
            " AND paired_start >= 0 AND paired_start < paired_end)",
            name="paired_complete_or_absent",
        ),
        Index("ix_annotations_session_paragraph", "session_id", "paragraph_id", "span_start"),
        CheckConstraint(
            "origin IN ('worker', 'suggestion-accepted', 'suggestion-edited')",
            name="origin_known",
        ),
        CheckConstraint(
            "(origin = 'worker') = (suggestion_id IS NULL)", name="origin_matches_suggestion"
        ),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    session_id: Mapped[int] = mapped_column(ForeignKey("annotation_sessions.id"))
    client_id: Mapped[str] = mapped_column(String(36))
    paragraph_id: Mapped[int] = mapped_column(Integer)
    span_start: Mapped[int] = mapped_column(Integer)
    span_end: Mapped[int] = mapped_column(Integer)
    span_text: Mapped[str] = mapped_column(Text)
    # A taxonomy key; None only for an imported error that came without a label (a
    # BooookScore relation with empty shared_labels): it counts in the BooookScore score
    # and in no category (app.rules.metrics). The worker API always requires one.
    category: Mapped[str | None] = mapped_column(String(64))
    paired_paragraph_id: Mapped[int | None] = mapped_column(Integer)
    paired_start: Mapped[int | None] = mapped_column(Integer)
    paired_end: Mapped[int | None] = mapped_column(Integer)
    paired_text: Mapped[str | None] = mapped_column(Text)
    comment: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    deleted_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # The error unit the row belongs to: the id of the unit's first row, shared by the rows
    # one imported span with several labels became (one row per label); None: the row is a
    # unit of its own (every worker's Add). UNIT_ID reads it with that default.
    unit_id: Mapped[int | None] = mapped_column(BigId, ForeignKey("annotations.id"))
    # The model suggestion this annotation came from (Accept or Edit), else None; `origin`
    # says which: worker | suggestion-accepted | suggestion-edited.
    suggestion_id: Mapped[int | None] = mapped_column(BigId, ForeignKey("suggestions.id"))
    origin: Mapped[str] = mapped_column(String(20), default="worker", server_default="worker")
    # A key of the taxonomy's `severities:` (checked on save); None when it has none.
    severity: Mapped[str | None] = mapped_column(String(64))

    session: Mapped[AnnotationSession] = relationship(back_populates="annotations")


# An annotation's error unit in SQL: its unit_id, else its own id (app.rules.metrics: the
# BooookScore score counts units; exports give it as `unit_id`).
UNIT_ID = func.coalesce(Annotation.unit_id, Annotation.id)


class ValidationRound(db.Model):
    """A precision-validation round: a named, shuffled set of items to judge."""

    __tablename__ = "validation_rounds"
    __table_args__ = (UniqueConstraint("study_id", "name"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    study_id: Mapped[int] = mapped_column(ForeignKey("studies.id"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    judgments_per_item: Mapped[int] = mapped_column(Integer, default=1)
    # Copied from the taxonomy's validation section: reasons, partial_counts_as_valid.
    settings: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    seed: Mapped[int | None] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)

    items: Mapped[list[ValidationItem]] = relationship(
        back_populates="round", order_by="ValidationItem.order_key"
    )


class ValidationItem(db.Model):
    """One annotation (human or model) to be judged. `source` never reaches validators, nor
    does `external_id` (the researcher's id, e.g. a suggestion's, which may name a model):
    validators see `public_id`, a random id per item."""

    __tablename__ = "validation_items"
    __table_args__ = (
        Index("ix_validation_items_round_order", "round_id", "order_key"),
        UniqueConstraint("round_id", "external_id"),
        UniqueConstraint("round_id", "public_id"),
        CheckConstraint("span_start IS NULL OR span_start < span_end", name="span_ordered"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    round_id: Mapped[int] = mapped_column(ForeignKey("validation_rounds.id", ondelete="CASCADE"))
    external_id: Mapped[str] = mapped_column(String(200))
    public_id: Mapped[str] = mapped_column(String(40), default=new_item_public_id)
    source: Mapped[str] = mapped_column(String(100))
    document_id: Mapped[int] = mapped_column(ForeignKey("documents.id"))
    order_key: Mapped[int] = mapped_column(Integer)
    labels: Mapped[list[str]] = mapped_column(JSON, default=list)
    question: Mapped[str | None] = mapped_column(Text)
    comment: Mapped[str | None] = mapped_column(Text)
    paragraph_id: Mapped[int | None] = mapped_column(Integer)
    span_start: Mapped[int | None] = mapped_column(Integer)
    span_end: Mapped[int | None] = mapped_column(Integer)
    span_text: Mapped[str] = mapped_column(Text)
    paired_paragraph_id: Mapped[int | None] = mapped_column(Integer)
    paired_start: Mapped[int | None] = mapped_column(Integer)
    paired_end: Mapped[int | None] = mapped_column(Integer)
    paired_text: Mapped[str | None] = mapped_column(Text)
    ambiguous: Mapped[bool] = mapped_column(Boolean, default=False)
    # Who made it, for human items: the original annotator (never shown to validators).
    origin_annotator: Mapped[str | None] = mapped_column(String(250))
    annotation_id: Mapped[int | None] = mapped_column(ForeignKey("annotations.id"))

    round: Mapped[ValidationRound] = relationship(back_populates="items")
    document: Mapped[Document] = relationship()


class ValidationSession(WorkerSession, db.Model):
    """A validator's progress through one round, reached by its capability token."""

    __tablename__ = "validation_sessions"
    __table_args__ = (
        UniqueConstraint("round_id", "annotator_id"),
        Index("ix_validation_sessions_round_network", "round_id", "network"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    round_id: Mapped[int] = mapped_column(ForeignKey("validation_rounds.id", ondelete="CASCADE"))
    annotator_id: Mapped[int] = mapped_column(ForeignKey("annotators.id"))
    # The item this validator was last given (a reservation), so that concurrent
    # validators are spread over different items and a served item stays judgeable.
    current_item_id: Mapped[int | None] = mapped_column(
        ForeignKey("validation_items.id", ondelete="SET NULL")
    )
    assigned_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # The keyed hash of the client network that made the reservation (app.crowd.networks).
    network: Mapped[str | None] = mapped_column(String(32))

    round: Mapped[ValidationRound] = relationship()
    annotator: Mapped[Annotator] = relationship()


class ValidationJudgment(db.Model):
    """A validator's verdict on one item (from the web page or imported)."""

    __tablename__ = "validation_judgments"
    __table_args__ = (
        UniqueConstraint("item_id", "validator"),
        known_values("verdict", VERDICTS),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    item_id: Mapped[int] = mapped_column(
        ForeignKey("validation_items.id", ondelete="CASCADE"), index=True
    )
    # The validator's label (platform:id for web judgments, the file's name when imported).
    validator: Mapped[str] = mapped_column(String(250))
    validation_session_id: Mapped[int | None] = mapped_column(
        ForeignKey("validation_sessions.id", ondelete="SET NULL")
    )
    verdict: Mapped[str] = mapped_column(String(10))
    reasons: Mapped[list[str]] = mapped_column(JSON, default=list)
    explanation: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)

    item: Mapped[ValidationItem] = relationship()


class Researcher(UserMixin, db.Model):
    """A member of the research team; logs in to /research/."""

    __tablename__ = "researchers"

    id: Mapped[int] = mapped_column(primary_key=True)
    email: Mapped[str] = mapped_column(String(320), unique=True)
    password_hash: Mapped[str] = mapped_column(String(256))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    last_login_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # Logout and `create-researcher --reset` increment it: it is part of the id kept in
    # the session and remember-me cookies, so every cookie issued before stops working.
    session_version: Mapped[int] = mapped_column(Integer, default=0, server_default="0")

    def get_id(self) -> str:
        """Flask-Login's alternative id: `<id>:<session_version>`."""
        return f"{self.id}:{self.session_version}"

    def end_sessions(self) -> None:
        """Invalidate every session and remember-me cookie issued to this researcher."""
        self.session_version = (self.session_version or 0) + 1


class ParagraphTiming(db.Model):
    """How long a session had one paragraph on screen (issue 17: time per paragraph).

    A visit starts when the paragraph becomes the current one (a move to it, or the page
    opening on it) and ends with the next move; `seconds_visible` sums closed visits by the
    server's clock, `active_seconds` what the page reported for them (time with the tab
    visible). `visit_started` is the open visit's start as Unix seconds, so that the move's
    one statement can add up the elapsed time the same way on SQLite and PostgreSQL."""

    __tablename__ = "paragraph_timings"
    __table_args__ = (
        CheckConstraint("paragraph_id >= 0", name="paragraph_nonnegative"),
        CheckConstraint("seconds_visible >= 0 AND active_seconds >= 0", name="seconds_nonnegative"),
    )

    session_id: Mapped[int] = mapped_column(ForeignKey("annotation_sessions.id"), primary_key=True)
    paragraph_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    first_shown_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    left_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    visit_started: Mapped[float | None] = mapped_column(Float)
    seconds_visible: Mapped[float] = mapped_column(Float, default=0.0)
    active_seconds: Mapped[float] = mapped_column(Float, default=0.0)


ADJUDICATION_DECISIONS = ("accept", "reject", "merge", "own")


class AdjudicationDecision(db.Model):
    """A researcher's decision on a candidate (or their own span) while adjudicating.

    Rows are never updated or deleted: a later decision on the same candidate supersedes
    the earlier one, and the history stays. (document, client_id) is unique so that a
    replayed save is recognised (INSERT ... ON CONFLICT DO NOTHING)."""

    __tablename__ = "adjudication_decisions"
    __table_args__ = (
        UniqueConstraint("document_id", "client_id"),
        CheckConstraint("decision IN ('accept', 'reject', 'merge', 'own')", name="decision_known"),
        Index("ix_adjudication_decisions_document_candidate", "document_id", "candidate_key"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    document_id: Mapped[int] = mapped_column(ForeignKey("documents.id", ondelete="CASCADE"))
    client_id: Mapped[str] = mapped_column(String(36))
    # "c-<hash of the grouped annotation ids>" or "own-<client UUID of the first own span>".
    candidate_key: Mapped[str] = mapped_column(String(80))
    paragraph_id: Mapped[int] = mapped_column(Integer)
    decision: Mapped[str] = mapped_column(String(10))
    # Merge only: "union" or the label of the annotator whose boundary was chosen.
    boundary: Mapped[str | None] = mapped_column(String(250))
    # The resulting gold span {"category", "span", "paired_span"}; None for reject.
    result: Mapped[dict[str, Any] | None] = mapped_column(JSON(none_as_null=True))
    # Provenance: who marked the candidate, and which annotations it grouped.
    annotators: Mapped[list[str]] = mapped_column(JSON, default=list)
    annotation_ids: Mapped[list[int]] = mapped_column(JSON, default=list)
    note: Mapped[str | None] = mapped_column(Text)
    decided_by_id: Mapped[int] = mapped_column(ForeignKey("researchers.id"))
    decided_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)

    decided_by: Mapped[Researcher] = relationship()


class TrainingAttempt(db.Model):
    """One "Check my answers" on a practice document (app.crowd.training, docs/training.md).

    Practice annotations never become `annotations` rows: the spans a worker had marked
    and the feedback they got are kept here, one row per attempt. `study_key` names the
    study (a hash of the taxonomy title and the platform study id), so a worker who passed
    is not trained again in the same study, whichever document they are given. A Prolific
    worker's attempts also name their submission (`submission`, app.crowd.submissions): what is
    done under one SESSION_ID never counts for another. The unique constraint numbers the
    attempts per worker and study, so checks sent at once cannot both be attempt 1."""

    __tablename__ = "training_attempts"
    __table_args__ = (
        UniqueConstraint(
            "annotator_id",
            "study_key",
            "submission",
            "document_id",
            "attempt",
            name="uq_training_attempts_worker_study_attempt",  # the convention's is too long
        ),
        CheckConstraint("attempt >= 1", name="attempt_positive"),
        Index("ix_training_attempts_annotator_study", "annotator_id", "study_key"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    session_id: Mapped[int] = mapped_column(ForeignKey("annotation_sessions.id"), index=True)
    annotator_id: Mapped[int] = mapped_column(ForeignKey("annotators.id"))
    study_key: Mapped[str] = mapped_column(String(64))
    study_id: Mapped[str | None] = mapped_column(String(200))  # the platform's, if any
    # The Prolific submission (SESSION_ID) the attempt was made under; "" for other workers.
    submission: Mapped[str] = mapped_column(String(200), default="", server_default="")
    document_id: Mapped[int] = mapped_column(ForeignKey("documents.id"))
    attempt: Mapped[int] = mapped_column(Integer)
    # [{"category", "span": {...}, "paired_span": {...} | null, "comment"}] as checked.
    spans: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    # [{"kind": found|missed|wrong_category|extra, ...}] as the worker saw it.
    feedback: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    recall: Mapped[float | None] = mapped_column(Float)
    precision: Mapped[float | None] = mapped_column(Float)
    passed: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)

    document: Mapped[Document] = relationship()


class ConsentDecision(db.Model):
    """A worker's answer on the consent page (app.crowd.journey): one per session, never changed.

    `consent_version` identifies the consent text the worker was shown (a hash of it), so
    a decision stays tied to the exact wording after the taxonomy is edited."""

    __tablename__ = "consent_decisions"

    session_id: Mapped[int] = mapped_column(ForeignKey("annotation_sessions.id"), primary_key=True)
    agreed: Mapped[bool] = mapped_column(Boolean)
    consent_version: Mapped[str] = mapped_column(String(16))
    decided_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class ValidationConsentDecision(db.Model):
    """A validator's answer on a validation study's consent page (app.validation.consent):
    one per validation session, never changed; `consent_version` as ConsentDecision's."""

    __tablename__ = "validation_consent_decisions"

    session_id: Mapped[int] = mapped_column(
        ForeignKey("validation_sessions.id", ondelete="CASCADE"), primary_key=True
    )
    agreed: Mapped[bool] = mapped_column(Boolean)
    consent_version: Mapped[str] = mapped_column(String(16))
    decided_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


SURVEYS = ("before", "after")


class SurveyAnswer(db.Model):
    """One answer of a session's survey (before or after the task), never changed.

    A survey's answers are stored together in one transaction, one row per question
    (`answer` null for an optional question left blank), so any row means the survey is
    done: a second Finish of the same survey finds them and stores nothing (app.crowd.surveys).
    `answer` is the option text (choice), a list of option texts (multi), an integer
    (likert) or the text written (text)."""

    __tablename__ = "survey_answers"
    __table_args__ = (
        CheckConstraint("survey IN ('before', 'after')", name="survey_known"),
        CheckConstraint(
            "question_type IN ('choice', 'multi', 'likert', 'text')", name="question_type_known"
        ),
    )

    session_id: Mapped[int] = mapped_column(ForeignKey("annotation_sessions.id"), primary_key=True)
    survey: Mapped[str] = mapped_column(String(8), primary_key=True)
    question_key: Mapped[str] = mapped_column(String(64), primary_key=True)
    question_type: Mapped[str] = mapped_column(String(8))
    answer: Mapped[Any] = mapped_column(JSON(none_as_null=True), nullable=True)
    answered_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class Suggestion(db.Model):
    """A model's annotation offered to workers to Accept, Reject or Edit (issue 18).

    Imported by `flask import-suggestions` (app.suggestions); `external_id` is the
    suggestion_id of the exports. Never changed once imported: decisions refer to it."""

    __tablename__ = "suggestions"
    __table_args__ = (
        CheckConstraint("span_start >= 0 AND span_start < span_end", name="span_ordered"),
        CheckConstraint(
            "(paired_paragraph_id IS NULL AND paired_start IS NULL AND paired_end IS NULL"
            " AND paired_text IS NULL) OR (paired_paragraph_id IS NOT NULL"
            " AND paired_start IS NOT NULL AND paired_end IS NOT NULL"
            " AND paired_text IS NOT NULL AND paired_start < paired_end)",
            name="paired_complete_or_absent",
        ),
        Index("ix_suggestions_document_paragraph", "document_id", "paragraph_id"),
        UniqueConstraint("study_id", "external_id"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    study_id: Mapped[int] = mapped_column(ForeignKey("studies.id"), index=True)
    external_id: Mapped[str] = mapped_column(String(200))
    source: Mapped[str] = mapped_column(String(100))
    document_id: Mapped[int] = mapped_column(ForeignKey("documents.id"))
    paragraph_id: Mapped[int] = mapped_column(Integer)
    span_start: Mapped[int] = mapped_column(Integer)
    span_end: Mapped[int] = mapped_column(Integer)
    span_text: Mapped[str] = mapped_column(Text)
    category: Mapped[str] = mapped_column(String(64))
    # Every category the model gave (BooookScore's `types`), mapped; `category` is the first.
    labels: Mapped[list[str]] = mapped_column(JSON, default=list)
    paired_paragraph_id: Mapped[int | None] = mapped_column(Integer)
    paired_start: Mapped[int | None] = mapped_column(Integer)
    paired_end: Mapped[int | None] = mapped_column(Integer)
    paired_text: Mapped[str | None] = mapped_column(Text)
    question: Mapped[str | None] = mapped_column(Text)
    comment: Mapped[str | None] = mapped_column(Text)
    ambiguous: Mapped[bool] = mapped_column(Boolean, default=False)
    # Planted deliberately wrong by the researcher (`import-suggestions --decoy`): taking it
    # measures over-reliance; annotations made from it count in no study figure or round.
    decoy: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class SuggestionRejection(db.Model):
    """A worker's Reject of a suggestion. Kept for good (`withdrawn_at` when the worker
    takes it back); (session, client_id) is unique so that a replayed save is recognised.
    Accept and Edit are annotations with `suggestion_id` set."""

    __tablename__ = "suggestion_rejections"
    __table_args__ = (
        UniqueConstraint("session_id", "client_id"),
        Index("ix_suggestion_rejections_session_suggestion", "session_id", "suggestion_id"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    session_id: Mapped[int] = mapped_column(ForeignKey("annotation_sessions.id"))
    suggestion_id: Mapped[int] = mapped_column(BigId, ForeignKey("suggestions.id"))
    client_id: Mapped[str] = mapped_column(String(36))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    withdrawn_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


class SubmissionBinding(db.Model):
    """The first submission a Prolific participant arrived with in a study (app.crowd.submissions).

    First binding wins: the primary key lets one arrival bind the participant; another
    SESSION_ID of the same PROLIFIC_PID in the study is a conflict (IdentityConflict) and
    opens nothing until a researcher allows it. Keyed by the platform's ids, not the
    annotator row, so that binding is one statement before anything else exists.
    `study_id` is our study (a row of `studies`), `platform_study_id` Prolific's STUDY_ID
    ("" when the arrival had none, outside production)."""

    __tablename__ = "submission_bindings"

    study_id: Mapped[int] = mapped_column(ForeignKey("studies.id"), primary_key=True)
    platform: Mapped[str] = mapped_column(String(20), primary_key=True)
    participant: Mapped[str] = mapped_column(String(200), primary_key=True)
    platform_study_id: Mapped[str] = mapped_column(String(200), primary_key=True)
    submission: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


IDENTITY_DECISIONS = ("allowed", "refused")


class IdentityConflict(db.Model):
    """A participant who arrived with another submission than the one they are bound to:
    what the dashboard lists with **Allow** / **Keep refused** (app.crowd.submissions). Allowed,
    the submission opens a session of its own; refused (or undecided), it opens nothing."""

    __tablename__ = "identity_conflicts"
    __table_args__ = (
        UniqueConstraint(
            "study_id",
            "platform",
            "participant",
            "platform_study_id",
            "submission",
            name="uq_identity_conflicts_submission",  # the convention's is too long
        ),
        CheckConstraint(
            "decision IS NULL OR decision IN ('allowed', 'refused')", name="decision_known"
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    study_id: Mapped[int] = mapped_column(ForeignKey("studies.id"), index=True)
    platform: Mapped[str] = mapped_column(String(20))
    participant: Mapped[str] = mapped_column(String(200))
    platform_study_id: Mapped[str] = mapped_column(String(200))  # Prolific's STUDY_ID
    bound_submission: Mapped[str] = mapped_column(String(200))  # the binding's SESSION_ID
    submission: Mapped[str] = mapped_column(String(200))  # the one that was refused
    arrivals: Mapped[int] = mapped_column(Integer, default=1)
    first_seen_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    last_seen_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    decision: Mapped[str | None] = mapped_column(String(10))
    decided_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    decided_by_id: Mapped[int | None] = mapped_column(ForeignKey("researchers.id"))

    decided_by: Mapped[Researcher | None] = relationship()

    @property
    def label(self) -> str:
        """platform:participant, as exports name an annotator."""
        return f"{self.platform}:{self.participant}"


# Annotations a study figure, a round or a gold set counts: all but those made (Accept or
# Edit) from a decoy suggestion (issue 32; exports mark those `decoy: true`).
NOT_FROM_DECOY = or_(
    Annotation.suggestion_id.is_(None),
    Annotation.suggestion_id.not_in(select(Suggestion.id).where(Suggestion.decoy.is_(True))),
)
ANALYSIS_STATUSES = ("pending", "running", "done", "skipped", "error")


class AnalysisResult(db.Model):
    """One heavy analysis's result (a document's gamma, ...), shared by every server,
    worker and command, and kept across restarts (app.jobs).

    `key` is the SHA-256 of everything the value depends on: the content, the parameters
    and `version`, the kind's algorithm version, so a changed input or rule is a new key,
    never an old value; reads ask for the kind's current `version` too. `status`: pending
    (asked for, queued), running (claimed by `claimed_by`, a job's or command's token,
    since `started_at`), done (`value`), skipped (over the analysis limits: `value` says
    which and under which limits), error (gave up: `error`). `approximate`: the value was
    computed by an approximation (gamma's windowed alignment). `attempts` counts the
    computations started, the test of "computed once" and the cap on retries."""

    __tablename__ = "analysis_results"
    __table_args__ = (
        known_values("status", ANALYSIS_STATUSES),
        Index("ix_analysis_results_status", "status"),
    )

    kind: Mapped[str] = mapped_column(String(40), primary_key=True)
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    version: Mapped[str] = mapped_column(String(200))
    status: Mapped[str] = mapped_column(String(16), default="pending")
    value: Mapped[Any] = mapped_column(JSON(none_as_null=True), nullable=True)
    approximate: Mapped[bool] = mapped_column(Boolean, default=False)
    error: Mapped[str | None] = mapped_column(Text)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    claimed_by: Mapped[str | None] = mapped_column(String(120))
    requested_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    computed_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
