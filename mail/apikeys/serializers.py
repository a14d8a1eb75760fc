"""Response shapes of API keys, built only here: never the hash, the token only at creation."""

from __future__ import annotations

from typing import Any

from mail.apikeys.service import TOKEN_PREFIX
from mail.apikeys.store import ApiKey


def api_key(key: ApiKey) -> dict[str, Any]:
    return {
        "object": "api_key",
        "id": key.id,
        "name": key.name,
        "permission": key.permission,
        "domain_id": key.domain_id,
        "domain": key.domain_name,
        # Enough of the token to tell keys apart; the secret part never leaves.
        "token_prefix": f"{TOKEN_PREFIX}{key.lookup}",
        "created_at": key.created_at,
        "last_used_at": key.last_used_at,
    }


def created(key: ApiKey, token: str) -> dict[str, Any]:
    """Resend's ``{id, token}``, with the key's fields: the one answer carrying the token."""
    return {**api_key(key), "token": token}


def deleted(key_id: str) -> dict[str, Any]:
    return {"object": "api_key", "id": key_id, "deleted": True}
