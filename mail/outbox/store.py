"""SQL for ``mail.outbox``: the table of the panel's mail before the outbound queue.

New mail goes on the mta's outbound queue (mail/outbox/service.py); this
table keeps what was queued before, and :func:`unsent` reads it.

The MIME message is stored sealed (:class:`common.crypto.Sealer`, purpose
:data:`SEAL_PURPOSE`): it carries one-time reset and verification links, and
a database reader must not be able to lift a live one. Whoever delivers the
outbox opens it through :func:`unsent` with ``outbox_sealer(SECRET)``.
"""

from __future__ import annotations

from typing import Any

from common.crypto import Sealer
from common.db import Conn, fetch_all

SEAL_PURPOSE = "mail.outbox"


def outbox_sealer(secret: str) -> Sealer:
    return Sealer(secret, SEAL_PURPOSE)


async def unsent(conn: Conn, sealer: Sealer, limit: int = 100) -> list[dict[str, Any]]:
    """Oldest first, each with its ``message`` opened: what the MTA picks up.

    Rows from before sealing keep their plaintext ``message``; rows withdrawn
    by migration 0051 have neither and are skipped.
    """
    rows = await fetch_all(
        conn,
        "SELECT id::text, account_id::text, kind, mail_from, rcpt_to, subject, message,"
        " message_sealed, created_at, attempts FROM mail.outbox WHERE sent_at IS NULL"
        " AND (message_sealed IS NOT NULL OR message IS NOT NULL)"
        " ORDER BY created_at, id LIMIT %s",
        (limit,),
    )
    for row in rows:
        sealed = row.pop("message_sealed")
        row["message"] = sealer.open_bytes(sealed) if sealed else bytes(row["message"])
    return rows
