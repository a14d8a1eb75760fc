"""Recent mail events of an address: received, filtered, refused, failed."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from common.db import Conn, Prepared, execute, fetch_all, fetch_val
from common.records import Record
from mta.store.batch import deferred_for


@dataclass(frozen=True)
class Event:
    address_id: str
    kind: str
    outcome: str
    peer: str = ""
    sender: str = ""
    subject: str = ""
    detail: str = ""
    email_id: str | None = None


@dataclass(frozen=True)
class Activity(Record):
    """One logged event as read back (the panel's activity list)."""

    id: int
    kind: str
    peer: str
    sender: str
    subject: str
    outcome: str
    detail: str
    email_id: str | None
    created_at: datetime


# Prepared: one row for every message received.
_RECORD = Prepared(
    """
    INSERT INTO mta.activity
        (address_id, kind, peer, sender, subject, outcome, detail, email_id, created_at)
    VALUES (%(a)s, %(kind)s, %(peer)s, %(sender)s, %(subject)s, %(outcome)s, %(detail)s,
            %(email)s, %(now)s)
    """
)


_COLUMNS = ("a", "kind", "peer", "sender", "subject", "outcome", "detail", "email", "now")

# Many rows in one statement, in the order they were recorded: a fragment, so a
# delivery batch's flush writes them with its other rows (mta/store/counters.py).
RECORD_MANY = """
    INSERT INTO mta.activity
        (address_id, kind, peer, sender, subject, outcome, detail, email_id, created_at)
    SELECT a, kind, peer, sender, subject, outcome, detail, email, now
      FROM unnest(%(act_a)s::text[]::uuid[], %(act_kind)s::text[], %(act_peer)s::text[],
                  %(act_sender)s::text[], %(act_subject)s::text[], %(act_outcome)s::text[],
                  %(act_detail)s::text[], %(act_email)s::text[]::uuid[],
                  %(act_now)s::timestamptz[])
           WITH ORDINALITY AS r (a, kind, peer, sender, subject, outcome, detail, email, now, n)
     ORDER BY n
"""


def _params(event: Event, now: datetime) -> dict[str, object]:
    return {
        "a": event.address_id,
        "kind": event.kind,
        "peer": event.peer[:200],
        "sender": event.sender[:320],
        "subject": event.subject[:200],
        "outcome": event.outcome[:200],
        "detail": event.detail[:1000],
        "email": event.email_id,
        "now": now,
    }


async def record(conn: Conn, event: Event, now: datetime) -> None:
    """Log ``event``; in a delivery group commit, with the batch's others at its flush
    (mta/store/counters.py), still before its COMMIT."""
    batch = deferred_for(conn)
    if batch is not None:
        batch.activity.append((event, now))
        return
    await _RECORD.execute(conn, _params(event, now))


def record_params(events: list[tuple[Event, datetime]]) -> dict[str, list[object]]:
    rows = [_params(event, now) for event, now in events]
    return {f"act_{key}": [r[key] for r in rows] for key in _COLUMNS}


async def page(
    conn: Conn, address_id: str, *, limit: int, offset: int, kind: str | None = None
) -> tuple[list[Activity], int]:
    where = "address_id = %(a)s" + (" AND kind = %(k)s" if kind else "")
    params = {"a": address_id, "k": kind, "limit": limit, "offset": offset}
    rows = await fetch_all(
        conn,
        f"""
        SELECT id, kind, peer, sender, subject, outcome, detail, email_id, created_at
          FROM mta.activity WHERE {where}
         ORDER BY created_at DESC, id DESC LIMIT %(limit)s OFFSET %(offset)s
        """,
        params,
    )
    total = await fetch_val(conn, f"SELECT count(*) FROM mta.activity WHERE {where}", params)
    return [Activity.from_row(row) for row in rows], int(total)


async def prune(conn: Conn, before: datetime) -> int:
    return await execute(conn, "DELETE FROM mta.activity WHERE created_at < %s", (before,))
