"""Server-side prepared statements for the worker's hot statements on PostgreSQL.

A statement built with `.execution_options(prepare=True)` is sent, on each database
connection, once as `PREPARE falte_<hash> (<types>) AS <its SQL>`, and from then on as
`EXECUTE falte_<hash> (<its parameters>)`: PostgreSQL parses and plans it once per
connection instead of once per request. A save's statement (the guarded INSERT with its
activity CTE) cost the server 0.72 ms of CPU sent whole and 0.42 ms prepared, measured
one after another on this machine (bench/README.md, save_load).

psycopg2 has no prepared statements of its own (psycopg 3 does, but the stack names
psycopg2), so this is the one place that speaks PREPARE/EXECUTE; SQLAlchemy still builds,
caches and binds the statement, and reads its result. Which names a connection has
prepared lives in the connection's own `info` (SQLAlchemy keeps it with the DBAPI
connection): a new connection, after a restart or a failover, prepares again. SQLite and
statements without the option are left as they are.

Not for a pooler in transaction mode (PgBouncer): its server connections change under a
client's, and prepared statements with them. Heroku Postgres and the compose file connect
directly; a deployment behind such a pooler sets DB_PREPARED_STATEMENTS=0.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Engine

OPTION = "prepare"  # the statement's execution option that asks for it
ENABLED = "prepared_statements"  # the engine's execution option that allows it
_PREPARED = "falte_prepared"  # connection.info key: the names prepared on it
_REWRITTEN = "_falte_prepared"  # the compiled form's attribute: its rewritten texts
_PARAMETER = re.compile(r"%\((\w+)\)s")


def _rewrite(statement: str, context: Any) -> tuple[str, str, str] | None:
    """(name, PREPARE text, EXECUTE text) for one compiled pyformat statement; None when a
    parameter is not one of its binds (an expanding IN list: sent as it is)."""
    compiled = context.compiled
    typed = {name: _type(bind, context.dialect) for bind, name in compiled.bind_names.items()}
    order: list[str] = []

    def number(match: re.Match[str]) -> str:
        key = match.group(1)
        if key not in order:
            order.append(key)
        return f"${order.index(key) + 1}"

    body = _PARAMETER.sub(number, statement).replace("%%", "%")
    if not set(order) <= typed.keys():
        return None
    name = "falte_" + hashlib.sha1(statement.encode(), usedforsecurity=False).hexdigest()[:16]
    prepare = f"PREPARE {name} ({', '.join(typed[key] for key in order)}) AS {body}"
    execute = f"EXECUTE {name} ({', '.join(f'%({key})s' for key in order)})"
    return name, prepare, execute


def _type(bind: Any, dialect: Any) -> str:
    """The parameter's SQL type; `unknown` (PostgreSQL infers it) for an untyped one."""
    if bind.type._isnull:
        return "unknown"
    return bind.type.compile(dialect=dialect)


@event.listens_for(Engine, "do_execute")
def _execute_prepared(cursor, statement, parameters, context) -> bool:
    """Send a marked statement as EXECUTE of its prepared form (PREPARE it first on a
    connection that has not); True when it did, else SQLAlchemy sends it as usual.

    The dialect's do_execute step, not before_cursor_execute: the cursor events (logging,
    the tests' statement counts and fault injection) still see the statement's own SQL."""
    options = context.execution_options
    if (
        not options.get(OPTION)
        or not options.get(ENABLED)
        or context.compiled is None
        or context.dialect.name != "postgresql"
        or not isinstance(parameters, dict)
    ):
        return False
    # Worked out once per compiled form (SQLAlchemy caches those per statement).
    cached = getattr(context.compiled, _REWRITTEN, None)
    if cached is None or cached[0] != statement:
        cached = (statement, _rewrite(statement, context))
        setattr(context.compiled, _REWRITTEN, cached)
    if cached[1] is None:
        return False
    name, prepare, execute = cached[1]
    prepared = context.root_connection.info.setdefault(_PREPARED, set())
    if name not in prepared:
        cursor.execute(prepare)
        prepared.add(name)
    cursor.execute(execute, parameters)
    return True
