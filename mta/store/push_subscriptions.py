"""JMAP push subscriptions (RFC 8620 7.2) of a principal. Writes ``mta.push_subscriptions``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from common.db import Conn, execute, fetch_all, fetch_one
from common.records import Record

_COLUMNS = """id::text AS id, device_client_id, url, keys, verification_code, verified, expires,
             types"""
# The columns update() may set (checked by the caller).
UPDATABLE = ("verified", "expires", "types")


@dataclass(frozen=True)
class PushSubscription(Record):
    id: str
    device_client_id: str
    url: str
    keys: Any
    verification_code: str
    verified: bool
    expires: datetime | None
    types: list[str] | None


@dataclass(frozen=True)
class Target(Record):
    """A verified, unexpired subscription a state change is posted to."""

    id: str
    url: str
    types: list[str] | None


async def list_for(conn: Conn, principal: str) -> list[PushSubscription]:
    rows = await fetch_all(
        conn,
        f"SELECT {_COLUMNS} FROM mta.push_subscriptions WHERE principal = %s ORDER BY created_at",
        (principal,),
    )
    return [PushSubscription.from_row(row) for row in rows]


async def count_for(conn: Conn, principal: str) -> int:
    rows = await fetch_all(
        conn, "SELECT 1 FROM mta.push_subscriptions WHERE principal = %s", (principal,)
    )
    return len(rows)


async def find(conn: Conn, principal: str, subscription_id: str) -> PushSubscription | None:
    row = await fetch_one(
        conn,
        f"SELECT {_COLUMNS} FROM mta.push_subscriptions WHERE id::text = %s AND principal = %s",
        (subscription_id, principal),
    )
    return PushSubscription.from_optional(row)


async def create(
    conn: Conn,
    principal: str,
    *,
    address_ids: list[str],
    device_client_id: str,
    url: str,
    verification_code: str,
    expires: datetime,
    types: list[str] | None,
    now: datetime,
) -> str:
    row = await fetch_one(
        conn,
        """
        INSERT INTO mta.push_subscriptions
            (principal, address_ids, device_client_id, url, verification_code, expires,
             types, created_at)
        VALUES (%s, %s::uuid[], %s, %s, %s, %s, %s, %s)
        RETURNING id::text AS id
        """,
        (principal, address_ids, device_client_id, url, verification_code, expires, types, now),
    )
    assert row is not None
    return str(row["id"])


async def update(conn: Conn, subscription_id: str, values: dict[str, Any]) -> None:
    if set(values) - set(UPDATABLE):
        raise ValueError(f"not updatable: {sorted(set(values) - set(UPDATABLE))}")
    assignments = ", ".join(f"{c} = %s" for c in values)
    await execute(
        conn,
        f"UPDATE mta.push_subscriptions SET {assignments} WHERE id::text = %s",
        (*values.values(), subscription_id),
    )


async def destroy(conn: Conn, principal: str, subscription_id: str) -> bool:
    gone = await execute(
        conn,
        "DELETE FROM mta.push_subscriptions WHERE id::text = %s AND principal = %s",
        (subscription_id, principal),
    )
    return bool(gone)


async def targets(conn: Conn, address_id: str, now: datetime) -> list[Target]:
    """The verified, unexpired subscriptions that cover ``address_id``."""
    rows = await fetch_all(
        conn,
        """
        SELECT id::text AS id, url, types FROM mta.push_subscriptions
         WHERE %s::uuid = ANY(address_ids) AND verified AND (expires IS NULL OR expires > %s)
        """,
        (address_id, now),
    )
    return [Target.from_row(row) for row in rows]
