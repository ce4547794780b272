"""studies as rows: every document, session, suggestion, round and binding in one

Tables studies, taxonomy_versions (a study's taxonomies) and study_researchers (who may
see or change a study).

Revision ID: e30a0000000c
Revises: e31a0000000d
Create Date: 2026-11-25 22:00:00.000000

Issue 30 (app/studies/, docs/crowd-studies.md): the one study a database held so far
becomes the study `default`, open, and every row that belongs to a study is given it:
documents, annotation sessions, suggestions, validation rounds, submission bindings and
identity conflicts. External ids become unique per study (documents, suggestions, round
names) instead of across the database. Every researcher becomes an editor of the default
study. The platform's STUDY_ID of a binding or a conflict, `study_id` until now, is
renamed `platform_study_id`: `study_id` names our study everywhere.

Downgrade keeps the default study's rows; it refuses while another study holds rows
(they would collide on the global unique keys of the older schema).
"""

from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "e30a0000000c"
down_revision = "e31a0000000d"
branch_labels = None
depends_on = None

DEFAULT_SLUG = "default"
# Tables whose rows belong to one study, given the default study's id.
OWNED = (
    "documents",
    "annotation_sessions",
    "suggestions",
    "validation_rounds",
    "submission_bindings",
    "identity_conflicts",
)


