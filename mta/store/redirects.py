"""Sieve redirects waiting for the outbound queue (which comes with sending)."""

from __future__ import annotations

from datetime import datetime

from common.db import Conn, execute


async def record(
    conn: Conn,
    *,
    address_id: str,
    filter_id: str | None,
    blob_id: str,
    mail_from: str,
    rcpt_to: str,
    now: datetime,
) -> None:
    await execute(
        conn,
        """
        INSERT INTO mta.redirects (address_id, filter_id, blob_id, mail_from, rcpt_to, created_at)
        VALUES (%s, %s, %s, %s, %s, %s)
        """,
        (address_id, filter_id, blob_id, mail_from, rcpt_to, now),
    )
