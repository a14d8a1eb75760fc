"""Response shapes of filters, built only here."""

from __future__ import annotations

from typing import Any

from mta.mailstore import Filter


def filter_(row: Filter) -> dict[str, Any]:
    return {
        "object": "filter",
        "id": row.id,
        "address_id": row.address_id,
        "name": row.name,
        "script": row.script,
        "enabled": row.enabled,
        "position": row.position,
        "created_at": row.created_at,
        "updated_at": row.updated_at,
    }


def validation(extensions: frozenset[str]) -> dict[str, Any]:
    return {"object": "filter_validation", "valid": True, "extensions": sorted(extensions)}
