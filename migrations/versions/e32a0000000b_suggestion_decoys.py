"""suggestions may be decoys: deliberately wrong, planted by the researcher

Revision ID: e32a0000000b
Revises: e26c00000008
Create Date: 2026-11-25 22:00:00.000000

Issue 32: `flask import-suggestions --decoy` marks a file's suggestions as decoys. How often
workers take them (accept or edit) measures over-reliance on suggestions; annotations made
from them are marked `decoy: true` in exports and counted in no study figure and no
validation round. Every existing suggestion is a real one (false).
"""

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = "e32a0000000b"
down_revision = "e26c00000008"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("suggestions", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("decoy", sa.Boolean(), nullable=False, server_default=sa.false())
        )


def downgrade():
    with op.batch_alter_table("suggestions", schema=None) as batch_op:
        batch_op.drop_column("decoy")
