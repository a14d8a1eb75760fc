"""Agent keys (svcagt_) and delivery keys (svc_): minted once, stored as SHA-256."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import Any, TypeVar

from common.crypto import sha256_hex
from common.db import Conn
from common.ids import prefixed_token, short_id
from content.auth.credentials import AGENT_KEY_PREFIX, DELIVERY_KEY_PREFIX
from content.auth.permissions import PERMISSIONS, role_permissions
from content.auth.principal import Principal
from content.auth.service import confirm_password
from content.context import Context
from content.errors import NotFound, Problems
from content.keys import store
from content.keys.store import AgentKey, DeliveryKey
from content.types.store import type_names
from content.writes import write

DEFAULT_DAYS = 90
MAX_DAYS = 365
ALL_TYPES = "*"
# Characters of the key kept in clear so people can tell keys apart.
HINT_CHARS = 4


def _hint(token: str, prefix: str) -> str:
    return token[: len(prefix) + HINT_CHARS]


def _name(body: dict[str, Any], p: Problems, *, required: bool = True) -> str | None:
    name = body.get("name")
    if name is None and not required:
        return None
    if not isinstance(name, str) or not name.strip() or len(name) > 100:
        p.add("name", "must be a non-empty string of at most 100 characters")
        return None
    return name.strip()


async def mint_agent_key(
    ctx: Context, actor: Principal, body: dict[str, Any]
) -> tuple[AgentKey, str]:
    p = Problems()
    name = _name(body, p)
    grants = body.get("grants")
    mine = role_permissions(actor.user.role)
    if not isinstance(grants, list) or not grants:
        p.add("grants", "must be a non-empty list of permissions")
        grants = []
    for i, grant in enumerate(grants):
        if grant not in PERMISSIONS:
            p.add(f"grants.{i}", "is not a permission")
        elif grant not in mine:
            p.add(f"grants.{i}", f"is beyond your role ({actor.user.role})")
    days = body.get("expiresInDays", DEFAULT_DAYS)
    if not isinstance(days, int) or isinstance(days, bool) or not 1 <= days <= MAX_DAYS:
        p.add("expiresInDays", f"must be a whole number of days from 1 to {MAX_DAYS}")
    p.raise_if_any()
    await confirm_password(ctx, actor.user.id, body.get("password"), field="password")
    token = prefixed_token(AGENT_KEY_PREFIX)
    async with write(ctx) as tx:
        row = await store.insert_agent_key(
            tx.conn,
            key_id=short_id(),
            user_id=actor.user.id,
            name=str(name),
            token_hash=sha256_hex(token),
            hint=_hint(token, AGENT_KEY_PREFIX),
            grants=sorted(set(grants)),
            now=tx.now,
            expires_at=tx.now + timedelta(days=days),
        )
        summary = {"name": name, "grants": row.grants, "expiresAt": row.expires_at}
        await tx.record(actor.actor(), "agent_key.created", "agent_key", row.id, summary)
    return row, token


async def list_agent_keys(ctx: Context, user_id: str) -> list[AgentKey]:
    """The person's own agent keys, revoked and expired ones included."""
    async with ctx.db.connection() as conn:
        return await store.list_agent_keys(conn, user_id)


async def revoke_agent_key(ctx: Context, actor: Principal, key_id: str) -> AgentKey:
    """Revoke one of your own agent keys; sessions and other keys are untouched."""

    def revoke(conn: Conn, now: datetime) -> Awaitable[AgentKey | None]:
        # Only your own: someone else's key is not found.
        return store.revoke_agent_key(conn, key_id, actor.user.id, now)

    return await _revoke(ctx, actor, "agent_key", key_id, revoke)


async def _scopes(
    ctx: Context, body: dict[str, Any], p: Problems, *, required: bool
) -> list[str] | None:
    types = body.get("types")
    if types is None and not required:
        return None
    if not isinstance(types, list) or not types:
        p.add("types", 'must be a non-empty list of type names, or ["*"] for every type')
        return None
    async with ctx.db.connection() as conn:
        known = await type_names(conn)
    for i, name in enumerate(types):
        if not isinstance(name, str):
            p.add(f"types.{i}", "must be a type name")
        elif name != ALL_TYPES and name not in known:
            p.add(f"types.{i}", "is not a content type")
    # Only strings: an object or a list in the list would make set() raise (a 500).
    return sorted({name for name in types if isinstance(name, str)})


async def list_delivery_keys(ctx: Context) -> list[DeliveryKey]:
    async with ctx.db.connection() as conn:
        return await store.list_delivery_keys(conn)


async def mint_delivery_key(
    ctx: Context, actor: Principal, body: dict[str, Any]
) -> tuple[DeliveryKey, str]:
    p = Problems()
    name = _name(body, p)
    scopes = await _scopes(ctx, body, p, required=True)
    p.raise_if_any()
    token = prefixed_token(DELIVERY_KEY_PREFIX)
    async with write(ctx) as tx:
        row = await store.insert_delivery_key(
            tx.conn,
            key_id=short_id(),
            name=str(name),
            token_hash=sha256_hex(token),
            hint=_hint(token, DELIVERY_KEY_PREFIX),
            type_scopes=scopes or [],
            created_by=actor.user.id,
            now=tx.now,
        )
        summary = {"name": name, "types": scopes}
        await tx.record(actor.actor(), "delivery_key.created", "delivery_key", row.id, summary)
    return row, token


async def update_delivery_key(
    ctx: Context, actor: Principal, key_id: str, body: dict[str, Any]
) -> DeliveryKey:
    p = Problems()
    name = _name(body, p, required=False)
    scopes = await _scopes(ctx, body, p, required=False)
    for key in sorted(set(body) - {"name", "types"}):
        p.add(key, "is not a delivery key property")
    p.raise_if_any()
    async with write(ctx) as tx:
        row = await store.update_delivery_key(
            tx.conn, key_id, name=name, type_scopes=scopes, now=tx.now
        )
        if row is None:
            raise NotFound("no such delivery key")
        summary = {k: v for k, v in (("name", name), ("types", scopes)) if v is not None}
        # Notified: every process drops its cached copy of the key (delivery/cache.py).
        await tx.record(
            actor.actor(),
            "delivery_key.updated",
            "delivery_key",
            key_id,
            summary,
            notify={"key": key_id},
        )
    return row


async def revoke_delivery_key(ctx: Context, actor: Principal, key_id: str) -> DeliveryKey:
    def revoke(conn: Conn, now: datetime) -> Awaitable[DeliveryKey | None]:
        return store.revoke_delivery_key(conn, key_id, now)

    return await _revoke(ctx, actor, "delivery_key", key_id, revoke)


Key = TypeVar("Key", AgentKey, DeliveryKey)


async def _revoke(
    ctx: Context,
    actor: Principal,
    kind: str,
    key_id: str,
    revoke: Callable[[Conn, datetime], Awaitable[Key | None]],
) -> Key:
    async with write(ctx) as tx:
        row = await revoke(tx.conn, tx.now)
        if row is None:
            raise NotFound(f"no such {kind.replace('_', ' ')}")
        # A delivery key's revocation is notified: every process forgets its cached copy.
        notify = {"key": key_id} if kind == "delivery_key" else None
        await tx.record(actor.actor(), f"{kind}.revoked", kind, key_id, notify=notify)
    return row
