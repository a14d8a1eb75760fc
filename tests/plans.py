"""The generic plan PostgreSQL caches for a connection's prepared statement."""

from __future__ import annotations

from common.db import Conn, fetch_all


async def generic_plan(conn: Conn, fragment: str) -> str:
    """EXPLAIN of the connection's one prepared statement whose text contains ``fragment``.

    Run ``SET plan_cache_mode = force_generic_plan`` on the connection first:
    that is the plan every pooled connection settles on after five executions.
    """
    rows = await fetch_all(
        conn,
        "SELECT name, cardinality(parameter_types) AS n FROM pg_prepared_statements"
        " WHERE statement LIKE %s",
        (f"%{fragment}%",),
    )
    assert len(rows) == 1, rows
    args = ", ".join(["NULL"] * rows[0]["n"])
    plan = await fetch_all(conn, f"EXPLAIN EXECUTE {rows[0]['name']}({args})")
    return "\n".join(row["QUERY PLAN"] for row in plan)
