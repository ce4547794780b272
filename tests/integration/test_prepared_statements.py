"""The worker's hot statements are prepared once per PostgreSQL connection (app.core.prepared):
the server holds one prepared INSERT that ran for every save on a connection, a fresh
connection prepares again, and DB_PREPARED_STATEMENTS=0 turns it off."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from app import create_app
from app.core.extensions import db
from app.imports.document_formats import DocumentInput
from app.imports.document_store import import_documents
from tests.support.apps import dispose_engines, make_test_config
from tests.support.worker_api import csrf, save, start

pytestmark = pytest.mark.parametrize("database_uri", ["postgresql"], indirect=True)

PARAGRAPHS = ("Alpha beta gamma 100% sure.", "Delta epsilon zeta.", "Eta theta iota.")


def _annotation(number: int, start: int, quote: str) -> dict:
    return {
        "id": f"00000000-0000-4000-8000-{number:012d}",
        "category": "ungrammatical",
        "span": {"paragraph_id": 0, "start": start, "end": start + len(quote), "text": quote},
        "paired_span": None,
        "comment": None,
    }


def _prepared_on_server(engine) -> dict[str, tuple[str, int]]:
    """name -> (its PREPARE text, executions: generic + custom plans) of the prepared
    statements of every pooled connection of the engine (pg_prepared_statements is per
    connection)."""
    found: dict[str, tuple[str, int]] = {}
    pool = engine.pool
    connections = [engine.connect() for _ in range(pool.checkedin())]
    for connection in connections:
        rows = connection.execute(
            text(
                "SELECT name, statement, generic_plans + custom_plans"
                " FROM pg_prepared_statements WHERE name LIKE 'falte_%'"
            )
        )
        for name, statement, runs in rows:
            found[name] = (statement, found.get(name, ("", 0))[1] + runs)
    for connection in connections:
        connection.close()
    return found


def test_saves_are_prepared_once_then_executed(app, client):
    import_documents([DocumentInput("doc", "Doc", PARAGRAPHS)])
    token = start(client, "doc")
    engine = db.engines["autocommit"]

    def saves():
        for number, (start_at, quote) in enumerate([(0, "Alpha"), (6, "beta"), (11, "gamma")]):
            answer = save(client, token, _annotation(number, start_at, quote))
            assert answer.status_code == 201, answer.data

    saves()
    # The server holds the guarded INSERT prepared once, and ran it for all three saves.
    inserts = [
        runs
        for statement, runs in _prepared_on_server(engine).values()
        if "INSERT INTO annotations" in statement
    ]
    assert inserts == [3]
    # What was stored is what the API answered: the quotes at their offsets.
    stored = db.session.execute(
        text("SELECT span_start, span_text FROM annotations ORDER BY span_start")
    ).all()
    assert [tuple(row) for row in stored] == [(0, "Alpha"), (6, "beta"), (11, "gamma")]


def test_a_new_connection_prepares_again(app, client):
    import_documents([DocumentInput("doc", "Doc", PARAGRAPHS)])
    token = start(client, "doc")
    assert save(client, token, _annotation(1, 0, "Alpha")).status_code == 201
    # The server restarted or the pool was replaced: nothing is prepared on the new
    # connections, and the next save prepares the statement there before running it.
    dispose_engines()
    engine = db.engines["autocommit"]
    assert _prepared_on_server(engine) == {}
    assert save(client, token, _annotation(2, 6, "beta")).status_code == 201
    assert [runs for _, runs in _prepared_on_server(engine).values()] == [1]
    answer = client.get(f"/api/sessions/{token}")
    assert [a["span"]["text"] for a in answer.get_json()["annotations"]] == ["Alpha", "beta"]


def test_percent_signs_survive_the_rewrite(app, client):
    """A literal `%` in the SQL (escaped `%%` for psycopg2) is PREPAREd as one `%`; a `%`
    in a parameter (a quote) reaches the prepared INSERT as it is."""
    engine = db.engines["autocommit"]
    statement = text("SELECT '100%' || :suffix AS answer").execution_options(prepare=True)
    with engine.connect() as connection:
        for _ in range(2):
            answer = connection.execute(statement, {"suffix": " sure"}).scalar()
            assert answer == "100% sure"
    prepared = [body for body, _ in _prepared_on_server(engine).values() if "100%" in body]
    assert len(prepared) == 1 and "100%%" not in prepared[0], prepared
    import_documents([DocumentInput("doc", "Doc", PARAGRAPHS)])
    token = start(client, "doc")
    answer = save(client, token, _annotation(1, 17, "100%"))
    assert answer.status_code == 201, answer.data
    assert answer.get_json()["span"]["text"] == "100%"
    wrong = save(client, token, _annotation(2, 17, "100x"))
    assert wrong.status_code == 422  # the quote is still checked against the stored text


def test_db_prepared_statements_0_sends_statements_whole(database_uri, monkeypatch):
    monkeypatch.setenv("DB_PREPARED_STATEMENTS", "0")
    application = create_app(make_test_config(database_uri))
    with application.app_context():
        client = application.test_client()
        import_documents([DocumentInput("doc", "Doc", PARAGRAPHS)])
        token = start(client, "doc")
        engine = db.engines["autocommit"]
        for number, (start_at, quote) in enumerate([(0, "Alpha"), (6, "beta"), (11, "gamma")]):
            assert save(client, token, _annotation(number, start_at, quote)).status_code == 201
        assert (
            client.put(
                f"/api/sessions/{token}/position", json={"paragraph_id": 1}, headers=csrf(token)
            ).status_code
            == 200
        )
        assert _prepared_on_server(engine) == {}
        db.session.remove()
        dispose_engines()


def _generic_plans(engine, marker: str) -> list[str]:
    """EXPLAIN of the generic plan (the one a connection keeps after five runs) of each
    prepared statement whose text holds `marker`, on the connection that prepared it."""
    plans = []
    with engine.connect() as connection:
        connection.exec_driver_sql("SET plan_cache_mode = force_generic_plan")
        rows = connection.execute(
            text(
                "SELECT name, cardinality(parameter_types) FROM pg_prepared_statements"
                " WHERE statement LIKE :m"
            ),
            {"m": f"%{marker}%"},
        ).all()
        for name, count in rows:
            nulls = ", ".join(["NULL"] * count)
            lines = connection.exec_driver_sql(f"EXPLAIN EXECUTE {name} ({nulls})").scalars()
            plans.append("\n".join(lines))
        connection.exec_driver_sql("RESET plan_cache_mode")
    return plans


def test_the_saves_duplicate_check_reads_the_sessions_annotations_by_index(app, client):
    # The check that no live annotation of the session has the same category and spans ran
    # inside an OR, where PostgreSQL made it a hashed subplan over a sequential scan of the
    # whole annotations table: every save read every study's annotations.
    import_documents([DocumentInput("doc", "Doc", PARAGRAPHS)])
    token = start(client, "doc")
    for number, (start_at, quote) in enumerate(
        [(0, "Alpha"), (6, "beta"), (11, "gamma"), (0, "Alph"), (6, "bet"), (11, "gam")]
    ):
        assert save(client, token, _annotation(number, start_at, quote)).status_code == 201
    db.session.remove()
    plans = _generic_plans(db.engines["autocommit"], "INSERT INTO annotations")
    assert len(plans) == 1
    assert "Seq Scan on annotations" not in plans[0], plans[0]
    assert "hashed SubPlan" not in plans[0], plans[0]
    assert "ix_annotations_session_paragraph" in plans[0], plans[0]
