"""Quota usage per address: bytes and message count of stored mail.

The only module that writes ``mta.quota_usage``. The statements that store
an email (mta/store/emails.py) or a delivery batch's counts
(mta/store/counters.py) add to it in the same round trip with the fragments
below; destroying emails gives the bytes back with :func:`release`.
"""

from __future__ import annotations

from common.db import Conn, execute, fetch_one

# One email's bytes added, as the last common table expression of a WITH:
# parameters %(a)s (the address) and %(size)s.
ADD_ONE_CTE = """
        usage AS (
            INSERT INTO mta.quota_usage (address_id, used_bytes, emails) VALUES (%(a)s, %(size)s, 1)
            ON CONFLICT (address_id) DO UPDATE
               SET used_bytes = mta.quota_usage.used_bytes + EXCLUDED.used_bytes,
                   emails = mta.quota_usage.emails + 1
        )"""

# Usage deltas added, from ``{source}``: rows (a, b, n) of address, bytes and
# emails, summed per address and written in address order (no deadlock between
# processes; mta/store/counters.py applies a delivery batch's with it).
ADD_FROM = """
    INSERT INTO mta.quota_usage (address_id, used_bytes, emails)
    SELECT a, sum(b), sum(n) FROM {source} AS q GROUP BY a
    ORDER BY a
    ON CONFLICT (address_id) DO UPDATE
       SET used_bytes = mta.quota_usage.used_bytes + EXCLUDED.used_bytes,
           emails = mta.quota_usage.emails + EXCLUDED.emails
"""


async def release(conn: Conn, address_id: str, size: int, count: int) -> None:
    """Give back the bytes and the count of destroyed emails (never below zero)."""
    await execute(
        conn,
        """
        UPDATE mta.quota_usage
           SET used_bytes = greatest(0, used_bytes - %s), emails = greatest(0, emails - %s)
         WHERE address_id = %s
        """,
        (size, count, address_id),
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
