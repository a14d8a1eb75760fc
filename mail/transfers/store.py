"""SQL of ``mail.transfers`` and ``mail.transfer_folders`` (migrations/0060_transfers.sql)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from common.db import Conn, Json, execute, fetch_all, fetch_one, fetch_val
from common.records import Record
from mail.domains import sql
from mail.web.lists import ListParams, Sorts

ACTIVE = ("queued", "running")
TERMINAL = ("completed", "failed", "cancelled")
STATES = (*ACTIVE, *TERMINAL)
# How many per-message errors a transfer keeps to show (the count goes on).
RECENT_ERRORS = 20

SORTS = Sorts(
    columns={"created_at": "t.created_at", "state": "t.state", "host": "t.host"},
    default="created_at",
    default_direction="desc",
    tiebreak="t.id",
)

_COLUMNS = """t.id::text, t.account_id::text, t.address_id::text,
    a.local_part || '@' || d.name AS destination, t.host, t.port, t.tls, t.username,
    t.state, t.error, t.folders_total, t.folders_done, t.messages_total, t.messages_done,
    t.duplicates, t.bytes_total, t.bytes_done, t.current_folder, t.errors, t.recent_errors,
    t.created_at, t.started_at, t.finished_at, t.updated_at"""
_FROM = """mail.transfers t JOIN mail.addresses a ON a.id = t.address_id
    JOIN mail.domains d ON d.id = a.domain_id"""


@dataclass(frozen=True)
class Transfer(Record):
    """A transfer as the panel shows it: never the sealed password."""

    id: str
    account_id: str
    address_id: str
    destination: str
    host: str
    port: int
    tls: str
    username: str
    state: str
    error: str | None
    folders_total: int
    folders_done: int
    messages_total: int
    messages_done: int
    duplicates: int
    bytes_total: int
    bytes_done: int
    current_folder: str | None
    errors: int
    recent_errors: list[str]
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    updated_at: datetime


@dataclass(frozen=True)
class Job(Record):
    """What a runner needs to run a transfer: where from, the sealed password, where to."""

    id: str
    address_id: str
    host: str
    port: int
    tls: str
    username: str
    password_sealed: str | None
    quota_bytes: int


@dataclass(frozen=True)
class FolderState(Record):
    transfer_id: str
    position: int
    source_name: str
    target_role: str | None
    target_path: str
    uidvalidity: int | None
    last_uid: int
    messages_total: int
    bytes_total: int
    done: bool


async def insert(
    conn: Conn,
    *,
    account_id: str,
    address_id: str,
    host: str,
    port: int,
    tls: str,
    username: str,
    password_sealed: str,
    now: datetime,
) -> str:
    return str(
        await fetch_val(
            conn,
            """
            INSERT INTO mail.transfers
                (account_id, address_id, host, port, tls, username, password_sealed,
                 created_at, updated_at)
            VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id
            """,
            (account_id, address_id, host, port, tls, username, password_sealed, now, now),
        )
    )


async def get_owned(conn: Conn, account_id: str, transfer_id: str) -> Transfer | None:
    row = await fetch_one(
        conn,
        f"SELECT {_COLUMNS} FROM {_FROM} WHERE t.id = %s AND t.account_id = %s",
        (transfer_id, account_id),
    )
    return Transfer.from_optional(row)


async def page(conn: Conn, account_id: str, params: ListParams) -> tuple[list[Transfer], int]:
    where = "t.account_id = %(account)s"
    args: dict[str, Any] = {"account": account_id}
    if params.search_pattern:
        where += " AND (t.host ILIKE %(search)s OR t.username ILIKE %(search)s)"
        args["search"] = params.search_pattern
    rows, total = await sql.page(
        conn,
        columns=_COLUMNS,
        joined=_FROM,
        table="mail.transfers t",
        where=where,
        args=args,
        params=params,
    )
    return [Transfer.from_row(r) for r in rows], total


async def active(conn: Conn, account_id: str, limit: int = 20) -> list[Transfer]:
    """The account's queued and running transfers, newest first (the Overview's list)."""
    rows = await fetch_all(
        conn,
        f"""
        SELECT {_COLUMNS} FROM {_FROM}
         WHERE t.account_id = %s AND t.state IN ('queued', 'running')
         ORDER BY t.created_at DESC LIMIT %s
        """,
        (account_id, limit),
    )
    return [Transfer.from_row(r) for r in rows]


async def cancel(conn: Conn, account_id: str, transfer_id: str, now: datetime) -> bool:
    """Cancel an active transfer; its password goes in the same statement."""
    n = await execute(
        conn,
        """
        UPDATE mail.transfers
           SET state = 'cancelled', password_sealed = NULL, finished_at = %s, updated_at = %s,
               current_folder = NULL, worker = NULL, heartbeat_at = NULL
         WHERE id = %s AND account_id = %s AND state IN ('queued', 'running')
        """,
        (now, now, transfer_id, account_id),
    )
    return n > 0


# --- the runner's side ---


async def claim(
    conn: Conn, worker: str, now: datetime, stale_seconds: int, limit: int
) -> list[str]:
    """Take up to ``limit`` transfers: queued ones, and running ones whose process went silent."""
    rows = await fetch_all(
        conn,
        """
        UPDATE mail.transfers AS t
           SET state = 'running', worker = %(me)s, heartbeat_at = %(now)s,
               started_at = coalesce(t.started_at, %(now)s), updated_at = %(now)s
         WHERE t.id IN (
               SELECT id FROM mail.transfers
                WHERE state = 'queued'
                   OR (state = 'running'
                       AND (heartbeat_at IS NULL OR heartbeat_at < %(stale)s))
                ORDER BY created_at
                LIMIT %(limit)s
                FOR UPDATE SKIP LOCKED)
        RETURNING t.id::text
        """,
        {
            "me": worker,
            "now": now,
            "stale": now - timedelta(seconds=stale_seconds),
            "limit": limit,
        },
    )
    return [r["id"] for r in rows]


async def job(conn: Conn, transfer_id: str) -> Job | None:
    row = await fetch_one(
        conn,
        """
        SELECT t.id::text, t.address_id::text, t.host, t.port, t.tls, t.username,
               t.password_sealed, a.quota_bytes
          FROM mail.transfers t JOIN mail.addresses a ON a.id = t.address_id
         WHERE t.id = %s
        """,
        (transfer_id,),
    )
    return Job.from_optional(row)


async def heartbeat(conn: Conn, transfer_id: str, worker: str, now: datetime) -> bool:
    """Still ours and still running? (False: cancelled, or taken over.)"""
    n = await execute(
        conn,
        "UPDATE mail.transfers SET heartbeat_at = %s"
        " WHERE id = %s AND worker = %s AND state = 'running'",
        (now, transfer_id, worker),
    )
    return n > 0


async def release(conn: Conn, transfer_id: str, worker: str) -> None:
    """This process stops (shutdown): another one takes the transfer at once."""
    await execute(
        conn,
        "UPDATE mail.transfers SET worker = NULL, heartbeat_at = NULL"
        " WHERE id = %s AND worker = %s AND state = 'running'",
        (transfer_id, worker),
    )


async def finish(
    conn: Conn, transfer_id: str, worker: str, state: str, error: str | None, now: datetime
) -> bool:
    """Reach a terminal state; the password is erased in the same statement."""
    assert state in TERMINAL
    n = await execute(
        conn,
        """
        UPDATE mail.transfers
           SET state = %s, error = %s, password_sealed = NULL, finished_at = %s, updated_at = %s,
               current_folder = NULL, worker = NULL, heartbeat_at = NULL
         WHERE id = %s AND worker = %s AND state = 'running'
        """,
        (state, error, now, now, transfer_id, worker),
    )
    return n > 0


async def folders(conn: Conn, transfer_id: str) -> list[FolderState]:
    rows = await fetch_all(
        conn,
        "SELECT transfer_id::text, position, source_name, target_role, target_path, uidvalidity,"
        " last_uid, messages_total, bytes_total, done"
        " FROM mail.transfer_folders WHERE transfer_id = %s ORDER BY position",
        (transfer_id,),
    )
    return [FolderState.from_row(r) for r in rows]


async def save_plan(
    conn: Conn,
    transfer_id: str,
    worker: str,
    plan: list[tuple[str, str | None, str, int, int, int]],
    now: datetime,
) -> bool:
    """The folders found at the start: (name, role, path, uidvalidity, messages, bytes)."""
    owned = await execute(
        conn,
        """
        UPDATE mail.transfers
           SET folders_total = %s, messages_total = %s, bytes_total = %s, updated_at = %s
         WHERE id = %s AND worker = %s AND state = 'running'
        """,
        (
            len(plan),
            sum(p[4] for p in plan),
            sum(p[5] for p in plan),
            now,
            transfer_id,
            worker,
        ),
    )
    if not owned:
        return False
    await execute(
        conn,
        """
        INSERT INTO mail.transfer_folders
            (transfer_id, position, source_name, target_role, target_path, uidvalidity,
             messages_total, bytes_total)
        SELECT %s, p, n, r, t, u, m, b
          FROM unnest(%s::int[], %s::text[], %s::text[], %s::text[], %s::bigint[], %s::int[],
                      %s::bigint[]) AS x(p, n, r, t, u, m, b)
        """,
        (
            transfer_id,
            list(range(len(plan))),
            [p[0] for p in plan],
            [p[1] for p in plan],
            [p[2] for p in plan],
            [p[3] for p in plan],
            [p[4] for p in plan],
            [p[5] for p in plan],
        ),
    )
    return True


async def restart_folder(conn: Conn, transfer_id: str, position: int, uidvalidity: int) -> None:
    """The source renumbered the folder (UIDVALIDITY changed): start it over from UID 0."""
    await execute(
        conn,
        "UPDATE mail.transfer_folders SET uidvalidity = %s, last_uid = 0"
        " WHERE transfer_id = %s AND position = %s",
        (uidvalidity, transfer_id, position),
    )


class Lost(Exception):
    """The transfer is no longer this process's to run (cancelled or taken over)."""


