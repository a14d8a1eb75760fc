"""SQL for ``mail.webmail_sessions``: stored records, so revocation is immediate."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from common.db import Conn, execute, fetch_one
from common.records import Record


@dataclass(frozen=True)
class WebmailSession(Record):
    """A live svc_webmail session and the mailbox it signs in (identity: the address)."""

    id: str
    address_id: str
    account_id: str
    email: str
    display_name: str
    created_at: datetime
    last_seen_at: datetime
    expires_at: datetime


_SELECT = (
    "SELECT s.id::text, s.address_id::text, d.account_id::text,"
    " a.local_part || '@' || d.name AS email, a.display_name,"
    " s.created_at, s.last_seen_at, s.expires_at"
    " FROM mail.webmail_sessions s"
    " JOIN mail.addresses a ON a.id = s.address_id"
    " JOIN mail.domains d ON d.id = a.domain_id"
)


async def insert(
    conn: Conn,
    address_id: str,
    *,
    token_hash: str,
    ip: str,
    user_agent: str,
    now: datetime,
    expires_at: datetime,
) -> str:
    row = await fetch_one(
        conn,
        "INSERT INTO mail.webmail_sessions (address_id, token_hash, ip, user_agent, created_at,"
        " last_seen_at, expires_at) VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING id::text",
        (address_id, token_hash, ip, user_agent, now, now, expires_at),
    )
    assert row is not None
    return str(row["id"])


async def resolve(conn: Conn, token_hash: str, now: datetime) -> WebmailSession | None:
    """The live session for a cookie's hash with its mailbox, in one query."""
    row = await fetch_one(
        conn, f"{_SELECT} WHERE s.token_hash = %s AND s.expires_at > %s", (token_hash, now)
    )
    return WebmailSession.from_optional(row)


async def touch(conn: Conn, session_id: str, now: datetime, ip: str, user_agent: str) -> None:
    await execute(
        conn,
        "UPDATE mail.webmail_sessions SET last_seen_at = %s, ip = %s, user_agent = %s"
        " WHERE id = %s",
        (now, ip, user_agent, session_id),
    )


async def delete(conn: Conn, session_id: str) -> bool:
    n = await execute(conn, "DELETE FROM mail.webmail_sessions WHERE id = %s", (session_id,))
    return n == 1


async def delete_for_address(conn: Conn, address_id: str) -> int:
    """End every webmail session of a mailbox (its password changed or was reset)."""
    return await execute(
        conn, "DELETE FROM mail.webmail_sessions WHERE address_id = %s", (address_id,)
    )


async def sweep(conn: Conn, now: datetime) -> int:
    return await execute(conn, "DELETE FROM mail.webmail_sessions WHERE expires_at <= %s", (now,))
