"""adjudication decisions

Revision ID: a7d9e3f70007
Revises: b8e0f4a80008
Create Date: 2026-11-24 01:00:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'a7d9e3f70007'
down_revision = 'b8e0f4a80008'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'adjudication_decisions',
        sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
        sa.Column('document_id', sa.Integer(), nullable=False),
        sa.Column('client_id', sa.String(length=36), nullable=False),
        sa.Column('candidate_key', sa.String(length=80), nullable=False),
        sa.Column('paragraph_id', sa.Integer(), nullable=False),
        sa.Column('decision', sa.String(length=10), nullable=False),
        sa.Column('boundary', sa.String(length=250), nullable=True),
        sa.Column('result', sa.JSON(none_as_null=True), nullable=True),
        sa.Column('annotators', sa.JSON(), nullable=False),
        sa.Column('annotation_ids', sa.JSON(), nullable=False),
        sa.Column('note', sa.Text(), nullable=True),
        sa.Column('decided_by_id', sa.Integer(), nullable=False),
        sa.Column('decided_at', sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "decision IN ('accept', 'reject', 'merge', 'own')",
            name=op.f('ck_adjudication_decisions_decision_known'),
        ),
        sa.ForeignKeyConstraint(
            ['decided_by_id'], ['researchers.id'],
            name=op.f('fk_adjudication_decisions_decided_by_id_researchers'),
        ),
        sa.ForeignKeyConstraint(
            ['document_id'], ['documents.id'],
            name=op.f('fk_adjudication_decisions_document_id_documents'), ondelete='CASCADE',
        ),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_adjudication_decisions')),
        sa.UniqueConstraint(
            'document_id', 'client_id',
            name=op.f('uq_adjudication_decisions_document_id_client_id'),
        ),
    )
    with op.batch_alter_table('adjudication_decisions', schema=None) as batch_op:
        batch_op.create_index(
            'ix_adjudication_decisions_document_candidate',
            ['document_id', 'candidate_key'], unique=False,
        )


def downgrade():
    with op.batch_alter_table('adjudication_decisions', schema=None) as batch_op:
        batch_op.drop_index('ix_adjudication_decisions_document_candidate')
    op.drop_table('adjudication_decisions')
