"""training attempts

Revision ID: e17b00000002
Revises: e17a00000001
Create Date: 2026-11-24 03:30:00.000000

training_attempts: one row per "Check my answers" on a practice document (app/crowd/training,
docs/training.md, issue 17 point 1).
"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'e17b00000002'
down_revision = 'e17a00000001'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'training_attempts',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('session_id', sa.Integer(), nullable=False),
        sa.Column('annotator_id', sa.Integer(), nullable=False),
        sa.Column('study_key', sa.String(length=64), nullable=False),
        sa.Column('study_id', sa.String(length=200), nullable=True),
        sa.Column('document_id', sa.Integer(), nullable=False),
        sa.Column('attempt', sa.Integer(), nullable=False),
        sa.Column('spans', sa.JSON(), nullable=False),
        sa.Column('feedback', sa.JSON(), nullable=False),
        sa.Column('recall', sa.Float(), nullable=True),
        sa.Column('precision', sa.Float(), nullable=True),
        sa.Column('passed', sa.Boolean(), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint('attempt >= 1', name=op.f('ck_training_attempts_attempt_positive')),
        sa.ForeignKeyConstraint(
            ['annotator_id'], ['annotators.id'],
            name=op.f('fk_training_attempts_annotator_id_annotators'),
        ),
        sa.ForeignKeyConstraint(
            ['document_id'], ['documents.id'],
            name=op.f('fk_training_attempts_document_id_documents'),
        ),
        sa.ForeignKeyConstraint(
            ['session_id'], ['annotation_sessions.id'],
            name=op.f('fk_training_attempts_session_id_annotation_sessions'),
        ),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_training_attempts')),
        sa.UniqueConstraint(
            'session_id', 'document_id', 'attempt',
            name=op.f('uq_training_attempts_session_id_document_id_attempt'),
        ),
    )
    with op.batch_alter_table('training_attempts', schema=None) as batch_op:
        batch_op.create_index(
            'ix_training_attempts_annotator_study', ['annotator_id', 'study_key'], unique=False
        )
        batch_op.create_index(
            batch_op.f('ix_training_attempts_session_id'), ['session_id'], unique=False
        )


def downgrade():
    with op.batch_alter_table('training_attempts', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_training_attempts_session_id'))
        batch_op.drop_index('ix_training_attempts_annotator_study')
    op.drop_table('training_attempts')
