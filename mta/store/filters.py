"""Sieve filters of an address (SQL for the panel routes and for delivery)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from common.db import Conn, execute, fetch_all, fetch_one, fetch_val
from common.records import Record

COLUMNS = """f.id::text, f.account_id::text, f.address_id::text, f.name, f.script, f.enabled,
             f.position, f.created_at, f.updated_at"""


@dataclass(frozen=True)
class Filter(Record):
    """A Sieve filter of an address; the account is the panel's owner check."""

    id: str
    account_id: str
    address_id: str
    name: str
    script: str
    enabled: bool
    position: int
    created_at: datetime
    updated_at: datetime


# Public sort name -> SQL, for the panel's list parameters.
SORTS = {
    "created_at": "f.created_at",
    "updated_at": "f.updated_at",
    "name": "lower(f.name)",
    "position": "f.position",
}


async def insert(
    conn: Conn,
    *,
    account_id: str,
    address_id: str,
    name: str,
    script: str,
    enabled: bool,
    position: int,
    now: datetime,
) -> Filter:
    row = await fetch_one(
        conn,
        """
        INSERT INTO mta.filters
            (account_id, address_id, name, script, enabled, position, created_at, updated_at)
        VALUES (%s, %s, %s, %s, %s, %s, %s, %s) RETURNING id
        """,
        (account_id, address_id, name, script, enabled, position, now, now),
    )
    assert row is not None
    found = await get(conn, str(row["id"]))
    assert found is not None
    return found


async def get(conn: Conn, filter_id: str) -> Filter | None:
    row = await fetch_one(
        conn, f"SELECT {COLUMNS} FROM mta.filters f WHERE f.id = %s", (filter_id,)
    )
    return Filter.from_optional(row)


async def update(
    conn: Conn, filter_id: str, fields: dict[str, Any], now: datetime
) -> Filter | None:
    allowed = {"name", "script", "enabled", "position", "address_id"}
    sets = [f"{k} = %({k})s" for k in fields if k in allowed]
    if sets:
        await fetch_val(
            conn,
            f"UPDATE mta.filters SET {', '.join(sets)}, updated_at = %(now)s "
            "WHERE id = %(id)s RETURNING id",
            {**fields, "now": now, "id": filter_id},
        )
    return await get(conn, filter_id)


async def delete(conn: Conn, filter_id: str) -> bool:
    return bool(
        await fetch_val(conn, "DELETE FROM mta.filters WHERE id = %s RETURNING id", (filter_id,))
    )


async def page(
    conn: Conn,
    account_id: str,
    *,
    order_by: str,
    limit: int,
    offset: int,
    search: str | None = None,
    address_id: str | None = None,
) -> tuple[list[Filter], int]:
    """One page of an account's filters; ``order_by`` comes from SORTS only."""
    where = ["f.account_id = %(acc)s"]
    if search:
        where.append("f.name ILIKE %(search)s")
    if address_id:
        where.append("f.address_id = %(addr)s")
    clause = " AND ".join(where)
    params = {"acc": account_id, "search": search, "addr": address_id, "lim": limit, "off": offset}
    rows = await fetch_all(
        conn,
        f"SELECT {COLUMNS} FROM mta.filters f WHERE {clause} "
        f"ORDER BY {order_by} LIMIT %(lim)s OFFSET %(off)s",
        params,
    )
    total = await fetch_val(conn, f"SELECT count(*) FROM mta.filters f WHERE {clause}", params)
    return [Filter.from_row(row) for row in rows], int(total)


async def enabled_for(conn: Conn, address_id: str) -> list[Filter]:
    """The filters delivery runs for an address, in order."""
    rows = await fetch_all(
        conn,
        f"""
        SELECT {COLUMNS} FROM mta.filters f
         WHERE f.address_id = %s AND f.enabled
         ORDER BY f.position, f.created_at, f.id
        """,
        (address_id,),
    )
    return [Filter.from_row(row) for row in rows]


async def for_address(conn: Conn, address_id: str) -> list[Filter]:
    """Every filter of an address, enabled or not, in the order delivery runs them."""
    rows = await fetch_all(
        conn,
        f"""
        SELECT {COLUMNS} FROM mta.filters f
         WHERE f.address_id = %s
         ORDER BY f.position, f.created_at, f.id
        """,
        (address_id,),
    )
    return [Filter.from_row(row) for row in rows]


async def enable_only(conn: Conn, address_id: str, filter_id: str | None, now: datetime) -> None:
    """Enable ``filter_id`` and disable every other filter of the address (None: all off)."""
    await execute(
        conn,
        """
        UPDATE mta.filters SET enabled = (id IS NOT DISTINCT FROM %(f)s::uuid), updated_at = %(now)s
         WHERE address_id = %(a)s AND enabled <> (id IS NOT DISTINCT FROM %(f)s::uuid)
        """,
        {"f": filter_id, "a": address_id, "now": now},
    )
