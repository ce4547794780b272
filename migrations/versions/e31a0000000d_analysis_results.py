"""analysis results: heavy analyses' values in the database, shared by every process

Revision ID: e31a0000000d
Revises: e32a0000000b
Create Date: 2026-11-25 22:00:00.000000

Gamma was cached as one JSON file per key under GAMMA_CACHE_DIR, so each dyno recomputed
every document and a restart lost them (issue 31 point 1). `analysis_results` keeps one
row per (kind, key): the key hashes the content, the parameters and the algorithm
`version`; the status says pending, running, done, skipped or error. New table only: no
existing data changes (the old files are simply no longer read).
"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "e31a0000000d"
down_revision = "e32a0000000b"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "analysis_results",
        sa.Column("kind", sa.String(length=40), nullable=False),
        sa.Column("key", sa.String(length=64), nullable=False),
        sa.Column("version", sa.String(length=200), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("value", sa.JSON(none_as_null=True), nullable=True),
        sa.Column("approximate", sa.Boolean(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("claimed_by", sa.String(length=120), nullable=True),
        sa.Column("requested_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("computed_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint(
            "status IN ('pending', 'running', 'done', 'skipped', 'error')",
            name=op.f("ck_analysis_results_status_known"),
        ),
        sa.PrimaryKeyConstraint("kind", "key", name=op.f("pk_analysis_results")),
    )
    op.create_index("ix_analysis_results_status", "analysis_results", ["status"])


def downgrade():
    op.drop_index("ix_analysis_results_status", table_name="analysis_results")
    op.drop_table("analysis_results")
