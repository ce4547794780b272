"""consent and surveys

Revision ID: e17a00000001
Revises: e18a00000003
Create Date: 2026-11-24 03:40:00

consent_decisions (one per session: agreed or not, and which consent text) and
survey_answers (one row per session, survey and question): the study steps around the
task (app/crowd/journey.py, app/crowd/surveys/).
"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'e17a00000001'
down_revision = 'e18a00000003'  # chained after issue 18's suggestions at the merge of main
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('consent_decisions',
    sa.Column('session_id', sa.Integer(), nullable=False),
    sa.Column('agreed', sa.Boolean(), nullable=False),
    sa.Column('consent_version', sa.String(length=16), nullable=False),
    sa.Column('decided_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['session_id'], ['annotation_sessions.id'], name=op.f('fk_consent_decisions_session_id_annotation_sessions')),
    sa.PrimaryKeyConstraint('session_id', name=op.f('pk_consent_decisions'))
    )
    op.create_table('survey_answers',
    sa.Column('session_id', sa.Integer(), nullable=False),
    sa.Column('survey', sa.String(length=8), nullable=False),
    sa.Column('question_key', sa.String(length=64), nullable=False),
    sa.Column('question_type', sa.String(length=8), nullable=False),
    sa.Column('answer', sa.JSON(none_as_null=True), nullable=True),
    sa.Column('answered_at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint("survey IN ('before', 'after')", name=op.f('ck_survey_answers_survey_known')),
    sa.CheckConstraint("question_type IN ('choice', 'multi', 'likert', 'text')", name=op.f('ck_survey_answers_question_type_known')),
    sa.ForeignKeyConstraint(['session_id'], ['annotation_sessions.id'], name=op.f('fk_survey_answers_session_id_annotation_sessions')),
    sa.PrimaryKeyConstraint('session_id', 'survey', 'question_key', name=op.f('pk_survey_answers'))
    )


def downgrade():
    op.drop_table('survey_answers')
    op.drop_table('consent_decisions')
