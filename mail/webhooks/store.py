"""SQL of mail.webhooks, mail.webhook_deliveries and mail.webhook_attempts."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from common.crypto import Sealer
from common.db import Conn, execute, fetch_all, fetch_one, fetch_val
from common.records import Record
from mail.web.lists import ListParams, Sorts

SEAL_PURPOSE = "mail.webhook"

_COLUMNS = (
    "w.id::text, w.account_id::text, w.endpoint, w.description, w.events, w.enabled,"
    " w.disabled_reason, w.secret_hint, w.consecutive_failures, w.failing_since,"
    " w.last_success_at, w.created_at, w.updated_at"
)

WEBHOOK_SORTS = Sorts(
    columns={"created_at": "w.created_at", "endpoint": "w.endpoint"},
    default="created_at",
    tiebreak="w.id",
)
DELIVERY_SORTS = Sorts(
    columns={"created_at": "d.event_created_at", "type": "d.event_type", "status": "d.status"},
    default="created_at",
    tiebreak="d.id",
)


def webhook_sealer(secret: str) -> Sealer:
    return Sealer(secret, SEAL_PURPOSE)


@dataclass(frozen=True)
class Webhook(Record):
    """An endpoint, without its sealed secret."""

    id: str
    account_id: str
    endpoint: str
    description: str
    events: list[str]
    enabled: bool
    disabled_reason: str | None
    secret_hint: str
    consecutive_failures: int
    failing_since: datetime | None
    last_success_at: datetime | None
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class Delivery(Record):
    """One event for one endpoint."""

    id: str
    webhook_id: str
    account_id: str
    event_id: str
    event_type: str
    event_created_at: datetime
    message_id: str
    status: str
    attempts: int
    last_attempt_at: datetime | None
    next_attempt_at: datetime | None
    created_at: datetime
    # The last attempt's HTTP status (None before any, or when nothing answered).
    last_status: int | None = None


@dataclass(frozen=True)
class Attempt(Record):
    id: int
    attempt: int
    trigger: str
    at: datetime
    status: int | None
    ok: bool
    error: str
    duration_ms: int
    response: str


# --- endpoints ---------------------------------------------------------------


async def insert(
    conn: Conn,
    *,
    account_id: str,
    endpoint: str,
    description: str,
    events: list[str],
    enabled: bool,
    secret_sealed: str,
    secret_hint: str,
    now: datetime,
) -> str:
    return str(
        await fetch_val(
            conn,
            """
            INSERT INTO mail.webhooks (account_id, endpoint, description, events, enabled,
                   disabled_reason, secret_sealed, secret_hint, created_at, updated_at)
            VALUES (%(a)s, %(e)s, %(d)s, %(ev)s, %(on)s, %(why)s, %(s)s, %(h)s, %(now)s, %(now)s)
            RETURNING id
            """,
            {
                "a": account_id,
                "e": endpoint,
                "d": description,
                "ev": events,
                "on": enabled,
                "why": None if enabled else "manual",
                "s": secret_sealed,
                "h": secret_hint,
                "now": now,
            },
        )
    )


async def get(
    conn: Conn, account_id: str, webhook_id: str, *, for_update: bool = False
) -> Webhook | None:
    lock = " FOR UPDATE" if for_update else ""
    row = await fetch_one(
        conn,
        f"SELECT {_COLUMNS} FROM mail.webhooks w WHERE w.id = %s AND w.account_id = %s{lock}",
        (webhook_id, account_id),
    )
    return Webhook.from_optional(row)


async def get_any(conn: Conn, webhook_id: str) -> Webhook | None:
    """By id alone: for the delivery job, which acts for no signed-in account."""
    row = await fetch_one(
        conn, f"SELECT {_COLUMNS} FROM mail.webhooks w WHERE w.id = %s", (webhook_id,)
    )
    return Webhook.from_optional(row)


async def page(conn: Conn, account_id: str, params: ListParams) -> tuple[list[Webhook], int]:
    where = "w.account_id = %(a)s"
    if params.search_pattern:
        where += " AND (w.endpoint ILIKE %(q)s OR w.description ILIKE %(q)s)"
    values = {
        "a": account_id,
        "q": params.search_pattern,
        "limit": params.limit,
        "offset": params.offset,
    }
    rows = await fetch_all(
        conn,
        f"SELECT {_COLUMNS} FROM mail.webhooks w WHERE {where}"
        f" ORDER BY {params.order_by} LIMIT %(limit)s OFFSET %(offset)s",
        values,
    )
    total = await fetch_val(conn, f"SELECT count(*) FROM mail.webhooks w WHERE {where}", values)
    return [Webhook.from_row(r) for r in rows], int(total or 0)


async def update(conn: Conn, webhook_id: str, changes: dict[str, Any], now: datetime) -> None:
    sets = "".join(f"{column} = %({column})s, " for column in changes)
    await execute(
        conn,
        f"UPDATE mail.webhooks SET {sets}updated_at = %(now)s WHERE id = %(id)s",
        {**changes, "id": webhook_id, "now": now},
    )


async def delete(conn: Conn, account_id: str, webhook_id: str) -> bool:
    n = await execute(
        conn,
        "DELETE FROM mail.webhooks WHERE id = %s AND account_id = %s",
        (webhook_id, account_id),
    )
    return n > 0


async def sealed_secret(conn: Conn, webhook_id: str) -> str | None:
    value = await fetch_val(
        conn, "SELECT secret_sealed FROM mail.webhooks WHERE id = %s", (webhook_id,)
    )
    return None if value is None else str(value)


async def subscribers(conn: Conn, account_ids: Sequence[str]) -> list[Webhook]:
    """Enabled endpoints of these accounts (the fan-out matches their event lists)."""
    rows = await fetch_all(
        conn,
        f"SELECT {_COLUMNS} FROM mail.webhooks w"
        " WHERE w.account_id = ANY(%s::uuid[]) AND w.enabled ORDER BY w.id",
        (list(account_ids),),
    )
    return [Webhook.from_row(r) for r in rows]


async def failing(conn: Conn, account_id: str) -> list[Webhook]:
    """Endpoints whose last attempt failed or that the failures rule switched off."""
    rows = await fetch_all(
        conn,
        f"SELECT {_COLUMNS} FROM mail.webhooks w WHERE w.account_id = %s"
        " AND (w.consecutive_failures > 0 OR w.disabled_reason = 'failing')"
        " ORDER BY w.failing_since NULLS LAST, w.id",
        (account_id,),
    )
    return [Webhook.from_row(r) for r in rows]


async def attempt_outcome(
    conn: Conn, webhook_id: str, ok: bool, now: datetime, *, disable_after: float, min_failures: int
) -> bool:
    """Count one attempt's outcome on its endpoint; True when this one switched it off.

    One statement under the row lock, so attempts finishing side by side in
    several processes count every failure.
    """
    if ok:
        await execute(
            conn,
            "UPDATE mail.webhooks SET consecutive_failures = 0, failing_since = NULL,"
            " last_success_at = %s WHERE id = %s",
            (now, webhook_id),
        )
        return False
    disabled = await fetch_val(
        conn,
        """
        WITH counted AS (
            SELECT id, consecutive_failures + 1 AS failures,
                   coalesce(failing_since, %(now)s) AS since
              FROM mail.webhooks WHERE id = %(id)s FOR UPDATE
        )
        UPDATE mail.webhooks w
           SET consecutive_failures = c.failures,
               failing_since = c.since,
               enabled = w.enabled AND NOT (c.failures >= %(min)s
                        AND %(now)s - c.since >= make_interval(secs => %(after)s)),
               disabled_reason = CASE
                   WHEN w.enabled AND c.failures >= %(min)s
                        AND %(now)s - c.since >= make_interval(secs => %(after)s)
                   THEN 'failing' ELSE w.disabled_reason END
          FROM counted c
         WHERE w.id = c.id
        RETURNING w.disabled_reason = 'failing' AND NOT w.enabled
        """,
        {"id": webhook_id, "now": now, "min": min_failures, "after": disable_after},
    )
    return bool(disabled)


# --- deliveries --------------------------------------------------------------

_DELIVERY = (
    "d.id::text, d.webhook_id::text, d.account_id::text, d.event_id::text, d.event_type,"
    " d.event_created_at, d.message_id, d.status, d.attempts, d.last_attempt_at,"
    " d.next_attempt_at, d.created_at,"
    " (SELECT a.status FROM mail.webhook_attempts a WHERE a.delivery_id = d.id"
    "   ORDER BY a.id DESC LIMIT 1) AS last_status"
)


async def insert_deliveries(
    conn: Conn, rows: list[dict[str, Any]], now: datetime
) -> list[tuple[str, str]]:
    """One delivery per (endpoint, event); an existing pair is left alone.

    Returns (delivery id, event id) of each new one.
    """
    if not rows:
        return []
    found = await fetch_all(
        conn,
        """
        INSERT INTO mail.webhook_deliveries
               (webhook_id, account_id, event_id, event_type, event_created_at, message_id,
                next_attempt_at, created_at)
        SELECT w, a, e, t, c, 'msg_' || replace(gen_random_uuid()::text, '-', ''), %(now)s, %(now)s
          FROM unnest(%(w)s::uuid[], %(a)s::uuid[], %(e)s::uuid[], %(t)s::text[],
                      %(c)s::timestamptz[]) AS x(w, a, e, t, c)
        ON CONFLICT (webhook_id, event_id) DO NOTHING
        RETURNING id::text, event_id::text
        """,
        {
            "w": [r["webhook_id"] for r in rows],
            "a": [r["account_id"] for r in rows],
            "e": [r["event_id"] for r in rows],
            "t": [r["event_type"] for r in rows],
            "c": [r["event_created_at"] for r in rows],
            "now": now,
        },
    )
    return [(str(r["id"]), str(r["event_id"])) for r in found]


async def get_delivery(conn: Conn, delivery_id: str) -> Delivery | None:
    row = await fetch_one(
        conn,
        f"SELECT {_DELIVERY} FROM mail.webhook_deliveries d WHERE d.id = %s",
        (delivery_id,),
    )
    return Delivery.from_optional(row)


async def delivery_of(
    conn: Conn, account_id: str, webhook_id: str, event_id: str
) -> Delivery | None:
    row = await fetch_one(
        conn,
        f"SELECT {_DELIVERY} FROM mail.webhook_deliveries d"
        " WHERE d.webhook_id = %s AND d.event_id = %s AND d.account_id = %s",
        (webhook_id, event_id, account_id),
    )
    return Delivery.from_optional(row)


async def delivery_page(
    conn: Conn, account_id: str, params: ListParams, webhook_id: str | None = None
) -> tuple[list[Delivery], int]:
    where = "d.account_id = %(a)s"
    if webhook_id is not None:
        where += " AND d.webhook_id = %(w)s"
    if params.search_pattern:
        where += " AND (d.event_type ILIKE %(q)s OR d.status ILIKE %(q)s)"
    values = {
        "a": account_id,
        "w": webhook_id,
        "q": params.search_pattern,
        "limit": params.limit,
        "offset": params.offset,
    }
    rows = await fetch_all(
        conn,
        f"SELECT {_DELIVERY} FROM mail.webhook_deliveries d WHERE {where}"
        f" ORDER BY {params.order_by} LIMIT %(limit)s OFFSET %(offset)s",
        values,
    )
    total = await fetch_val(
        conn, f"SELECT count(*) FROM mail.webhook_deliveries d WHERE {where}", values
    )
    return [Delivery.from_row(r) for r in rows], int(total or 0)


async def record_attempt(
    conn: Conn,
    delivery_id: str,
    *,
    trigger: str,
    at: datetime,
    status: int | None,
    ok: bool,
    error: str,
    duration_ms: int,
    response: str,
    state: str,
    next_attempt_at: datetime | None,
) -> int:
    """Append an attempt and move the delivery to ``state``; returns the attempt's number."""
    number = await fetch_val(
        conn,
        """
        UPDATE mail.webhook_deliveries
           SET attempts = attempts + 1, last_attempt_at = %(at)s, status = %(state)s,
               next_attempt_at = %(next)s
         WHERE id = %(id)s
        RETURNING attempts
        """,
        {"id": delivery_id, "at": at, "state": state, "next": next_attempt_at},
    )
    await execute(
        conn,
        "INSERT INTO mail.webhook_attempts (delivery_id, attempt, trigger, at, status, ok,"
        " error, duration_ms, response) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
        (delivery_id, number, trigger, at, status, ok, error, duration_ms, response),
    )
    return int(number or 0)