def upgrade():
    op.create_table(
        "studies",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("slug", sa.String(length=64), nullable=False),
        sa.Column("title", sa.String(length=200), nullable=False),
        sa.Column("kind", sa.String(length=12), nullable=False),
        sa.Column("status", sa.String(length=10), nullable=False),
        sa.Column("settings", sa.JSON(), nullable=False),
        sa.Column("prolific_study_id", sa.String(length=200), nullable=True),
        sa.Column("prolific_api_token", sa.String(length=200), nullable=True),
        sa.Column("taxonomy_version", sa.String(length=64), nullable=True),
        sa.Column("taxonomy_file", sa.String(length=1000), nullable=True),
        sa.Column("judges_study_id", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "kind IN ('annotation', 'validation')", name=op.f("ck_studies_kind_known")
        ),
        sa.CheckConstraint(
            "status IN ('draft', 'open', 'closed', 'archived')",
            name=op.f("ck_studies_status_known"),
        ),
        sa.ForeignKeyConstraint(
            ["judges_study_id"], ["studies.id"], name=op.f("fk_studies_judges_study_id_studies")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_studies")),
        sa.UniqueConstraint("slug", name=op.f("uq_studies_slug")),
    )
    op.create_table(
        "taxonomy_versions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("study_id", sa.Integer(), nullable=False),
        sa.Column("version", sa.String(length=64), nullable=False),
        sa.Column("yaml_text", sa.Text(), nullable=False),
        sa.Column("source", sa.String(length=1000), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["study_id"],
            ["studies.id"],
            name=op.f("fk_taxonomy_versions_study_id_studies"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_taxonomy_versions")),
        sa.UniqueConstraint(
            "study_id", "version", name=op.f("uq_taxonomy_versions_study_id_version")
        ),
    )
    op.create_table(
        "study_researchers",
        sa.Column("study_id", sa.Integer(), nullable=False),
        sa.Column("researcher_id", sa.Integer(), nullable=False),
        sa.Column("role", sa.String(length=8), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "role IN ('owner', 'editor', 'viewer')", name=op.f("ck_study_researchers_role_known")
        ),
        sa.ForeignKeyConstraint(
            ["researcher_id"],
            ["researchers.id"],
            name=op.f("fk_study_researchers_researcher_id_researchers"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["study_id"],
            ["studies.id"],
            name=op.f("fk_study_researchers_study_id_studies"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("study_id", "researcher_id", name=op.f("pk_study_researchers")),
    )
    default_id = _default_study()

    for table in OWNED:
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.add_column(sa.Column("study_id_new", sa.Integer(), nullable=True))
    # submission_bindings and identity_conflicts called the platform's STUDY_ID study_id.
    for table in ("submission_bindings", "identity_conflicts"):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.alter_column(
                "study_id",
                new_column_name="platform_study_id",
                existing_type=sa.String(length=200),
                existing_nullable=False,
            )
    for table in OWNED:
        op.execute(sa.text(f"UPDATE {table} SET study_id_new = :id").bindparams(id=default_id))
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.alter_column(
                "study_id_new",
                new_column_name="study_id",
                existing_type=sa.Integer(),
                nullable=False,
            )
    _constraints_per_study()


def _default_study():
    """The default study, open, with every researcher its editor; its id."""
    bind = op.get_bind()
    now = datetime.now(UTC)
    studies = sa.table(
        "studies",
        sa.column("id", sa.Integer),
        sa.column("slug", sa.String),
        sa.column("title", sa.String),
        sa.column("kind", sa.String),
        sa.column("status", sa.String),
        sa.column("settings", sa.JSON),
        sa.column("created_at", sa.DateTime(timezone=True)),
        sa.column("updated_at", sa.DateTime(timezone=True)),
    )
    bind.execute(
        sa.insert(studies).values(
            slug=DEFAULT_SLUG,
            title="Default study",
            kind="annotation",
            status="open",
            settings={},
            created_at=now,
            updated_at=now,
        )
    )
    default_id = bind.execute(
        sa.select(studies.c.id).where(studies.c.slug == DEFAULT_SLUG)
    ).scalar_one()
    op.execute(
        sa.text(
            "INSERT INTO study_researchers (study_id, researcher_id, role, created_at) "
            "SELECT :study, id, 'editor', :now FROM researchers"
        ).bindparams(study=default_id, now=now)
    )
    return default_id


def _constraints_per_study():
    with op.batch_alter_table("documents", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("uq_documents_external_id"), type_="unique")
        batch_op.create_unique_constraint(
            op.f("uq_documents_study_id_external_id"), ["study_id", "external_id"]
        )
        batch_op.create_foreign_key(
            op.f("fk_documents_study_id_studies"), "studies", ["study_id"], ["id"]
        )
        batch_op.create_index(op.f("ix_documents_study_id"), ["study_id"], unique=False)
    with op.batch_alter_table("annotation_sessions", schema=None) as batch_op:
        batch_op.create_foreign_key(
            op.f("fk_annotation_sessions_study_id_studies"), "studies", ["study_id"], ["id"]
        )
        batch_op.create_index(op.f("ix_annotation_sessions_study_id"), ["study_id"], unique=False)
        batch_op.drop_index("ix_annotation_sessions_network_status")
        batch_op.create_index(
            "ix_annotation_sessions_study_network_status",
            ["study_id", "network", "status"],
            unique=False,
        )
    with op.batch_alter_table("suggestions", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("uq_suggestions_external_id"), type_="unique")
        batch_op.create_unique_constraint(
            op.f("uq_suggestions_study_id_external_id"), ["study_id", "external_id"]
        )
        batch_op.create_foreign_key(
            op.f("fk_suggestions_study_id_studies"), "studies", ["study_id"], ["id"]
        )
        batch_op.create_index(op.f("ix_suggestions_study_id"), ["study_id"], unique=False)
    with op.batch_alter_table("validation_rounds", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("uq_validation_rounds_name"), type_="unique")
        batch_op.create_unique_constraint(
            op.f("uq_validation_rounds_study_id_name"), ["study_id", "name"]
        )
        batch_op.create_foreign_key(
            op.f("fk_validation_rounds_study_id_studies"), "studies", ["study_id"], ["id"]
        )
        batch_op.create_index(op.f("ix_validation_rounds_study_id"), ["study_id"], unique=False)
    with op.batch_alter_table("submission_bindings", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("pk_submission_bindings"), type_="primary")
        batch_op.create_primary_key(
            op.f("pk_submission_bindings"),
            ["study_id", "platform", "participant", "platform_study_id"],
        )
        batch_op.create_foreign_key(
            op.f("fk_submission_bindings_study_id_studies"), "studies", ["study_id"], ["id"]
        )
    with op.batch_alter_table("identity_conflicts", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("uq_identity_conflicts_submission"), type_="unique")
        batch_op.create_unique_constraint(
            op.f("uq_identity_conflicts_submission"),
            ["study_id", "platform", "participant", "platform_study_id", "submission"],
        )
        batch_op.create_foreign_key(
            op.f("fk_identity_conflicts_study_id_studies"), "studies", ["study_id"], ["id"]
        )
        batch_op.create_index(op.f("ix_identity_conflicts_study_id"), ["study_id"], unique=False)


def downgrade():
    bind = op.get_bind()
    default_id = bind.execute(
        sa.text("SELECT id FROM studies WHERE slug = :slug").bindparams(slug=DEFAULT_SLUG)
    ).scalar()
    for table in OWNED:
        others = bind.execute(
            sa.text(
                f"SELECT COUNT(*) FROM {table} WHERE study_id IS DISTINCT FROM :id"
                if bind.dialect.name == "postgresql"
                else f"SELECT COUNT(*) FROM {table} WHERE study_id IS NOT :id"
            ).bindparams(id=default_id)
        ).scalar()
        if others:
            raise RuntimeError(
                f"{table} holds {others} rows of studies other than {DEFAULT_SLUG!r}: the "
                "schema before studies has room for one study only; export and delete them "
                "first"
            )
    with op.batch_alter_table("identity_conflicts", schema=None) as batch_op:
        batch_op.drop_index(op.f("ix_identity_conflicts_study_id"))
        batch_op.drop_constraint(
            op.f("fk_identity_conflicts_study_id_studies"), type_="foreignkey"
        )
        batch_op.drop_constraint(op.f("uq_identity_conflicts_submission"), type_="unique")
        batch_op.create_unique_constraint(
            op.f("uq_identity_conflicts_submission"),
            ["platform", "participant", "platform_study_id", "submission"],
        )
    with op.batch_alter_table("submission_bindings", schema=None) as batch_op:
        batch_op.drop_constraint(
            op.f("fk_submission_bindings_study_id_studies"), type_="foreignkey"
        )
        batch_op.drop_constraint(op.f("pk_submission_bindings"), type_="primary")
        batch_op.create_primary_key(
            op.f("pk_submission_bindings"), ["platform", "participant", "platform_study_id"]
        )
    with op.batch_alter_table("validation_rounds", schema=None) as batch_op:
        batch_op.drop_index(op.f("ix_validation_rounds_study_id"))
        batch_op.drop_constraint(op.f("fk_validation_rounds_study_id_studies"), type_="foreignkey")
        batch_op.drop_constraint(op.f("uq_validation_rounds_study_id_name"), type_="unique")
        batch_op.create_unique_constraint(op.f("uq_validation_rounds_name"), ["name"])
    with op.batch_alter_table("suggestions", schema=None) as batch_op:
        batch_op.drop_index(op.f("ix_suggestions_study_id"))
        batch_op.drop_constraint(op.f("fk_suggestions_study_id_studies"), type_="foreignkey")
        batch_op.drop_constraint(op.f("uq_suggestions_study_id_external_id"), type_="unique")
        batch_op.create_unique_constraint(op.f("uq_suggestions_external_id"), ["external_id"])
    with op.batch_alter_table("annotation_sessions", schema=None) as batch_op:
        batch_op.drop_index("ix_annotation_sessions_study_network_status")
        batch_op.create_index(
            "ix_annotation_sessions_network_status", ["network", "status"], unique=False
        )
        batch_op.drop_index(op.f("ix_annotation_sessions_study_id"))
        batch_op.drop_constraint(
            op.f("fk_annotation_sessions_study_id_studies"), type_="foreignkey"
        )
    with op.batch_alter_table("documents", schema=None) as batch_op:
        batch_op.drop_index(op.f("ix_documents_study_id"))
        batch_op.drop_constraint(op.f("fk_documents_study_id_studies"), type_="foreignkey")
        batch_op.drop_constraint(op.f("uq_documents_study_id_external_id"), type_="unique")
        batch_op.create_unique_constraint(op.f("uq_documents_external_id"), ["external_id"])
    for table in OWNED:
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.drop_column("study_id")
    for table in ("submission_bindings", "identity_conflicts"):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.alter_column(
                "platform_study_id",
                new_column_name="study_id",
                existing_type=sa.String(length=200),
                existing_nullable=False,
            )
    op.drop_table("study_researchers")
    op.drop_table("taxonomy_versions")
    op.drop_table("studies")
