"""session outcome

Revision ID: d4a6b0c40004
Revises: c01d82fceacd
Create Date: 2026-11-24 00:40:00

annotation_sessions.outcome: how the worker's part in the study ended (completed,
failed_training, failed_checks, no_consent; NULL while open). Sessions submitted before
outcomes existed completed the study under the only rule there was: they become
`completed`.
"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'd4a6b0c40004'
down_revision = 'c01d82fceacd'
branch_labels = None
depends_on = None

OUTCOME_KNOWN = (
    "outcome IS NULL OR outcome IN "
    "('completed', 'failed_training', 'failed_checks', 'no_consent')"
)


def upgrade():
    with op.batch_alter_table('annotation_sessions', schema=None) as batch_op:
        batch_op.add_column(sa.Column('outcome', sa.String(length=20), nullable=True))
        batch_op.create_check_constraint(op.f('ck_annotation_sessions_outcome_known'), OUTCOME_KNOWN)
    op.execute(
        "UPDATE annotation_sessions SET outcome = 'completed' WHERE status = 'submitted'"
    )


def downgrade():
    with op.batch_alter_table('annotation_sessions', schema=None) as batch_op:
        batch_op.drop_constraint(op.f('ck_annotation_sessions_outcome_known'), type_='check')
        batch_op.drop_column('outcome')
