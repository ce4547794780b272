"""a validator's consent decision: one per validation session

Revision ID: e30d0000000f
Revises: e30a0000000c
Create Date: 2026-11-26 01:20:00.000000

Issue 30: a validation study may ask its validators for consent (its taxonomy's
`consent:` section) before their first item, as an annotation study asks its annotators
(consent_decisions, one per annotation session). The decision of a validator is kept
here, one row per validation session, never changed. A new table: existing data is
untouched; downgrade drops it.
"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "e30d0000000f"
down_revision = "e30a0000000c"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "validation_consent_decisions",
        sa.Column(
            "session_id",
            sa.Integer(),
            sa.ForeignKey("validation_sessions.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("agreed", sa.Boolean(), nullable=False),
        sa.Column("consent_version", sa.String(16), nullable=False),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade():
    op.drop_table("validation_consent_decisions")
