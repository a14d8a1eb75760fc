"""SQL for ``mail.sessions``: stored records, so revocation is immediate."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from common.db import Conn, execute, fetch_all, fetch_one, fetch_val
from common.records import Record
from mail.accounts.store import Account, from_prefixed, select_columns
from mail.web.lists import ListParams, Sorts

_COLUMNS = (
    "s.id::text, s.account_id::text, s.ip, s.user_agent, s.created_at, s.last_seen_at, s.expires_at"
)

SESSION_SORTS = Sorts(
    columns={"created_at": "s.created_at", "last_seen_at": "s.last_seen_at"},
    default="last_seen_at",
    tiebreak="s.id",
)


@dataclass(frozen=True)
class Session(Record):
    id: str
    account_id: str
    ip: str
    user_agent: str
    created_at: datetime
    last_seen_at: datetime
    expires_at: datetime


async def insert(
    conn: Conn,
    account_id: str,
    *,
    token_hash: str,
    ip: str,
    user_agent: str,
    now: datetime,
    expires_at: datetime,
) -> Session:
    row = await fetch_one(
        conn,
        "INSERT INTO mail.sessions AS s (account_id, token_hash, ip, user_agent, created_at,"
        f" last_seen_at, expires_at) VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING {_COLUMNS}",
        (account_id, token_hash, ip, user_agent, now, now, expires_at),
    )
    assert row is not None
    return Session.from_row(row)


async def resolve(conn: Conn, token_hash: str, now: datetime) -> tuple[Session, Account] | None:
    """The live session for a cookie's hash and its account, in one query."""
    row = await fetch_one(
        conn,
        f"SELECT {_COLUMNS}, {select_columns('a', 'a_')} FROM mail.sessions s"
        " JOIN mail.accounts a ON a.id = s.account_id"
        " WHERE s.token_hash = %s AND s.expires_at > %s",
        (token_hash, now),
    )
    if row is None:
        return None
    account = from_prefixed(row, "a_")
    # The session's columns are unprefixed; from_row leaves the a_ ones aside.
    session = Session.from_row(row)
    return session, account


async def touch(conn: Conn, session_id: str, now: datetime, ip: str, user_agent: str) -> None:
    await execute(
        conn,
        "UPDATE mail.sessions SET last_seen_at = %s, ip = %s, user_agent = %s WHERE id = %s",
        (now, ip, user_agent, session_id),
    )


async def delete(conn: Conn, session_id: str) -> bool:
    return await execute(conn, "DELETE FROM mail.sessions WHERE id = %s", (session_id,)) == 1


async def delete_owned(conn: Conn, account_id: str, session_id: str) -> bool:
    n = await execute(
        conn,
        "DELETE FROM mail.sessions WHERE id = %s AND account_id = %s",
        (session_id, account_id),
    )
    return n == 1


async def delete_all_except(conn: Conn, account_id: str, keep_id: str | None) -> int:
    """Revoke every session of the account but ``keep_id`` (all when None)."""
    return await execute(
        conn,
        "DELETE FROM mail.sessions WHERE account_id = %s AND id IS DISTINCT FROM %s",
        (account_id, keep_id),
    )


async def list_live(
    conn: Conn, account_id: str, now: datetime, params: ListParams
) -> tuple[list[Session], int]:
    where = "s.account_id = %s AND s.expires_at > %s"
    args: list[Any] = [account_id, now]
    if params.search_pattern:
        where += " AND (s.ip ILIKE %s OR s.user_agent ILIKE %s)"
        args += [params.search_pattern, params.search_pattern]
    total = await fetch_val(conn, f"SELECT count(*) FROM mail.sessions s WHERE {where}", args)
    rows = await fetch_all(
        conn,
        f"SELECT {_COLUMNS} FROM mail.sessions s WHERE {where}"
        f" ORDER BY {params.order_by} LIMIT %s OFFSET %s",
        [*args, params.limit, params.offset],
    )
    return [Session.from_row(r) for r in rows], int(total)


async def sweep(conn: Conn, now: datetime) -> int:
    return await execute(conn, "DELETE FROM mail.sessions WHERE expires_at <= %s", (now,))
