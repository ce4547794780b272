"""submissions, bindings, identity conflicts, attempts per worker and study

Revision ID: e26a00000006
Revises: e26b00000007
Create Date: 2026-11-26 09:00:00.000000

Issue 26 points 1 and 2, issue 27 point 2 (app/crowd/submissions.py, docs/identity.md):
- annotation_sessions.submission (Prolific SESSION_ID, MTurk assignmentId), unique per
  annotator: one submission, one session. Filled from platform_params for the first
  session of each submission; later duplicates (the bug being fixed) keep NULL.
- annotation_sessions.verification (Prolific's API: verified | unverified) and
  task_opened_at (the task's moves are refused before it), filled for sessions that
  were on the task already (moved, annotated or submitted).
- submission_bindings: each Prolific participant's first submission per study (keyed by
  the platform's ids), filled from the existing sessions; identity_conflicts: the
  arrivals refused by it.
- training_attempts.submission, and attempts unique per worker, study, submission and
  document (not per session): existing duplicates are renumbered in the order stored.
"""

import json
from collections import defaultdict

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "e26a00000006"
down_revision = "e26b00000007"
branch_labels = None
depends_on = None

SUBMISSION_KEY = {"prolific": "session_id", "mturk": "assignment_id"}


def _params(value):
    if isinstance(value, str):  # JSON as text, should a driver give it so
        try:
            value = json.loads(value)
        except ValueError:
            return {}
    return value if isinstance(value, dict) else {}


def _text(value):
    return value if isinstance(value, str) and value and len(value) <= 200 else None


