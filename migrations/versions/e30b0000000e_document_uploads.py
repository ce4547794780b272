"""documents retired from the console, and documents uploaded in it

Revision ID: e30b0000000e
Revises: e30d0000000f
Create Date: 2026-11-26 01:00:00.000000

Issue 30 point 3 (docs/studies.md, "Documents from the browser"): `documents.retired_at`
(a retired document gets no new sessions and stays in exports), and the uploads the
console imports in the background: `document_uploads` (status and progress) and
`document_upload_files` (the files' bytes until the import ends, so that any server's
worker reads them). Existing documents stay active (retired_at NULL).
"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "e30b0000000e"
down_revision = "e30d0000000f"
branch_labels = None
depends_on = None

STATUSES = ("queued", "checking", "storing", "done", "failed")


def upgrade():
    with op.batch_alter_table("documents") as batch:
        batch.add_column(sa.Column("retired_at", sa.DateTime(timezone=True), nullable=True))
    op.create_table(
        "document_uploads",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("study_id", sa.Integer(), nullable=False),
        sa.Column("researcher_id", sa.Integer(), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("names", sa.JSON(), nullable=False),
        sa.Column("dry_run", sa.Boolean(), nullable=False),
        sa.Column("done", sa.Integer(), nullable=False),
        sa.Column("total", sa.Integer(), nullable=False),
        sa.Column("summary", sa.Text(), nullable=True),
        sa.Column("problems", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint(
            f"status IN {STATUSES!r}", name=op.f("ck_document_uploads_status_known")
        ),
        sa.ForeignKeyConstraint(["study_id"], ["studies.id"]),
        sa.ForeignKeyConstraint(["researcher_id"], ["researchers.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_document_uploads_study_id", "document_uploads", ["study_id"])
    op.create_table(
        "document_upload_files",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("upload_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("content", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(["upload_id"], ["document_uploads.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_document_upload_files_upload_id", "document_upload_files", ["upload_id"])


def downgrade():
    op.drop_index("ix_document_upload_files_upload_id", table_name="document_upload_files")
    op.drop_table("document_upload_files")
    op.drop_index("ix_document_uploads_study_id", table_name="document_uploads")
    op.drop_table("document_uploads")
    with op.batch_alter_table("documents") as batch:
        batch.drop_column("retired_at")
