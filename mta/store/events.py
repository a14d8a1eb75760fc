"""The account's event log: what its webhooks deliver, in Resend's shape.

Writers call :func:`record` inside the transaction of the change the event
reports; the NOTIFY it issues is delivered only at COMMIT, so a listener (the
webhook fan-out in mail/) never wakes for an event that was rolled back.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from common.db import Conn, Prepared, execute, fetch_all, fetch_one, fetch_val
from common.logs import current_request_id
from common.records import Record
from mta.store.batch import deferred_for

# The channel a fan-out LISTENs on; the payload is the event id.
CHANNEL = "mta_events"


@dataclass(frozen=True)
class Event(Record):
    id: str
    account_id: str
    type: str
    email_id: str | None
    payload: dict[str, Any]
    created_at: datetime
    dispatched_at: datetime | None
    # The request (or job, or outbound trace) it was recorded under.
    request_id: str | None = None


_COLUMNS = (
    "id::text, account_id::text, type, email_id::text, payload, created_at, dispatched_at,"
    " request_id"
)


def iso(moment: datetime) -> str:
    """Resend's timestamps: ISO 8601 in UTC with milliseconds."""
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


async def record(
    conn: Conn,
    account_id: str,
    type_: str,
    data: dict[str, Any],
    now: datetime,
    *,
    email_id: str | None = None,
    request_id: str | None = None,
) -> Event:
    """Append one event; its payload is ``{"type", "created_at", "data"}``.

    ``request_id`` (by default the current one) is what the webhook deliveries
    of the event run under.
    """
    payload = {"type": type_, "created_at": iso(now), "data": data}
    row = await fetch_one(
        conn,
        f"""
        INSERT INTO mta.events (account_id, type, email_id, payload, created_at, request_id)
        VALUES (%(a)s, %(t)s, %(e)s, %(p)s::jsonb, %(now)s, %(r)s)
        RETURNING {_COLUMNS}
        """,
        {
            "a": account_id,
            "t": type_,
            "e": email_id,
            "p": json.dumps(payload),
            "now": now,
            "r": request_id or current_request_id(),
        },
    )
    assert row is not None
    event = Event.from_row(row)
    await execute(conn, "SELECT pg_notify(%(c)s, %(id)s)", {"c": CHANNEL, "id": event.id})
    return event


@dataclass(frozen=True)
class Pending:
    """An event to append with others (a delivery batch's, at its flush)."""

    account_id: str
    type: str
    email_id: str | None
    payload: str
    created_at: datetime
    request_id: str | None = None


def pending(
    account_id: str,
    type_: str,
    data: dict[str, Any],
    now: datetime,
    *,
    email_id: str | None = None,
    request_id: str | None = None,
) -> Pending:
    payload = {"type": type_, "created_at": iso(now), "data": data}
    return Pending(account_id, type_, email_id, json.dumps(payload), now, request_id)


async def add(
    conn: Conn,
    account_id: str,
    type_: str,
    data: dict[str, Any],
    now: datetime,
    *,
    email_id: str | None = None,
    request_id: str | None = None,
) -> None:
    """:func:`record` where nothing reads the event back: inside a group commit
    (mta/store/counters.py) it is appended with the batch's others at its flush,
    still before its COMMIT; elsewhere at once."""
    row = pending(
        account_id,
        type_,
        data,
        now,
        email_id=email_id,
        request_id=request_id or current_request_id(),
    )
    batch = deferred_for(conn)
    if batch is not None:
        batch.events.append(row)
    else:
        await append_many(conn, [row])


# Many rows in one statement: a fragment, so a delivery batch's flush writes them
# with its other rows (mta/store/counters.py). Its NOTIFY carries no event id:
# listeners only need waking, once per transaction.
APPEND_MANY = """
    INSERT INTO mta.events (account_id, type, email_id, payload, created_at, request_id)
    SELECT * FROM unnest(%(ev_a)s::text[]::uuid[], %(ev_t)s::text[], %(ev_e)s::text[]::uuid[],
                         %(ev_p)s::text[]::jsonb[], %(ev_c)s::timestamptz[], %(ev_r)s::text[])
"""
NOTIFY_IF_ANY = f"SELECT pg_notify('{CHANNEL}', '') WHERE cardinality(%(ev_p)s::text[]) > 0"

_APPEND_MANY = Prepared(f"WITH e AS ({APPEND_MANY}) {NOTIFY_IF_ANY}")


def append_params(rows: list[Pending]) -> dict[str, list[Any]]:
    return {
        "ev_a": [r.account_id for r in rows],
        "ev_t": [r.type for r in rows],
        "ev_e": [r.email_id for r in rows],
        "ev_p": [r.payload for r in rows],
        "ev_c": [r.created_at for r in rows],
        "ev_r": [r.request_id for r in rows],
    }


async def append_many(conn: Conn, rows: list[Pending]) -> None:
    """:func:`record` for a hot path (inbound delivery): many rows, nothing read back."""
    await _APPEND_MANY.execute(conn, append_params(rows))


async def get(conn: Conn, account_id: str, event_id: str) -> Event | None:
    """One event of the account (None for another account's: the caller answers 404)."""
    row = await fetch_one(
        conn,
        f"SELECT {_COLUMNS} FROM mta.events WHERE id = %(id)s AND account_id = %(a)s",
        {"id": event_id, "a": account_id},
    )
    return Event.from_row(row) if row else None