async def advance(
    conn: Conn,
    transfer_id: str,
    worker: str,
    position: int,
    *,
    uid: int,
    size: int,
    duplicate: bool,
    error: str | None,
    current_folder: str,
    now: datetime,
) -> None:
    """One message done: the folder's last UID and the counters, in the import's transaction.

    Raises :class:`Lost` when the transfer was cancelled meanwhile, so that
    transaction rolls back and nothing is imported after a cancel.
    """
    n = await fetch_val(
        conn,
        """
        WITH t AS (
            UPDATE mail.transfers
               SET messages_done = messages_done + 1, bytes_done = bytes_done + %(size)s,
                   duplicates = duplicates + %(dup)s, errors = errors + %(err)s,
                   recent_errors = CASE WHEN %(error)s::text IS NULL THEN recent_errors
                       ELSE (SELECT coalesce(jsonb_agg(e ORDER BY i), '[]'::jsonb) FROM (
                               SELECT e, i FROM jsonb_array_elements(recent_errors || %(errors)s)
                                      WITH ORDINALITY AS x(e, i)
                                ORDER BY i DESC LIMIT %(keep)s) AS kept) END,
                   current_folder = %(folder)s, heartbeat_at = %(now)s, updated_at = %(now)s
             WHERE id = %(id)s AND worker = %(me)s AND state = 'running'
            RETURNING id
        ), f AS (
            UPDATE mail.transfer_folders SET last_uid = greatest(last_uid, %(uid)s)
             WHERE transfer_id = (SELECT id FROM t) AND position = %(position)s
        )
        SELECT count(*) FROM t
        """,
        {
            "size": size,
            "dup": 1 if duplicate else 0,
            "err": 1 if error else 0,
            "error": error,
            "errors": Json([error] if error else []),
            "keep": RECENT_ERRORS,
            "folder": current_folder,
            "now": now,
            "id": transfer_id,
            "me": worker,
            "uid": uid,
            "position": position,
        },
    )
    if not n:
        raise Lost(transfer_id)


