"""SQL for content.preview_snapshots (UNLOGGED; tokens stored only as SHA-256)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from common.db import Conn, Json, execute, fetch_all, fetch_one
from common.records import Record


@dataclass(frozen=True)
class Snapshot(Record):
    entry_id: str
    # The entry's columns as the preview shows them (service.py snapshot_of).
    snapshot: dict[str, Any]
    expires_at: datetime


async def make_room(conn: Conn, now: datetime, size: int, *, most: int, total: int) -> None:
    """Drop expired snapshots, then the oldest until one of ``size`` bytes fits.

    Creators are serialised by the table lock, so two of them cannot both
    count the same free room.
    """
    await execute(conn, "LOCK TABLE content.preview_snapshots IN SHARE ROW EXCLUSIVE MODE")
    await execute(conn, "DELETE FROM content.preview_snapshots WHERE expires_at <= %s", (now,))
    rows = await fetch_all(
        conn,
        "SELECT token_hash, size FROM content.preview_snapshots ORDER BY seq DESC",
    )
    kept, used, evicted = 0, size, []
    for row in rows:
        if kept + 1 < most and used + row["size"] <= total:
            kept += 1
            used += row["size"]
        else:
            evicted.append(row["token_hash"])
    if evicted:
        await execute(
            conn, "DELETE FROM content.preview_snapshots WHERE token_hash = ANY(%s)", (evicted,)
        )


async def insert(
    conn: Conn,
    token_hash: str,
    entry_id: str,
    snapshot: dict[str, Any],
    size: int,
    now: datetime,
    expires_at: datetime,
) -> None:
    await execute(
        conn,
        "INSERT INTO content.preview_snapshots (token_hash, entry_id, snapshot, size, created_at,"
        " expires_at) VALUES (%s, %s, %s, %s, %s, %s)",
        (token_hash, entry_id, Json(snapshot), size, now, expires_at),
    )


async def live(conn: Conn, token_hash: str, now: datetime) -> Snapshot | None:
    """The snapshot of an unexpired token whose entry is still live (not trashed)."""
    row = await fetch_one(
        conn,
        "SELECT p.entry_id, p.snapshot, p.expires_at FROM content.preview_snapshots p"
        " JOIN content.entries e ON e.id = p.entry_id AND e.deleted_at IS NULL"
        " WHERE p.token_hash = %s AND p.expires_at > %s",
        (token_hash, now),
    )
    return Snapshot.from_optional(row)


async def drop_for_entry(conn: Conn, entry_id: str) -> None:
    await execute(conn, "DELETE FROM content.preview_snapshots WHERE entry_id = %s", (entry_id,))


async def clear(conn: Conn) -> None:
    """At service start: the spec makes previews invalid on restart."""
    await execute(conn, "DELETE FROM content.preview_snapshots")