async def give_up(conn: Conn, delivery_id: str) -> None:
    """A delivery whose endpoint went away or was switched off: no further tries."""
    await execute(
        conn,
        "UPDATE mail.webhook_deliveries SET status = 'failed', next_attempt_at = NULL"
        " WHERE id = %s AND status IN ('pending', 'retrying')",
        (delivery_id,),
    )


async def attempts(conn: Conn, delivery_id: str) -> list[Attempt]:
    rows = await fetch_all(
        conn,
        "SELECT id, attempt, trigger, at, status, ok, error, duration_ms, response"
        " FROM mail.webhook_attempts WHERE delivery_id = %s ORDER BY id",
        (delivery_id,),
    )
    return [Attempt.from_row(r) for r in rows]


# Finished deliveries (and their attempts) are kept 30 days, the Overview's
# window and what Resend shows of a webhook's history; pending and retrying ones
# are kept until they finish, however old their event.
RETENTION_DAYS = 30


async def sweep(conn: Conn, before: datetime, batch: int = 5000) -> int:
    """Delete up to ``batch`` finished deliveries whose event is older than ``before``."""
    return await execute(
        conn,
        """
        DELETE FROM mail.webhook_deliveries WHERE id IN (
            SELECT id FROM mail.webhook_deliveries
             WHERE status IN ('delivered', 'failed') AND event_created_at < %s
             LIMIT %s)
        """,
        (before, batch),
    )
