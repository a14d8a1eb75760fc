"""The JSON shape of a content type."""

from __future__ import annotations

from typing import Any


def type_json(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": row["id"],
        "name": row["name"],
        "label": row["label"],
        "fields": row["fields"],
        "single": row["single"],
        "previewUrl": row["preview_url"],
        "createdAt": row["created_at"],
        "updatedAt": row["updated_at"],
    }


def type_shape(row: dict[str, Any]) -> dict[str, Any]:
    """What the delivery API says about a type: its name and field shapes."""
    return {
        "name": row["name"],
        "label": row["label"],
        "single": row["single"],
        "fields": row["fields"],
    }
