"""SQL of content.webhooks and content.webhook_attempts."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypedDict

from common.db import Conn, execute, fetch_all, fetch_one, fetch_val
from common.records import Record

_COLUMNS = "id, name, url, events, enabled, secret_hint, created_at, updated_at"


@dataclass(frozen=True)
class Webhook(Record):
    """A row of content.webhooks, without its sealed secret."""

    id: str
    name: str
    url: str
    events: list[str]
    enabled: bool
    secret_hint: str
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class Attempt(Record):
    id: int
    message_id: str
    event: str
    attempt: int
    at: datetime
    status: int | None
    ok: bool
    error: str
    duration_ms: int


class WebhookChanges(TypedDict, total=False):
    name: str
    url: str
    events: list[str]
    enabled: bool


async def insert_webhook(
    conn: Conn,
    webhook_id: str,
    *,
    name: str,
    url: str,
    events: list[str],
    enabled: bool,
    secret_sealed: str,
    secret_hint: str,
    now: datetime,
) -> Webhook:
    row = await fetch_one(
        conn,
        "INSERT INTO content.webhooks (id, name, url, events, enabled, secret_sealed,"
        " secret_hint, created_at, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"
        f" RETURNING {_COLUMNS}",
        (webhook_id, name, url, events, enabled, secret_sealed, secret_hint, now, now),
    )
    assert row is not None
    return Webhook.from_row(row)


async def list_webhooks(conn: Conn) -> list[Webhook]:
    rows = await fetch_all(
        conn, f"SELECT {_COLUMNS} FROM content.webhooks ORDER BY created_at DESC, id"
    )
    return [Webhook.from_row(r) for r in rows]


async def get_webhook(conn: Conn, webhook_id: str, *, lock: bool = False) -> Webhook | None:
    suffix = " FOR UPDATE" if lock else ""
    row = await fetch_one(
        conn, f"SELECT {_COLUMNS} FROM content.webhooks WHERE id = %s{suffix}", (webhook_id,)
    )
    return Webhook.from_optional(row)


async def sealed_secret(conn: Conn, webhook_id: str) -> str | None:
    value = await fetch_val(
        conn, "SELECT secret_sealed FROM content.webhooks WHERE id = %s", (webhook_id,)
    )
    return None if value is None else str(value)


async def update_webhook(
    conn: Conn, webhook_id: str, changes: WebhookChanges, now: datetime
) -> Webhook | None:
    sets = ", ".join(f"{column} = %({column})s" for column in changes)
    values: dict[str, Any] = {**changes, "id": webhook_id, "now": now}
    row = await fetch_one(
        conn,
        f"UPDATE content.webhooks SET {sets + ', ' if sets else ''}updated_at = %(now)s"
        f" WHERE id = %(id)s RETURNING {_COLUMNS}",
        values,
    )
    return Webhook.from_optional(row)


async def delete_webhook(conn: Conn, webhook_id: str) -> bool:
    return await execute(conn, "DELETE FROM content.webhooks WHERE id = %s", (webhook_id,)) > 0


async def subscribed_ids(conn: Conn, event: str) -> list[str]:
    """Enabled webhooks that take ``event`` (an empty list takes every event)."""
    rows = await fetch_all(
        conn,
        "SELECT id FROM content.webhooks"
        " WHERE enabled AND (events = '{}' OR %s = ANY(events)) ORDER BY id",
        (event,),
    )
    return [str(r["id"]) for r in rows]


async def record_attempt(
    conn: Conn,
    webhook_id: str,
    *,
    message_id: str,
    event: str,
    attempt: int,
    at: datetime,
    status: int | None,
    ok: bool,
    error: str,
    duration_ms: int,
) -> None:
    await execute(
        conn,
        "INSERT INTO content.webhook_attempts (webhook_id, message_id, event, attempt, at,"
        " status, ok, error, duration_ms) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
        (webhook_id, message_id, event, attempt, at, status, ok, error[:2000], duration_ms),
    )


async def list_attempts(
    conn: Conn, webhook_id: str, *, limit: int, offset: int
) -> tuple[list[Attempt], int]:
    """One page of a webhook's attempts, newest first, and how many there are."""
    rows = await fetch_all(
        conn,
        "SELECT id, message_id, event, attempt, at, status, ok, error, duration_ms"
        " FROM content.webhook_attempts WHERE webhook_id = %s ORDER BY id DESC"
        " LIMIT %s OFFSET %s",
        (webhook_id, limit, offset),
    )
    total = await fetch_val(
        conn, "SELECT count(*) FROM content.webhook_attempts WHERE webhook_id = %s", (webhook_id,)
    )
    return [Attempt.from_row(r) for r in rows], int(total)
