"""an index on the sessions' start, per study: the dashboard's most recent sessions

Revision ID: e31c00000012
Revises: e30b0000000e
Create Date: 2026-11-26 01:00:00.000000

Issue 31 (large studies stay fast): the dashboard lists the 100 most recently started
sessions of a study; without this index PostgreSQL sorts every session of the study
(30,000 at 10,000 documents x 3 annotators) on each view.
"""

from alembic import op

# revision identifiers, used by Alembic.
revision = "e31c00000012"
down_revision = "e30b0000000e"
branch_labels = None
depends_on = None


def upgrade():
    op.create_index(
        "ix_annotation_sessions_study_started",
        "annotation_sessions",
        ["study_id", "started_at", "id"],
    )


def downgrade():
    op.drop_index("ix_annotation_sessions_study_started", table_name="annotation_sessions")
