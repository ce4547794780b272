"""annotations carry an MQM-style severity (null when the taxonomy has none)

Revision ID: e18b00000004
Revises: e17b00000002
Create Date: 2026-11-24 04:00:00.000000

"""

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = "e18b00000004"
down_revision = "e17b00000002"  # chained after issue 17 (consent, training) at the merge of main
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("annotations", schema=None) as batch_op:
        batch_op.add_column(sa.Column("severity", sa.String(length=64), nullable=True))


def downgrade():
    with op.batch_alter_table("annotations", schema=None) as batch_op:
        batch_op.drop_column("severity")
