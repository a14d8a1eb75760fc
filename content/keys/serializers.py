"""The JSON shapes of agent keys and delivery keys (never the key itself)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from content.keys.store import AgentKey, DeliveryKey


def _state(revoked_at: datetime | None, expires_at: datetime | None, now: datetime) -> str:
    if revoked_at is not None:
        return "revoked"
    if expires_at is not None and expires_at <= now:
        return "expired"
    return "active"


def agent_key_json(key: AgentKey, now: datetime) -> dict[str, Any]:
    return {
        "id": key.id,
        "name": key.name,
        "hint": key.hint,
        "grants": list(key.grants),
        "status": _state(key.revoked_at, key.expires_at, now),
        "createdAt": key.created_at,
        "expiresAt": key.expires_at,
        "revokedAt": key.revoked_at,
        "lastUsedAt": key.last_used_at,
    }


def delivery_key_json(key: DeliveryKey, now: datetime) -> dict[str, Any]:
    # Delivery keys do not expire; they are revoked.
    return {
        "id": key.id,
        "name": key.name,
        "hint": key.hint,
        "types": list(key.type_scopes),
        "status": _state(key.revoked_at, None, now),
        "createdBy": key.created_by,
        "createdAt": key.created_at,
        "updatedAt": key.updated_at,
        "revokedAt": key.revoked_at,
        "lastUsedAt": key.last_used_at,
    }
