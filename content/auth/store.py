"""SQL for content.sessions."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from common.db import Conn, execute, fetch_all, fetch_one, fetch_val
from common.records import Record
from content.auth.principal import User


@dataclass(frozen=True)
class Session(Record):
    """A live session as its person sees it (never the token or its hash)."""

    id: int
    created_at: datetime
    expires_at: datetime
    ip: str
    user_agent: str


@dataclass(frozen=True)
class SessionUser:
    """A live session's id and its user, re-read on every request."""

    session_id: int
    user: User


async def insert_session(
    conn: Conn,
    *,
    token_hash: str,
    user_id: str,
    now: datetime,
    expires_at: datetime,
    ip: str,
    user_agent: str,
) -> int:
    return int(
        await fetch_val(
            conn,
            "INSERT INTO content.sessions (token_hash, user_id, created_at, expires_at, ip,"
            " user_agent) VALUES (%s, %s, %s, %s, %s, %s) RETURNING id",
            (token_hash, user_id, now, expires_at, ip, user_agent[:300]),
        )
    )


async def session_user(conn: Conn, token_hash: str, now: datetime) -> SessionUser | None:
    """The live session and its user, re-read on every request."""
    row = await fetch_one(
        conn,
        "SELECT s.id AS session_id, u.id, u.email, u.name, u.role"
        "  FROM content.sessions s JOIN content.users u ON u.id = s.user_id"
        " WHERE s.token_hash = %s AND s.revoked_at IS NULL AND s.expires_at > %s",
        (token_hash, now),
    )
    if row is None:
        return None
    return SessionUser(session_id=row["session_id"], user=User.from_row(row))


async def revoke_session(conn: Conn, session_id: int, user_id: str, now: datetime) -> bool:
    return (
        await execute(
            conn,
            "UPDATE content.sessions SET revoked_at = %s"
            " WHERE id = %s AND user_id = %s AND revoked_at IS NULL",
            (now, session_id, user_id),
        )
        > 0
    )


async def revoke_user_sessions(
    conn: Conn, user_id: str, now: datetime, *, keep: int | None = None
) -> int:
    """End every session of a user, except ``keep`` (the one asking)."""
    return await execute(
        conn,
        "UPDATE content.sessions SET revoked_at = %s"
        " WHERE user_id = %s AND revoked_at IS NULL AND id IS DISTINCT FROM %s",
        (now, user_id, keep),
    )


async def live_sessions(conn: Conn, user_id: str, now: datetime) -> list[Session]:
    rows = await fetch_all(
        conn,
        "SELECT id, created_at, expires_at, ip, user_agent FROM content.sessions"
        " WHERE user_id = %s AND revoked_at IS NULL AND expires_at > %s ORDER BY created_at DESC",
        (user_id, now),
    )
    return [Session.from_row(r) for r in rows]
