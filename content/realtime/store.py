"""SQL of the realtime socket: tickets (any process redeems them) and presence rows."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from common.db import Conn, execute, fetch_all, fetch_one
from common.records import Record
from content.keys.store import DeliveryKey


@dataclass(frozen=True)
class Ticket(Record):
    kind: str
    session_id: int | None
    delivery_key_id: str | None
    expires_at: datetime


@dataclass(frozen=True)
class Viewer(Record):
    id: str
    name: str


async def insert_ticket(
    conn: Conn,
    ticket_hash: str,
    *,
    kind: str,
    session_id: int | None,
    delivery_key_id: str | None,
    now: datetime,
    expires_at: datetime,
) -> None:
    # Tickets nobody redeemed go the next time one is made.
    await execute(conn, "DELETE FROM content.realtime_tickets WHERE expires_at <= %s", (now,))
    await execute(
        conn,
        "INSERT INTO content.realtime_tickets (ticket_hash, kind, session_id, delivery_key_id,"
        " created_at, expires_at) VALUES (%s, %s, %s, %s, %s, %s)",
        (ticket_hash, kind, session_id, delivery_key_id, now, expires_at),
    )


async def take_ticket(conn: Conn, ticket_hash: str) -> Ticket | None:
    """Remove the ticket and return it: the DELETE makes a second use find nothing."""
    row = await fetch_one(
        conn,
        "DELETE FROM content.realtime_tickets WHERE ticket_hash = %s"
        " RETURNING kind, session_id, delivery_key_id, expires_at",
        (ticket_hash,),
    )
    return Ticket.from_optional(row)


async def session_user(conn: Conn, session_id: int, now: datetime) -> Viewer | None:
    """The person of a live session (the one that made the ticket), or None."""
    row = await fetch_one(
        conn,
        "SELECT u.id, u.name FROM content.sessions s JOIN content.users u ON u.id = s.user_id"
        " WHERE s.id = %s AND s.revoked_at IS NULL AND s.expires_at > %s",
        (session_id, now),
    )
    return Viewer.from_optional(row)


async def live_delivery_key(conn: Conn, key_id: str) -> DeliveryKey | None:
    row = await fetch_one(
        conn,
        "SELECT id, name, hint, type_scopes, created_by, created_at, updated_at, revoked_at,"
        " last_used_at FROM content.delivery_keys WHERE id = %s AND revoked_at IS NULL",
        (key_id,),
    )
    return DeliveryKey.from_optional(row)


async def entry_exists(conn: Conn, entry_id: str) -> bool:
    row = await fetch_one(
        conn, "SELECT 1 FROM content.entries WHERE id = %s AND deleted_at IS NULL", (entry_id,)
    )
    return row is not None


# --- presence ------------------------------------------------------------------


async def join(conn: Conn, socket_id: str, entry_id: str, user_id: str, now: datetime) -> None:
    await execute(
        conn,
        "INSERT INTO content.realtime_presence (socket_id, entry_id, user_id, seen_at)"
        " VALUES (%s, %s, %s, %s)"
        " ON CONFLICT (socket_id, entry_id) DO UPDATE SET seen_at = EXCLUDED.seen_at",
        (socket_id, entry_id, user_id, now),
    )


async def leave(conn: Conn, socket_id: str, entry_id: str) -> None:
    await execute(
        conn,
        "DELETE FROM content.realtime_presence WHERE socket_id = %s AND entry_id = %s",
        (socket_id, entry_id),
    )


async def refresh(conn: Conn, socket_ids: list[str], now: datetime) -> None:
    await execute(
        conn,
        "UPDATE content.realtime_presence SET seen_at = %s WHERE socket_id = ANY(%s)",
        (now, socket_ids),
    )


async def viewers(conn: Conn, entry_id: str, since: datetime) -> list[Viewer]:
    """Each person viewing the entry once, however many sockets they hold."""
    rows = await fetch_all(
        conn,
        "SELECT DISTINCT u.id, u.name FROM content.realtime_presence p"
        "  JOIN content.users u ON u.id = p.user_id"
        " WHERE p.entry_id = %s AND p.seen_at > %s ORDER BY u.name, u.id",
        (entry_id, since),
    )
    return [Viewer.from_row(r) for r in rows]
