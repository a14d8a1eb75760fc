"""JMAP EmailSubmission records (RFC 8621 7). Writes ``mta.email_submissions``.

A submission's id is its outbound message's id: its undo and delivery status
are read from the queue's rows (mta/store/outbound.py), never copied.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from common.db import Conn, Json, execute, fetch_all, fetch_one
from common.records import Record
from mta.store import changes

TYPE = "EmailSubmission"
_COLUMNS = """s.id::text AS id, s.identity_id::text AS identity_id, s.email_id::text AS email_id,
             s.thread_id::text AS thread_id, s.envelope, s.send_at, m.status AS message_status"""
_FROM = "mta.email_submissions s LEFT JOIN mta.outbound_messages m ON m.id = s.id"
# Sort properties (RFC 8621 7.3) -> columns.
SORTS = {"emailId": "s.email_id", "threadId": "s.thread_id", "sentAt": "s.send_at"}
_UNDO = {
    "pending": "m.status = 'scheduled'",
    "canceled": "m.status = 'canceled'",
    "final": "m.status IS DISTINCT FROM 'scheduled' AND m.status IS DISTINCT FROM 'canceled'",
}


@dataclass(frozen=True)
class Submission(Record):
    id: str
    identity_id: str
    email_id: str
    thread_id: str
    envelope: dict[str, Any]
    send_at: datetime
    message_status: str | None  # its outbound message's status (None: gone)


@dataclass(frozen=True)
class RecipientStatus(Record):
    id: str  # the submission's
    rcpt: str
    status: str
    last_reply: str | None


@dataclass
class Filter:
    """An EmailSubmission/query filter, checked: each condition None when absent."""

    identity_ids: list[str] | None = None
    email_ids: list[str] | None = None
    thread_ids: list[str] | None = None
    undo_status: str | None = None  # pending | final | canceled
    before: datetime | None = None
    after: datetime | None = None
    # (property of SORTS, ascending)
    sort: list[tuple[str, bool]] = field(default_factory=list)


async def rows(conn: Conn, address_id: str, ids: list[str] | None) -> list[Submission]:
    """The address's submissions among ``ids`` (uuids; None: all), by send time."""
    where = "" if ids is None else "AND s.id = ANY(%s::uuid[])"
    params: tuple[Any, ...] = (address_id,) if ids is None else (address_id, ids)
    found = await fetch_all(
        conn,
        f"SELECT {_COLUMNS} FROM {_FROM} WHERE s.address_id = %s {where} ORDER BY s.send_at, s.id",
        params,
    )
    return [Submission.from_row(row) for row in found]


async def find(conn: Conn, address_id: str, submission_id: str) -> Submission | None:
    row = await fetch_one(
        conn,
        f"SELECT {_COLUMNS} FROM {_FROM} WHERE s.id = %s AND s.address_id = %s",
        (submission_id, address_id),
    )
    return Submission.from_optional(row)


async def recipients(conn: Conn, ids: list[str]) -> list[RecipientStatus]:
    """The queue's recipients of the submissions ``ids``, in order."""
    found = await fetch_all(
        conn,
        """
        SELECT message_id::text AS id, rcpt, status, last_reply FROM mta.outbound_recipients
         WHERE message_id = ANY(%s::uuid[]) ORDER BY message_id, position
        """,
        (ids,),
    )
    return [RecipientStatus.from_row(row) for row in found]


async def query_ids(conn: Conn, address_id: str, query: Filter) -> list[str]:
    conditions: list[str] = []
    params: list[Any] = [address_id]
    for column, values in (
        ("identity_id", query.identity_ids),
        ("email_id", query.email_ids),
        ("thread_id", query.thread_ids),
    ):
        if values is not None:
            conditions.append(f"s.{column}::text = ANY(%s)")
            params.append(values)
    if query.undo_status is not None:
        conditions.append(_UNDO[query.undo_status])
    if query.before is not None:
        conditions.append("s.send_at < %s")
        params.append(query.before)
    if query.after is not None:
        conditions.append("s.send_at >= %s")
        params.append(query.after)
    where = "".join(f" AND {c}" for c in conditions)
    order = [f"{SORTS[p]} {'ASC' if asc else 'DESC'}" for p, asc in query.sort]
    found = await fetch_all(
        conn,
        f"SELECT s.id::text AS id FROM {_FROM} WHERE s.address_id = %s{where}"
        f" ORDER BY {', '.join([*order, 's.id'])}",
        params,
    )
    return [r["id"] for r in found]


async def create(
    conn: Conn,
    submission_id: str,
    address_id: str,
    *,
    identity_id: str,
    email_id: str,
    thread_id: str,
    envelope: dict[str, Any],
    send_at: datetime,
    now: datetime,
) -> None:
    """Record a submission (its message is queued by the caller) and log it."""
    await execute(
        conn,
        """
        INSERT INTO mta.email_submissions
            (id, address_id, identity_id, email_id, thread_id, envelope, send_at, created_at)
        VALUES (%s, %s, %s, %s, %s, %s, %s, %s)
        """,
        (submission_id, address_id, identity_id, email_id, thread_id, Json(envelope), send_at, now),
    )
    await changes.record(conn, address_id, TYPE, [submission_id], "created", now)


async def destroy(conn: Conn, address_id: str, submission_id: str, now: datetime) -> bool:
    """Forget a submission (the message is not unsent); False when there was none."""
    count = await execute(
        conn,
        "DELETE FROM mta.email_submissions WHERE id = %s AND address_id = %s",
        (submission_id, address_id),
    )
    if count:
        await changes.record(conn, address_id, TYPE, [submission_id], "destroyed", now)
    return bool(count)
