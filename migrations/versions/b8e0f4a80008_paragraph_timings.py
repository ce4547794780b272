"""paragraph timings

Revision ID: b8e0f4a80008
Revises: b2e4f8a20002
Create Date: 2026-11-24 01:23:09.229350

paragraph_timings: time per paragraph (app/annotate/timings.py), one row per session and
paragraph shown. Chained after d4a6b0c40004 (session outcome), the head on this branch.
"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'b8e0f4a80008'
down_revision = 'b2e4f8a20002'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('paragraph_timings',
    sa.Column('session_id', sa.Integer(), nullable=False),
    sa.Column('paragraph_id', sa.Integer(), nullable=False),
    sa.Column('first_shown_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('left_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('visit_started', sa.Float(), nullable=True),
    sa.Column('seconds_visible', sa.Float(), nullable=False),
    sa.Column('active_seconds', sa.Float(), nullable=False),
    sa.CheckConstraint('paragraph_id >= 0', name=op.f('ck_paragraph_timings_paragraph_nonnegative')),
    sa.CheckConstraint('seconds_visible >= 0 AND active_seconds >= 0', name=op.f('ck_paragraph_timings_seconds_nonnegative')),
    sa.ForeignKeyConstraint(['session_id'], ['annotation_sessions.id'], name=op.f('fk_paragraph_timings_session_id_annotation_sessions')),
    sa.PrimaryKeyConstraint('session_id', 'paragraph_id', name=op.f('pk_paragraph_timings'))
    )


def downgrade():
    op.drop_table('paragraph_timings')