def upgrade():
    with op.batch_alter_table("annotation_sessions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("submission", sa.String(length=200), nullable=True))
        batch_op.add_column(sa.Column("verification", sa.String(length=12), nullable=True))
        batch_op.add_column(sa.Column("task_opened_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.create_check_constraint(
            op.f("ck_annotation_sessions_verification_known"),
            "verification IS NULL OR verification IN ('verified', 'unverified')",
        )
    with op.batch_alter_table("training_attempts", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("submission", sa.String(length=200), server_default="", nullable=False)
        )
    op.create_table(
        "submission_bindings",
        sa.Column("platform", sa.String(length=20), nullable=False),
        sa.Column("participant", sa.String(length=200), nullable=False),
        sa.Column("study_id", sa.String(length=200), nullable=False),
        sa.Column("submission", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint(
            "platform", "participant", "study_id", name=op.f("pk_submission_bindings")
        ),
    )
    op.create_table(
        "identity_conflicts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("platform", sa.String(length=20), nullable=False),
        sa.Column("participant", sa.String(length=200), nullable=False),
        sa.Column("study_id", sa.String(length=200), nullable=False),
        sa.Column("bound_submission", sa.String(length=200), nullable=False),
        sa.Column("submission", sa.String(length=200), nullable=False),
        sa.Column("arrivals", sa.Integer(), nullable=False),
        sa.Column("first_seen_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_seen_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("decision", sa.String(length=10), nullable=True),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("decided_by_id", sa.Integer(), nullable=True),
        sa.CheckConstraint(
            "decision IS NULL OR decision IN ('allowed', 'refused')",
            name=op.f("ck_identity_conflicts_decision_known"),
        ),
        sa.ForeignKeyConstraint(
            ["decided_by_id"],
            ["researchers.id"],
            name=op.f("fk_identity_conflicts_decided_by_id_researchers"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_identity_conflicts")),
        sa.UniqueConstraint(
            "platform",
            "participant",
            "study_id",
            "submission",
            name=op.f("uq_identity_conflicts_submission"),
        ),
    )
    _fill_sessions()
    _fill_attempts()
    with op.batch_alter_table("annotation_sessions", schema=None) as batch_op:
        batch_op.create_unique_constraint(
            batch_op.f("uq_annotation_sessions_annotator_id_submission"),
            ["annotator_id", "submission"],
        )
    with op.batch_alter_table("training_attempts", schema=None) as batch_op:
        batch_op.drop_constraint(
            op.f("uq_training_attempts_session_id_document_id_attempt"), type_="unique"
        )
        batch_op.create_unique_constraint(
            op.f("uq_training_attempts_worker_study_attempt"),
            ["annotator_id", "study_key", "submission", "document_id", "attempt"],
        )


def _fill_sessions():
    """submission per session (the first of each), bindings, task_opened_at."""
    bind = op.get_bind()
    sessions = sa.table(
        "annotation_sessions",
        sa.column("id", sa.Integer),
        sa.column("annotator_id", sa.Integer),
        sa.column("platform", sa.String),
        sa.column("platform_params", sa.JSON),
        sa.column("started_at", sa.DateTime(timezone=True)),
        sa.column("submission", sa.String),
    )
    bindings = sa.table(
        "submission_bindings",
        sa.column("platform", sa.String),
        sa.column("participant", sa.String),
        sa.column("study_id", sa.String),
        sa.column("submission", sa.String),
        sa.column("created_at", sa.DateTime(timezone=True)),
    )
    annotators = sa.table(
        "annotators", sa.column("id", sa.Integer), sa.column("external_id", sa.String)
    )
    rows = bind.execute(
        sa.select(
            sessions.c.id,
            sessions.c.annotator_id,
            annotators.c.external_id,
            sessions.c.platform,
            sessions.c.platform_params,
            sessions.c.started_at,
        )
        .join_from(sessions, annotators, sessions.c.annotator_id == annotators.c.id)
        .order_by(sessions.c.id)
    ).all()
    seen, bound = set(), set()
    for row in rows:
        params = _params(row.platform_params)
        submission = _text(params.get(SUBMISSION_KEY.get(row.platform, "")))
        if submission is None or (row.annotator_id, submission) in seen:
            continue
        seen.add((row.annotator_id, submission))
        bind.execute(
            sa.update(sessions).where(sessions.c.id == row.id).values(submission=submission)
        )
        study = _text(params.get("study_id")) or ""
        if row.platform == "prolific" and (row.annotator_id, study) not in bound:
            bound.add((row.annotator_id, study))
            bind.execute(
                sa.insert(bindings).values(
                    platform=row.platform,
                    participant=row.external_id,
                    study_id=study,
                    submission=submission,
                    created_at=row.started_at,
                )
            )
    # Sessions already on the task keep moving: they moved, annotated or were submitted.
    op.execute(
        "UPDATE annotation_sessions SET task_opened_at = COALESCE(page_loaded_at, started_at) "
        "WHERE furthest > 0 OR status = 'submitted' OR EXISTS "
        "(SELECT 1 FROM annotations WHERE annotations.session_id = annotation_sessions.id)"
    )


def _fill_attempts():
    """training_attempts.submission from the session, attempts numbered per worker, study,
    submission and document in the order they were stored."""
    bind = op.get_bind()
    attempts = sa.table(
        "training_attempts",
        sa.column("id", sa.Integer),
        sa.column("session_id", sa.Integer),
        sa.column("annotator_id", sa.Integer),
        sa.column("study_key", sa.String),
        sa.column("document_id", sa.Integer),
        sa.column("attempt", sa.Integer),
        sa.column("submission", sa.String),
    )
    sessions = sa.table(
        "annotation_sessions",
        sa.column("id", sa.Integer),
        sa.column("platform", sa.String),
        sa.column("platform_params", sa.JSON),
    )
    rows = bind.execute(
        sa.select(
            attempts.c.id,
            attempts.c.annotator_id,
            attempts.c.study_key,
            attempts.c.document_id,
            attempts.c.attempt,
            sessions.c.platform,
            sessions.c.platform_params,
        )
        .join_from(attempts, sessions, attempts.c.session_id == sessions.c.id)
        .order_by(attempts.c.id)
    ).all()
    numbers = defaultdict(int)
    for row in rows:
        submission = ""
        if row.platform == "prolific":
            submission = _text(_params(row.platform_params).get("session_id")) or ""
        key = (row.annotator_id, row.study_key, submission, row.document_id)
        numbers[key] += 1
        bind.execute(
            sa.update(attempts)
            .where(attempts.c.id == row.id)
            .values(submission=submission, attempt=numbers[key])
        )


def downgrade():
    with op.batch_alter_table("training_attempts", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("uq_training_attempts_worker_study_attempt"), type_="unique")
    # Attempts were unique per session before: number them so again.
    bind = op.get_bind()
    attempts = sa.table(
        "training_attempts",
        sa.column("id", sa.Integer),
        sa.column("session_id", sa.Integer),
        sa.column("document_id", sa.Integer),
        sa.column("attempt", sa.Integer),
    )
    numbers = defaultdict(int)
    for row in bind.execute(
        sa.select(attempts.c.id, attempts.c.session_id, attempts.c.document_id).order_by(
            attempts.c.id
        )
    ).all():
        numbers[(row.session_id, row.document_id)] += 1
        bind.execute(
            sa.update(attempts)
            .where(attempts.c.id == row.id)
            .values(attempt=numbers[(row.session_id, row.document_id)])
        )
    with op.batch_alter_table("training_attempts", schema=None) as batch_op:
        batch_op.create_unique_constraint(
            op.f("uq_training_attempts_session_id_document_id_attempt"),
            ["session_id", "document_id", "attempt"],
        )
        batch_op.drop_column("submission")
    op.drop_table("identity_conflicts")
    op.drop_table("submission_bindings")
    with op.batch_alter_table("annotation_sessions", schema=None) as batch_op:
        batch_op.drop_constraint(
            batch_op.f("uq_annotation_sessions_annotator_id_submission"), type_="unique"
        )
        batch_op.drop_constraint(op.f("ck_annotation_sessions_verification_known"), type_="check")
        batch_op.drop_column("task_opened_at")
        batch_op.drop_column("verification")
        batch_op.drop_column("submission")
