"""Two query shapes the domains and addresses stores share: a page of rows, an update."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from common.db import Conn, execute, fetch_all, fetch_val
from mail.web.lists import ListParams


async def page(
    conn: Conn,
    *,
    columns: str,
    joined: str,
    table: str,
    where: str,
    args: dict[str, Any],
    params: ListParams,
) -> tuple[list[dict[str, Any]], int]:
    """One page in ``params`` order, and the total; ``where`` may only use ``table``'s alias."""
    total = await fetch_val(conn, f"SELECT count(*) FROM {table} WHERE {where}", args)
    rows = await fetch_all(
        conn,
        f"SELECT {columns} FROM {joined} WHERE {where} ORDER BY {params.order_by}"
        " LIMIT %(limit)s OFFSET %(offset)s",
        {**args, "limit": params.limit, "offset": params.offset},
    )
    return rows, int(total)


async def update_columns(
    conn: Conn,
    table: str,
    row_id: str,
    changes: dict[str, Any],
    now: datetime,
    *,
    allowed: Iterable[str],
) -> None:
    """SET the given columns (names from the caller's whitelist) and updated_at."""
    unknown = set(changes) - set(allowed)
    if unknown:
        raise ValueError(f"not editable: {sorted(unknown)}")
    if not changes:
        return
    sets = ", ".join(f"{column} = %({column})s" for column in changes)
    await execute(
        conn,
        f"UPDATE {table} SET {sets}, updated_at = %(now)s WHERE id = %(id)s",
        {**changes, "now": now, "id": row_id},
    )
