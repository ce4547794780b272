"""document language (BCP 47)

Revision ID: e20a00000005
Revises: e18b00000004
Create Date: 2026-11-24 04:30:00.000000

"""

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = "e20a00000005"
down_revision = "e18b00000004"  # chained after main's heads at the merge of main
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("documents", schema=None) as batch_op:
        batch_op.add_column(sa.Column("language", sa.String(length=35), nullable=True))


def downgrade():
    with op.batch_alter_table("documents", schema=None) as batch_op:
        batch_op.drop_column("language")
