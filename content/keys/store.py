"""SQL for content.agent_keys and content.delivery_keys."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from common.db import Conn, execute, fetch_all, fetch_one
from common.records import Record
from content.auth.principal import User

_AGENT = "id, user_id, name, hint, grants, created_at, expires_at, revoked_at, last_used_at"
_DELIVERY = (
    "id, name, hint, type_scopes, created_by, created_at, updated_at, revoked_at, last_used_at"
)
# last_used_at is written at most once a minute per key, not on every request.
_TOUCH_SECONDS = 60


@dataclass(frozen=True)
class AgentKey(Record):
    """A row of content.agent_keys, without its hash."""

    id: str
    user_id: str
    name: str
    hint: str
    grants: list[str]
    created_at: datetime
    expires_at: datetime
    revoked_at: datetime | None
    last_used_at: datetime | None


@dataclass(frozen=True)
class DeliveryKey(Record):
    """A row of content.delivery_keys, without its hash."""

    id: str
    name: str
    hint: str
    type_scopes: list[str]
    created_by: str | None
    created_at: datetime
    updated_at: datetime
    revoked_at: datetime | None
    last_used_at: datetime | None


@dataclass(frozen=True)
class KeyHolder:
    """An agent key presented as a credential, with its account as it is now."""

    key_id: str
    key_name: str
    grants: list[str]
    expires_at: datetime
    revoked_at: datetime | None
    user: User


async def insert_agent_key(
    conn: Conn,
    *,
    key_id: str,
    user_id: str,
    name: str,
    token_hash: str,
    hint: str,
    grants: list[str],
    now: datetime,
    expires_at: datetime,
) -> AgentKey:
    row = await fetch_one(
        conn,
        f"INSERT INTO content.agent_keys (id, user_id, name, token_hash, hint, grants, created_at,"
        f" expires_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) RETURNING {_AGENT}",
        (key_id, user_id, name, token_hash, hint, grants, now, expires_at),
    )
    assert row is not None
    return AgentKey.from_row(row)


async def agent_key_user(conn: Conn, token_hash: str) -> KeyHolder | None:
    """The key and its account's current role, re-read on every request."""
    row = await fetch_one(
        conn,
        "SELECT k.id AS key_id, k.name AS key_name, k.grants, k.expires_at, k.revoked_at,"
        "       u.id, u.email, u.name, u.role"
        "  FROM content.agent_keys k JOIN content.users u ON u.id = k.user_id"
        " WHERE k.token_hash = %s",
        (token_hash,),
    )
    if row is None:
        return None
    return KeyHolder(
        key_id=row["key_id"],
        key_name=row["key_name"],
        grants=row["grants"],
        expires_at=row["expires_at"],
        revoked_at=row["revoked_at"],
        user=User.from_row(row),
    )


async def touch_agent_key(conn: Conn, key_id: str, now: datetime) -> None:
    await execute(
        conn,
        "UPDATE content.agent_keys SET last_used_at = %(now)s WHERE id = %(id)s AND"
        " (last_used_at IS NULL OR last_used_at < %(now)s - make_interval(secs => %(gap)s))",
        {"now": now, "id": key_id, "gap": _TOUCH_SECONDS},
    )


async def list_agent_keys(conn: Conn, user_id: str) -> list[AgentKey]:
    rows = await fetch_all(
        conn,
        f"SELECT {_AGENT} FROM content.agent_keys WHERE user_id = %s ORDER BY created_at DESC, id",
        (user_id,),
    )
    return [AgentKey.from_row(r) for r in rows]


async def revoke_agent_key(conn: Conn, key_id: str, user_id: str, now: datetime) -> AgentKey | None:
    row = await fetch_one(
        conn,
        f"UPDATE content.agent_keys SET revoked_at = coalesce(revoked_at, %s)"
        f" WHERE id = %s AND user_id = %s RETURNING {_AGENT}",
        (now, key_id, user_id),
    )
    return AgentKey.from_optional(row)


async def insert_delivery_key(
    conn: Conn,
    *,
    key_id: str,
    name: str,
    token_hash: str,
    hint: str,
    type_scopes: list[str],
    created_by: str,
    now: datetime,
) -> DeliveryKey:
    row = await fetch_one(
        conn,
        f"INSERT INTO content.delivery_keys (id, name, token_hash, hint, type_scopes, created_by,"
        f" created_at, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) RETURNING {_DELIVERY}",
        (key_id, name, token_hash, hint, type_scopes, created_by, now, now),
    )
    assert row is not None
    return DeliveryKey.from_row(row)


async def delivery_key(conn: Conn, token_hash: str) -> DeliveryKey | None:
    row = await fetch_one(
        conn,
        f"SELECT {_DELIVERY} FROM content.delivery_keys WHERE token_hash = %s",
        (token_hash,),
    )
    return DeliveryKey.from_optional(row)


async def list_delivery_keys(conn: Conn) -> list[DeliveryKey]:
    rows = await fetch_all(
        conn, f"SELECT {_DELIVERY} FROM content.delivery_keys ORDER BY created_at DESC, id"
    )
    return [DeliveryKey.from_row(r) for r in rows]


async def update_delivery_key(
    conn: Conn, key_id: str, *, name: str | None, type_scopes: list[str] | None, now: datetime
) -> DeliveryKey | None:
    row = await fetch_one(
        conn,
        f"UPDATE content.delivery_keys SET name = coalesce(%s, name),"
        f" type_scopes = coalesce(%s, type_scopes), updated_at = %s"
        f" WHERE id = %s AND revoked_at IS NULL RETURNING {_DELIVERY}",
        (name, type_scopes, now, key_id),
    )
    return DeliveryKey.from_optional(row)


async def revoke_delivery_key(conn: Conn, key_id: str, now: datetime) -> DeliveryKey | None:
    row = await fetch_one(
        conn,
        f"UPDATE content.delivery_keys SET revoked_at = coalesce(revoked_at, %s), updated_at = %s"
        f" WHERE id = %s RETURNING {_DELIVERY}",
        (now, now, key_id),
    )
    return DeliveryKey.from_optional(row)


async def touch_delivery_key(conn: Conn, key_id: str, now: datetime) -> None:
    await execute(
        conn,
        "UPDATE content.delivery_keys SET last_used_at = %(now)s WHERE id = %(id)s AND"
        " (last_used_at IS NULL OR last_used_at < %(now)s - make_interval(secs => %(gap)s))",
        {"now": now, "id": key_id, "gap": _TOUCH_SECONDS},
    )
