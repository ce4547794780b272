"""Migration e30a0000000c on a database made by the one before it, with data in it (both
databases): the single study becomes the study `default`, open, every row that belongs
to a study is given it, nothing is lost, every researcher becomes its editor, and
external ids become unique per study instead of across the database. Downgrading keeps
the default study's rows."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import sqlalchemy as sa
from flask_migrate import downgrade, upgrade

from app.core.extensions import db

BEFORE = "e31a0000000d"  # the revision e30a0000000c follows
NOW = datetime(2026, 11, 1, tzinfo=UTC)


def _table(name, *columns, json=(), moments=()):
    return sa.table(
        name,
        *(sa.column(c) for c in columns),
        *(sa.column(c, sa.JSON) for c in json),
        *(sa.column(c, sa.DateTime(timezone=True)) for c in moments),
    )


documents = _table(
    "documents",
    "id",
    "external_id",
    "content_hash",
    "paragraph_count",
    json=("meta", "entities"),
    moments=("created_at", "updated_at"),
)
paragraphs = _table("paragraphs", "id", "document_id", "position", "text")
annotators = _table("annotators", "id", "platform", "external_id", moments=("created_at",))
researchers = _table(
    "researchers", "id", "email", "password_hash", "session_version", moments=("created_at",)
)
sessions = _table(
    "annotation_sessions",
    "id",
    "document_id",
    "annotator_id",
    "token",
    "status",
    "platform",
    "completion_code",
    "position",
    "furthest",
    "taxonomy_version",
    "is_attention_check",
    "network",
    "submission",
    json=("platform_params",),
    moments=("started_at", "last_seen_at"),
)
annotations = _table(
    "annotations",
    "id",
    "session_id",
    "client_id",
    "paragraph_id",
    "span_start",
    "span_end",
    "span_text",
    "category",
    "origin",
    moments=("created_at",),
)
suggestions = _table(
    "suggestions",
    "id",
    "external_id",
    "source",
    "document_id",
    "paragraph_id",
    "span_start",
    "span_end",
    "span_text",
    "category",
    "ambiguous",
    json=("labels",),
    moments=("created_at",),
)
rounds = _table(
    "validation_rounds",
    "id",
    "name",
    "judgments_per_item",
    json=("settings",),
    moments=("created_at",),
)
bindings = _table(
    "submission_bindings",
    "platform",
    "participant",
    "study_id",
    "submission",
    moments=("created_at",),
)
conflicts = _table(
    "identity_conflicts",
    "id",
    "platform",
    "participant",
    "study_id",
    "bound_submission",
    "submission",
    "arrivals",
    moments=("first_seen_at", "last_seen_at"),
)

OWNED = (
    "documents",
    "annotation_sessions",
    "suggestions",
    "validation_rounds",
    "submission_bindings",
    "identity_conflicts",
)
COUNTED = (*OWNED, "paragraphs", "annotations", "annotators", "researchers")


def _fill(connection) -> None:
    connection.execute(
        sa.insert(documents),
        [
            {
                "id": n,
                "external_id": f"doc-{n}",
                "content_hash": f"{n:064x}",
                "paragraph_count": 1,
                "meta": {},
                "entities": [],
                "created_at": NOW,
                "updated_at": NOW,
            }
            for n in (1, 2)
        ],
    )
    connection.execute(
        sa.insert(paragraphs),
        [{"id": n, "document_id": n, "position": 0, "text": "Alpha beta."} for n in (1, 2)],
    )
    connection.execute(
        sa.insert(annotators),
        [{"id": 1, "platform": "prolific", "external_id": "p-1", "created_at": NOW}],
    )
    connection.execute(
        sa.insert(researchers),
        [
            {
                "id": n,
                "email": f"r{n}@example.org",
                "password_hash": "x",
                "session_version": 0,
                "created_at": NOW,
            }
            for n in (1, 2)
        ],
    )
    connection.execute(
        sa.insert(sessions),
        [
            {
                "id": 1,
                "document_id": 1,
                "annotator_id": 1,
                "token": "token-1",
                "status": "active",
                "platform": "prolific",
                "completion_code": "CODE1",
                "position": 0,
                "furthest": 0,
                "taxonomy_version": "v1",
                "is_attention_check": False,
                "network": "net-1",
                "submission": "x-1",
                "platform_params": {"study_id": "s-1", "session_id": "x-1"},
                "started_at": NOW,
                "last_seen_at": NOW,
            }
        ],
    )
    connection.execute(
        sa.insert(annotations),
        [
            {
                "id": 1,
                "session_id": 1,
                "client_id": "00000000-0000-4000-8000-000000000001",
                "paragraph_id": 0,
                "span_start": 0,
                "span_end": 5,
                "span_text": "Alpha",
                "category": "ungrammatical",
                "origin": "worker",
                "created_at": NOW,
            }
        ],
    )
    connection.execute(
        sa.insert(suggestions),
        [
            {
                "id": 1,
                "external_id": "s-1",
                "source": "model",
                "document_id": 2,
                "paragraph_id": 0,
                "span_start": 6,
                "span_end": 10,
                "span_text": "beta",
                "category": "ungrammatical",
                "ambiguous": False,
                "labels": ["ungrammatical"],
                "created_at": NOW,
            }
        ],
    )
    connection.execute(
        sa.insert(rounds),
        [{"id": 1, "name": "r1", "judgments_per_item": 1, "settings": {}, "created_at": NOW}],
    )
    connection.execute(
        sa.insert(bindings),
        [
            {
                "platform": "prolific",
                "participant": "p-1",
                "study_id": "s-1",
                "submission": "x-1",
                "created_at": NOW,
            }
        ],
    )
    connection.execute(
        sa.insert(conflicts),
        [
            {
                "id": 1,
                "platform": "prolific",
                "participant": "p-1",
                "study_id": "s-1",
                "bound_submission": "x-1",
                "submission": "x-2",
                "arrivals": 2,
                "first_seen_at": NOW,
                "last_seen_at": NOW,
            }
        ],
    )


def _counts(connection) -> dict[str, int]:
    return {
        table: connection.execute(sa.text(f"SELECT COUNT(*) FROM {table}")).scalar()
        for table in COUNTED
    }


def test_the_single_study_becomes_the_default_study_and_nothing_is_lost(app):
    db.session.remove()
    downgrade(revision=BEFORE)
    with db.engine.begin() as connection:
        _fill(connection)
        before = _counts(connection)
    upgrade(revision="e30a0000000c")
    with db.engine.begin() as connection:
        assert _counts(connection) == before
        study = connection.execute(sa.text("SELECT id, slug, kind, status FROM studies")).one()
        assert tuple(study)[1:] == ("default", "annotation", "open")
        for table in OWNED:
            ids = connection.execute(sa.text(f"SELECT DISTINCT study_id FROM {table}")).all()
            assert [tuple(row) for row in ids] == [(study.id,)], table
        editors = connection.execute(
            sa.text("SELECT researcher_id, role FROM study_researchers ORDER BY researcher_id")
        ).all()
        assert [tuple(row) for row in editors] == [(1, "editor"), (2, "editor")]
        # Prolific's STUDY_ID is kept under its new name.
        binding = connection.execute(
            sa.text("SELECT study_id, platform_study_id, submission FROM submission_bindings")
        ).one()
        assert tuple(binding) == (study.id, "s-1", "x-1")
        conflict = connection.execute(
            sa.text("SELECT study_id, platform_study_id, submission FROM identity_conflicts")
        ).one()
        assert tuple(conflict) == (study.id, "s-1", "x-2")
        # External ids are unique per study now: another study may hold doc-1 and r1 ...
        connection.execute(
            sa.text(
                "INSERT INTO studies (slug, title, kind, status, settings, created_at,"
                " updated_at) VALUES ('pilot', 'Pilot', 'annotation', 'draft', '{}', :now, :now)"
            ),
            {"now": NOW},
        )
        pilot = connection.execute(sa.text("SELECT id FROM studies WHERE slug = 'pilot'")).scalar()
        connection.execute(
            sa.text(
                "INSERT INTO documents (id, study_id, external_id, content_hash, paragraph_count,"
                " meta, entities, created_at, updated_at)"
                " VALUES (10, :study, 'doc-1', :hash, 1, '{}', '[]', :now, :now)"
            ),
            {"study": pilot, "hash": "f" * 64, "now": NOW},
        )
        connection.execute(
            sa.text(
                "INSERT INTO validation_rounds (id, study_id, name, judgments_per_item, settings,"
                " created_at) VALUES (10, :study, 'r1', 1, '{}', :now)"
            ),
            {"study": pilot, "now": NOW},
        )
    # ... but not twice in one study.
    with pytest.raises(sa.exc.IntegrityError), db.engine.begin() as connection:
        connection.execute(
            sa.text(
                "INSERT INTO documents (id, study_id, external_id, content_hash, paragraph_count,"
                " meta, entities, created_at, updated_at)"
                " VALUES (11, :study, 'doc-1', :hash, 1, '{}', '[]', :now, :now)"
            ),
            {"study": pilot, "hash": "e" * 64, "now": NOW},
        )
    # Downgrading refuses while another study holds rows, then keeps the default study's.
    # (Flask-Migrate logs the migration's error and exits.)
    with pytest.raises(SystemExit):
        downgrade(revision=BEFORE)
    with db.engine.begin() as connection:
        assert connection.execute(sa.text("SELECT COUNT(*) FROM studies")).scalar() == 2
    with db.engine.begin() as connection:
        connection.execute(sa.text("DELETE FROM documents WHERE study_id = :s"), {"s": pilot})
        connection.execute(
            sa.text("DELETE FROM validation_rounds WHERE study_id = :s"), {"s": pilot}
        )
    downgrade(revision=BEFORE)
    with db.engine.begin() as connection:
        assert _counts(connection) == before
        binding = connection.execute(
            sa.text("SELECT study_id, submission FROM submission_bindings")
        ).one()
        assert tuple(binding) == ("s-1", "x-1")
    upgrade()
