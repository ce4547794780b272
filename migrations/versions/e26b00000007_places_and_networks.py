"""places cannot be hoarded: first work, client networks; checks not announced

annotation_sessions.worked_at (the first real work: until then a session holds its place
for 5 minutes only) and .network, validation_sessions.network (a keyed hash of the
client network, app/crowd/networks.py), with the indexes their caps count by. Sessions from
before keep today's rule: their worked_at is their start.

Planted attention checks were titled "<source title> (attention check)", which workers
saw: they take their source document's title (docs/crowd-studies.md).

Revision ID: e26b00000007
Revises: e20a00000005
Create Date: 2026-12-01 09:00:00.000000

"""

import json

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = "e26b00000007"
down_revision = "e28a0000000a"
branch_labels = None
depends_on = None

CHECK_SUFFIX = " (attention check)"


def upgrade():
    with op.batch_alter_table("annotation_sessions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("worked_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("network", sa.String(length=32), nullable=True))
        batch_op.create_index(
            "ix_annotation_sessions_network_status", ["network", "status"], unique=False
        )
    with op.batch_alter_table("validation_sessions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("network", sa.String(length=32), nullable=True))
        batch_op.create_index(
            "ix_validation_sessions_round_network", ["round_id", "network"], unique=False
        )
    op.execute("UPDATE annotation_sessions SET worked_at = started_at")
    _retitle_planted_checks(op.get_bind())


def _retitle_planted_checks(connection) -> None:
    """ "<title> (attention check)" -> the source document's title (None when it has none,
    as `flask plant-checks` now copies it); the title without the suffix when the source
    is gone."""
    documents = sa.table(
        "documents",
        sa.column("id", sa.Integer),
        sa.column("external_id", sa.String),
        sa.column("title", sa.String),
        sa.column("meta", sa.Text),
    )
    rows = connection.execute(
        sa.select(documents.c.id, documents.c.title, documents.c.meta).where(
            documents.c.title.like(f"%{CHECK_SUFFIX}")
        )
    ).all()
    for document_id, title, meta in rows:
        try:
            source = (json.loads(meta) if isinstance(meta, str) else meta or {}).get("planted_from")
        except (ValueError, AttributeError):
            source = None
        if not source:
            continue  # a title the researchers chose, not one plant-checks wrote
        found = connection.execute(
            sa.select(documents.c.title).where(documents.c.external_id == source)
        ).first()
        new_title = found[0] if found is not None else title[: -len(CHECK_SUFFIX)]
        connection.execute(
            documents.update().where(documents.c.id == document_id).values(title=new_title)
        )


def downgrade():
    with op.batch_alter_table("validation_sessions", schema=None) as batch_op:
        batch_op.drop_index("ix_validation_sessions_round_network")
        batch_op.drop_column("network")
    with op.batch_alter_table("annotation_sessions", schema=None) as batch_op:
        batch_op.drop_index("ix_annotation_sessions_network_status")
        batch_op.drop_column("network")
        batch_op.drop_column("worked_at")
