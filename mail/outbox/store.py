"""SQL for ``mail.outbox``."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from common.db import Conn, fetch_all, fetch_val


async def insert(
    conn: Conn,
    *,
    account_id: str | None,
    kind: str,
    mail_from: str,
    rcpt_to: str,
    subject: str,
    message: bytes,
    now: datetime,
) -> str:
    return str(
        await fetch_val(
            conn,
            "INSERT INTO mail.outbox (account_id, kind, mail_from, rcpt_to, subject, message,"
            " created_at) VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING id",
            (account_id, kind, mail_from, rcpt_to, subject, message, now),
        )
    )


async def unsent(conn: Conn, limit: int = 100) -> list[dict[str, Any]]:
    """Oldest first: what the MTA picks up."""
    rows = await fetch_all(
        conn,
        "SELECT id::text, account_id::text, kind, mail_from, rcpt_to, subject, message,"
        " created_at, attempts FROM mail.outbox WHERE sent_at IS NULL"
        " ORDER BY created_at, id LIMIT %s",
        (limit,),
    )
    for row in rows:
        row["message"] = bytes(row["message"])
    return rows