async def folder_done(
    conn: Conn, transfer_id: str, worker: str, position: int, name: str, now: datetime
) -> None:
    n = await execute(
        conn,
        """
        UPDATE mail.transfers SET folders_done = folders_done + 1, current_folder = %s,
               updated_at = %s
         WHERE id = %s AND worker = %s AND state = 'running'
        """,
        (name, now, transfer_id, worker),
    )
    if not n:
        raise Lost(transfer_id)
    await execute(
        conn,
        "UPDATE mail.transfer_folders SET done = true WHERE transfer_id = %s AND position = %s",
        (transfer_id, position),
    )


async def set_current(conn: Conn, transfer_id: str, worker: str, name: str, now: datetime) -> None:
    await execute(
        conn,
        "UPDATE mail.transfers SET current_folder = %s, updated_at = %s"
        " WHERE id = %s AND worker = %s AND state = 'running'",
        (name, now, transfer_id, worker),
    )


@dataclass(frozen=True)
class Destination(Record):
    """An address of the account a transfer may import into."""

    address_id: str
    email: str
    domain_id: str
    # The transfer into it that is queued or running, if any (one at a time).
    active_transfer_id: str | None


async def destinations(conn: Conn, account_id: str) -> list[Destination]:
    rows = await fetch_all(
        conn,
        """
        SELECT a.id::text AS address_id, a.local_part || '@' || d.name AS email,
               d.id::text AS domain_id, t.id::text AS active_transfer_id
          FROM mail.addresses a JOIN mail.domains d ON d.id = a.domain_id
          LEFT JOIN mail.transfers t ON t.address_id = a.id AND t.state IN ('queued', 'running')
         WHERE d.account_id = %s
         ORDER BY d.name, a.local_part
        """,
        (account_id,),
    )
    return [Destination.from_row(r) for r in rows]
