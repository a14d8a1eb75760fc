"""Whether the mta schema is there: the daemons refuse to start on an unmigrated database."""

from __future__ import annotations

from common.db import Conn, fetch_val


async def has_table(conn: Conn, table: str) -> bool:
    """Whether the mta schema holds ``table`` (its migration has run)."""
    return await fetch_val(conn, "SELECT to_regclass('mta.' || %s) IS NOT NULL", (table,)) is True
