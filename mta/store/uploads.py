"""Uploaded blobs an address may use (JMAP upload, Blob/copy). Writes ``mta.uploads``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from common.db import Conn, execute, fetch_one
from common.records import Record


@dataclass(frozen=True)
class Upload(Record):
    type: str
    size: int


async def remember(
    conn: Conn, address_id: str, blob_id: str, kind: str, size: int, now: datetime
) -> None:
    """Let ``address_id`` use ``blob_id`` (an upload, or a Blob/copy into it)."""
    await execute(
        conn,
        """
        INSERT INTO mta.uploads (address_id, blob_id, type, size, created_at)
        VALUES (%s, %s, %s, %s, %s)
        ON CONFLICT (address_id, blob_id) DO UPDATE SET created_at = EXCLUDED.created_at
        """,
        (address_id, blob_id, kind, size, now),
    )


async def find(conn: Conn, address_id: str, blob_id: str) -> Upload | None:
    row = await fetch_one(
        conn,
        "SELECT type, size FROM mta.uploads WHERE address_id = %s AND blob_id = %s",
        (address_id, blob_id),
    )
    return Upload.from_optional(row)


async def prune(conn: Conn, before: datetime) -> int:
    """Forget uploads made before ``before`` (their blobs become collectable)."""
    return await execute(conn, "DELETE FROM mta.uploads WHERE created_at < %s", (before,))
