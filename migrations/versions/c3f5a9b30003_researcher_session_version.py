"""researcher session version

Revision ID: c3f5a9b30003
Revises: d4a6b0c40004
Create Date: 2026-11-24 00:40:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'c3f5a9b30003'
down_revision = 'd4a6b0c40004'
branch_labels = None
depends_on = None


def upgrade():
    # Part of the id Flask-Login keeps in the session and remember-me cookies: logout and
    # `create-researcher --reset` increment it, which ends every cookie issued before.
    with op.batch_alter_table('researchers', schema=None) as batch_op:
        batch_op.add_column(
            sa.Column('session_version', sa.Integer(), server_default='0', nullable=False)
        )


def downgrade():
    with op.batch_alter_table('researchers', schema=None) as batch_op:
        batch_op.drop_column('session_version')
