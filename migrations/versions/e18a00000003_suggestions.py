"""suggestions

Revision ID: e18a00000003
Revises: a7d9e3f70007
Create Date: 2026-11-24 03:20:00

Model suggestions (issue 18): the `suggestions` table (imported model annotations), the
workers' rejections of them, the annotation's `suggestion_id` and `origin` (worker,
suggestion-accepted, suggestion-edited; existing rows are the workers' own) and the
session's suggestions `arm`.
"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'e18a00000003'
down_revision = 'a7d9e3f70007'
branch_labels = None
depends_on = None

BIG_ID = sa.BigInteger().with_variant(sa.Integer(), 'sqlite')
PAIRED = (
    "(paired_paragraph_id IS NULL AND paired_start IS NULL AND paired_end IS NULL"
    " AND paired_text IS NULL) OR (paired_paragraph_id IS NOT NULL"
    " AND paired_start IS NOT NULL AND paired_end IS NOT NULL"
    " AND paired_text IS NOT NULL AND paired_start < paired_end)"
)


def upgrade():
    op.create_table(
        'suggestions',
        sa.Column('id', BIG_ID, nullable=False),
        sa.Column('external_id', sa.String(length=200), nullable=False),
        sa.Column('source', sa.String(length=100), nullable=False),
        sa.Column('document_id', sa.Integer(), nullable=False),
        sa.Column('paragraph_id', sa.Integer(), nullable=False),
        sa.Column('span_start', sa.Integer(), nullable=False),
        sa.Column('span_end', sa.Integer(), nullable=False),
        sa.Column('span_text', sa.Text(), nullable=False),
        sa.Column('category', sa.String(length=64), nullable=False),
        sa.Column('labels', sa.JSON(), nullable=False),
        sa.Column('paired_paragraph_id', sa.Integer(), nullable=True),
        sa.Column('paired_start', sa.Integer(), nullable=True),
        sa.Column('paired_end', sa.Integer(), nullable=True),
        sa.Column('paired_text', sa.Text(), nullable=True),
        sa.Column('question', sa.Text(), nullable=True),
        sa.Column('comment', sa.Text(), nullable=True),
        sa.Column('ambiguous', sa.Boolean(), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            'span_start >= 0 AND span_start < span_end', name=op.f('ck_suggestions_span_ordered')
        ),
        sa.CheckConstraint(PAIRED, name=op.f('ck_suggestions_paired_complete_or_absent')),
        sa.ForeignKeyConstraint(
            ['document_id'], ['documents.id'], name=op.f('fk_suggestions_document_id_documents')
        ),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_suggestions')),
        sa.UniqueConstraint('external_id', name=op.f('uq_suggestions_external_id')),
    )
    with op.batch_alter_table('suggestions', schema=None) as batch_op:
        batch_op.create_index(
            'ix_suggestions_document_paragraph', ['document_id', 'paragraph_id'], unique=False
        )
    op.create_table(
        'suggestion_rejections',
        sa.Column('id', BIG_ID, nullable=False),
        sa.Column('session_id', sa.Integer(), nullable=False),
        sa.Column('suggestion_id', BIG_ID, nullable=False),
        sa.Column('client_id', sa.String(length=36), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('withdrawn_at', sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ['session_id'], ['annotation_sessions.id'],
            name=op.f('fk_suggestion_rejections_session_id_annotation_sessions'),
        ),
        sa.ForeignKeyConstraint(
            ['suggestion_id'], ['suggestions.id'],
            name=op.f('fk_suggestion_rejections_suggestion_id_suggestions'),
        ),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_suggestion_rejections')),
        sa.UniqueConstraint(
            'session_id', 'client_id', name=op.f('uq_suggestion_rejections_session_id_client_id')
        ),
    )
    with op.batch_alter_table('suggestion_rejections', schema=None) as batch_op:
        batch_op.create_index(
            'ix_suggestion_rejections_session_suggestion',
            ['session_id', 'suggestion_id'], unique=False,
        )
    with op.batch_alter_table('annotations', schema=None) as batch_op:
        batch_op.add_column(sa.Column('suggestion_id', BIG_ID, nullable=True))
        batch_op.add_column(
            sa.Column('origin', sa.String(length=20), server_default='worker', nullable=False)
        )
        batch_op.create_foreign_key(
            batch_op.f('fk_annotations_suggestion_id_suggestions'),
            'suggestions', ['suggestion_id'], ['id'],
        )
        batch_op.create_check_constraint(
            op.f('ck_annotations_origin_known'),
            "origin IN ('worker', 'suggestion-accepted', 'suggestion-edited')",
        )
        batch_op.create_check_constraint(
            op.f('ck_annotations_origin_matches_suggestion'),
            "(origin = 'worker') = (suggestion_id IS NULL)",
        )
    with op.batch_alter_table('annotation_sessions', schema=None) as batch_op:
        batch_op.add_column(sa.Column('arm', sa.String(length=20), nullable=True))


def downgrade():
    with op.batch_alter_table('annotation_sessions', schema=None) as batch_op:
        batch_op.drop_column('arm')
    with op.batch_alter_table('annotations', schema=None) as batch_op:
        batch_op.drop_constraint(op.f('ck_annotations_origin_matches_suggestion'), type_='check')
        batch_op.drop_constraint(op.f('ck_annotations_origin_known'), type_='check')
        batch_op.drop_constraint(
            batch_op.f('fk_annotations_suggestion_id_suggestions'), type_='foreignkey'
        )
        batch_op.drop_column('origin')
        batch_op.drop_column('suggestion_id')
    with op.batch_alter_table('suggestion_rejections', schema=None) as batch_op:
        batch_op.drop_index('ix_suggestion_rejections_session_suggestion')
    op.drop_table('suggestion_rejections')
    with op.batch_alter_table('suggestions', schema=None) as batch_op:
        batch_op.drop_index('ix_suggestions_document_paragraph')
    op.drop_table('suggestions')