async def undispatched(conn: Conn, limit: int) -> list[Event]:
    """The oldest events not yet fanned out, locked for this transaction.

    SKIP LOCKED lets several gateway processes fan out side by side without
    handing one event to two of them.
    """
    rows = await fetch_all(
        conn,
        f"""
        SELECT {_COLUMNS} FROM mta.events
         WHERE dispatched_at IS NULL
         ORDER BY created_at, seq LIMIT %(limit)s
           FOR UPDATE SKIP LOCKED
        """,
        {"limit": limit},
    )
    return [Event.from_row(row) for row in rows]


async def mark_dispatched(conn: Conn, event_ids: list[str], now: datetime) -> None:
    await execute(
        conn,
        "UPDATE mta.events SET dispatched_at = %(now)s WHERE id = ANY(%(ids)s::uuid[])",
        {"ids": event_ids, "now": now},
    )


async def for_email(conn: Conn, account_id: str, email_id: str) -> list[Event]:
    """A sent or received email's events, oldest first (the email's history)."""
    rows = await fetch_all(
        conn,
        f"""
        SELECT {_COLUMNS} FROM mta.events
         WHERE email_id = %(e)s AND account_id = %(a)s
         ORDER BY created_at, seq
        """,
        {"e": email_id, "a": account_id},
    )
    return [Event.from_row(row) for row in rows]


@dataclass(frozen=True)
class DailyCount(Record):
    day: date
    type: str
    count: int


# A day is rolled up once it has been over for this long (a writer's clock
# may lag a little; an event of a rolled-up day would not be counted).
ROLLUP_MARGIN = timedelta(hours=1)


def _midnight(day: date) -> datetime:
    return datetime.combine(day, time.min, tzinfo=UTC)


async def roll_up(conn: Conn, now: datetime) -> int:
    """Count every closed day not yet counted into mta.event_days; returns the days rolled.

    Runs in the caller's transaction, the state row locked, so two processes
    never count a day twice.
    """
    rolled = await fetch_one(conn, "SELECT rolled_until FROM mta.event_rollup FOR UPDATE")
    assert rolled is not None
    start: date = rolled["rolled_until"]
    until = (now - ROLLUP_MARGIN).date()
    if start != date.min and start >= until:
        return 0
    params = {"until": _midnight(until), "start": None if start == date.min else _midnight(start)}
    await execute(
        conn,
        """
        INSERT INTO mta.event_days (account_id, day, type, count)
        SELECT account_id, (created_at AT TIME ZONE 'UTC')::date, type, count(*)
          FROM mta.events
         WHERE created_at < %(until)s
           AND (%(start)s::timestamptz IS NULL OR created_at >= %(start)s)
         GROUP BY 1, 2, 3
        ON CONFLICT (account_id, type, day) DO UPDATE SET count = EXCLUDED.count
        """,
        params,
    )
    await execute(conn, "UPDATE mta.event_rollup SET rolled_until = %s", (until,))
    return 1 if start == date.min else (until - start).days


async def daily_counts(
    conn: Conn, account_id: str, types: list[str], since: date
) -> list[DailyCount]:
    """Events of these types per UTC day from ``since``: rolled-up days plus a live count."""
    rolled: date = await fetch_val(conn, "SELECT rolled_until FROM mta.event_rollup")
    live_from = since if rolled == date.min else max(since, rolled)
    # Constant bounds (not a join with the state row), so both halves are index range scans.
    rows = await fetch_all(
        conn,
        """
        SELECT day, type, count FROM mta.event_days
         WHERE account_id = %(a)s AND type = ANY(%(t)s) AND day >= %(since)s AND day < %(live)s
        UNION ALL
        SELECT (created_at AT TIME ZONE 'UTC')::date, type, count(*)
          FROM mta.events
         WHERE account_id = %(a)s AND type = ANY(%(t)s) AND created_at >= %(live_at)s
         GROUP BY 1, 2
        """,
        {
            "a": account_id,
            "t": types,
            "since": since,
            "live": live_from,
            "live_at": _midnight(live_from),
        },
    )
    return [DailyCount.from_row(row) for row in rows]


async def counts_since(
    conn: Conn, account_id: str, types: list[str], since: datetime
) -> dict[str, int]:
    """Events of these types since ``since``, by type."""
    rows = await fetch_all(
        conn,
        """
        SELECT type, count(*) AS count FROM mta.events
         WHERE account_id = %(a)s AND type = ANY(%(t)s) AND created_at >= %(since)s
         GROUP BY type
        """,
        {"a": account_id, "t": types, "since": since},
    )
    return {str(row["type"]): int(row["count"]) for row in rows}


async def recent(conn: Conn, account_id: str, limit: int) -> list[Event]:
    """The account's newest events (events_account)."""
    rows = await fetch_all(
        conn,
        f"""
        SELECT {_COLUMNS} FROM mta.events WHERE account_id = %(a)s
         ORDER BY created_at DESC, id DESC LIMIT %(limit)s
        """,
        {"a": account_id, "limit": limit},
    )
    return [Event.from_row(row) for row in rows]
