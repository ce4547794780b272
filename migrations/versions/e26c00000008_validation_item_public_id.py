"""validation items: a random public id, the only id validators see

Revision ID: e26c00000008
Revises: e26a00000006
Create Date: 2026-11-25 18:30:00.000000

Items created from the suggestions export kept their suggestion ids ("gpt-4-turbo-66ff..."),
which name the model, and validators saw them (issue 26 point 7). Each item gets a random
`public_id` ("item-" and 20 hex digits); existing items get one here. `external_id` stays
the researcher's id (reports, import-judgments).
"""

import secrets

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "e26c00000008"
down_revision = "e26a00000006"  # chained after main's head at the merge of s26-hardening
branch_labels = None
depends_on = None

ITEMS = sa.table("validation_items", sa.column("id", sa.Integer), sa.column("public_id"))


def upgrade():
    with op.batch_alter_table("validation_items", schema=None) as batch_op:
        batch_op.add_column(sa.Column("public_id", sa.String(length=40), nullable=True))
    connection = op.get_bind()
    ids = connection.execute(sa.select(ITEMS.c.id)).scalars().all()
    for item_id in ids:
        connection.execute(
            ITEMS.update()
            .where(ITEMS.c.id == item_id)
            .values(public_id=f"item-{secrets.token_hex(10)}")
        )
    with op.batch_alter_table("validation_items", schema=None) as batch_op:
        batch_op.alter_column("public_id", existing_type=sa.String(length=40), nullable=False)
        batch_op.create_unique_constraint(
            batch_op.f("uq_validation_items_round_id_public_id"), ["round_id", "public_id"]
        )


def downgrade():
    with op.batch_alter_table("validation_items", schema=None) as batch_op:
        batch_op.drop_constraint(
            batch_op.f("uq_validation_items_round_id_public_id"), type_="unique"
        )
        batch_op.drop_column("public_id")
