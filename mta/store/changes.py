"""The per-account change log behind JMAP state strings (RFC 8620 5.1, 5.2)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from common.db import Conn, execute, fetch_val


async def record(
    conn: Conn,
    address_id: str,
    type_name: str,
    object_ids: Sequence[str],
    change: str,
    now: datetime,
) -> None:
    if not object_ids:
        return
    await execute(
        conn,
        """
        INSERT INTO mta.changes (address_id, type_name, object_id, change, created_at)
        SELECT %s, %s, unnest(%s::uuid[]), %s, %s
        """,
        (address_id, type_name, list(object_ids), change, now),
    )


async def state(conn: Conn, address_id: str, type_name: str) -> str:
    """The account's current state for one type: the id of its latest change, or "0"."""
    value = await fetch_val(
        conn,
        "SELECT max(id) FROM mta.changes WHERE address_id = %s AND type_name = %s",
        (address_id, type_name),
    )
    return str(value or 0)
