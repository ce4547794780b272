"""annotation sessions remember when their page was first loaded (places are claimed)

Revision ID: b2e4f8a20002
Revises: c3f5a9b30003
Create Date: 2026-11-24 00:40:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'b2e4f8a20002'
down_revision = 'c3f5a9b30003'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('annotation_sessions', schema=None) as batch_op:
        batch_op.add_column(sa.Column('page_loaded_at', sa.DateTime(timezone=True), nullable=True))
    # Sessions made before this column cannot tell: count them as loaded, so that a worker
    # busy during the upgrade keeps the place (an idle one still frees it after
    # claim_minutes).
    op.execute("UPDATE annotation_sessions SET page_loaded_at = started_at")


def downgrade():
    with op.batch_alter_table('annotation_sessions', schema=None) as batch_op:
        batch_op.drop_column('page_loaded_at')
