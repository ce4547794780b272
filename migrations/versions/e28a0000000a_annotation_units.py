"""annotation error units; a category may be absent

Revision ID: e28a0000000a
Revises: e20a00000005
Create Date: 2026-11-25 18:30:00.000000

Issue 28: the rows one imported span with several labels becomes (one per label) share
`unit_id`, the id of the unit's first row (the BooookScore score counts units). Existing
rows keep unit_id NULL, which means the row is a unit of its own: every existing row was
made as one unit (a worker's Add, or an imported label counted on its own before). An
imported error without a label (a BooookScore relation with empty shared_labels) is stored
with category NULL.
"""

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = "e28a0000000a"
down_revision = "e20a00000005"  # chained after main's heads at the merge of main
branch_labels = None
depends_on = None

BIG_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade():
    with op.batch_alter_table("annotations", schema=None) as batch_op:
        batch_op.add_column(sa.Column("unit_id", BIG_ID, nullable=True))
        batch_op.create_foreign_key(
            batch_op.f("fk_annotations_unit_id_annotations"), "annotations", ["unit_id"], ["id"]
        )
        batch_op.alter_column("category", existing_type=sa.String(length=64), nullable=True)


def downgrade():
    # A row without a category cannot go back to a schema that requires one: it is kept
    # under the empty key (shown as an unknown category) rather than lost.
    op.execute("UPDATE annotations SET category = '' WHERE category IS NULL")
    with op.batch_alter_table("annotations", schema=None) as batch_op:
        batch_op.alter_column("category", existing_type=sa.String(length=64), nullable=False)
        batch_op.drop_constraint(
            batch_op.f("fk_annotations_unit_id_annotations"), type_="foreignkey"
        )
        batch_op.drop_column("unit_id")
