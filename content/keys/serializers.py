"""The JSON shapes of agent keys and delivery keys (never the key itself)."""

from __future__ import annotations

from datetime import datetime
from typing import Any


def _state(row: dict[str, Any], now: datetime) -> str:
    if row["revoked_at"] is not None:
        return "revoked"
    if row.get("expires_at") is not None and row["expires_at"] <= now:
        return "expired"
    return "active"


def agent_key_json(row: dict[str, Any], now: datetime) -> dict[str, Any]:
    return {
        "id": row["id"],
        "name": row["name"],
        "hint": row["hint"],
        "grants": list(row["grants"]),
        "status": _state(row, now),
        "createdAt": row["created_at"],
        "expiresAt": row["expires_at"],
        "revokedAt": row["revoked_at"],
        "lastUsedAt": row["last_used_at"],
    }


def delivery_key_json(row: dict[str, Any], now: datetime) -> dict[str, Any]:
    return {
        "id": row["id"],
        "name": row["name"],
        "hint": row["hint"],
        "types": list(row["type_scopes"]),
        "status": _state(row, now),
        "createdBy": row["created_by"],
        "createdAt": row["created_at"],
        "updatedAt": row["updated_at"],
        "revokedAt": row["revoked_at"],
        "lastUsedAt": row["last_used_at"],
    }
