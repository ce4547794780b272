"""Migration e26a00000006 on data made before it (both databases): the first session of
each submission keeps it, a duplicate (the bug of issue 27 point 2) keeps none, each
Prolific participant is bound to their first submission, sessions already on the task
keep moving, and attempts numbered twice (issue 26 point 2) are renumbered."""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa
from flask_migrate import downgrade, upgrade

from app.core.extensions import db
from tests.support.migrations import tables_as_they_are

BEFORE = "e26b00000007"  # the revision e26a00000006 follows
NOW = datetime(2026, 11, 1, tzinfo=UTC)


def session_row(id_, document, annotator, platform, params, furthest=0):
    return {
        "id": id_,
        "document_id": document,
        "annotator_id": annotator,
        "token": f"token-{id_}",
        "status": "active",
        "platform": platform,
        "completion_code": f"CODE{id_}",
        "position": 0,
        "furthest": furthest,
        "taxonomy_version": "v",
        "is_attention_check": False,
        "platform_params": params,
        "started_at": NOW,
        "last_seen_at": NOW,
        "page_loaded_at": NOW,
    }


def test_the_migration_keeps_earlier_data_valid(app):
    db.session.remove()
    downgrade(revision=BEFORE)
    documents, annotators, sessions, attempts = tables_as_they_are(
        "documents", "annotators", "annotation_sessions", "training_attempts"
    )
    prolific = {"study_id": "s-1", "session_id": "x-1"}
    with db.engine.begin() as connection:
        connection.execute(
            sa.insert(documents),
            [
                {
                    "id": n,
                    "external_id": f"doc-{n}",
                    "content_hash": f"{n:064x}",
                    "paragraph_count": 2,
                    "meta": {},
                    "entities": [],
                    "created_at": NOW,
                    "updated_at": NOW,
                }
                for n in (1, 2, 3)
            ],
        )
        connection.execute(
            sa.insert(annotators),
            [
                {"id": 1, "platform": "prolific", "external_id": "p-1", "created_at": NOW},
                {"id": 2, "platform": "mturk", "external_id": "W-1", "created_at": NOW},
                {"id": 3, "platform": "direct", "external_id": "alice", "created_at": NOW},
            ],
        )
        connection.execute(
            sa.insert(sessions),
            [
                session_row(1, 1, 1, "prolific", prolific, furthest=1),
                session_row(2, 2, 1, "prolific", prolific),  # the same submission again
                session_row(3, 1, 2, "mturk", {"assignment_id": "A-1", "hit_id": "H"}),
                session_row(4, 1, 3, "direct", {}),
                session_row(5, 3, 1, "prolific", {"study_id": "s-1", "session_id": "x-2"}),
            ],
        )
        connection.execute(
            sa.insert(attempts),
            [
                {
                    "id": n,
                    "session_id": session,
                    "annotator_id": 3 if session == 4 else 1,
                    "study_key": "k",
                    "document_id": 3,
                    "attempt": 1,
                    "passed": False,
                    "spans": [],
                    "feedback": [],
                    "created_at": NOW,
                }
                for n, session in ((1, 1), (2, 2), (3, 4), (4, 5))
            ],
        )
    upgrade(revision="e26a00000006")
    with db.engine.connect() as connection:
        rows = connection.execute(
            sa.text(
                "SELECT id, submission, task_opened_at IS NOT NULL FROM annotation_sessions "
                "ORDER BY id"
            )
        ).all()
        assert [tuple(r) for r in rows] == [
            (1, "x-1", True),  # moved: on the task already
            (2, None, False),  # a second session of submission x-1 keeps no submission
            (3, "A-1", False),
            (4, None, False),
            (5, "x-2", False),
        ]
        bindings = connection.execute(
            sa.text("SELECT platform, participant, study_id, submission FROM submission_bindings")
        ).all()
        assert [tuple(b) for b in bindings] == [("prolific", "p-1", "s-1", "x-1")]
        numbered = connection.execute(
            sa.text("SELECT id, submission, attempt FROM training_attempts ORDER BY id")
        ).all()
        assert [tuple(n) for n in numbered] == [
            (1, "x-1", 1),
            (2, "x-1", 2),  # attempt 1 twice under one submission: now 1 and 2
            (3, "", 1),
            (4, "x-2", 1),
        ]
    upgrade()  # and on to the head, for the tests after this one
