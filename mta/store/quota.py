"""Quota usage per address: bytes and message count of stored mail."""

from __future__ import annotations

from common.db import Conn, execute, fetch_one


async def add(conn: Conn, address_id: str, size: int, count: int = 1) -> None:
    await execute(
        conn,
        """
        INSERT INTO mta.quota_usage (address_id, used_bytes, emails) VALUES (%s, %s, %s)
        ON CONFLICT (address_id) DO UPDATE
           SET used_bytes = mta.quota_usage.used_bytes + EXCLUDED.used_bytes,
               emails = mta.quota_usage.emails + EXCLUDED.emails
        """,
        (address_id, size, count),
    )


async def usage(conn: Conn, address_id: str) -> tuple[int, int]:
    row = await fetch_one(
        conn,
        "SELECT used_bytes, emails FROM mta.quota_usage WHERE address_id = %s",
        (address_id,),
    )
    return (int(row["used_bytes"]), int(row["emails"])) if row else (0, 0)


async def usage_of(conn: Conn, address_ids: list[str]) -> tuple[int, int]:
    """Bytes and messages of several addresses together (an account's, for the Overview)."""
    row = await fetch_one(
        conn,
        "SELECT coalesce(sum(used_bytes), 0) AS b, coalesce(sum(emails), 0) AS n"
        " FROM mta.quota_usage WHERE address_id = ANY(%s::uuid[])",
        (address_ids,),
    )
    return (int(row["b"]), int(row["n"])) if row else (0, 0)
