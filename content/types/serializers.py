"""The JSON shape of a content type."""

from __future__ import annotations

from typing import Any

from content.types.store import ContentType


def type_json(ctype: ContentType) -> dict[str, Any]:
    return {
        "id": ctype.id,
        "name": ctype.name,
        "label": ctype.label,
        "fields": ctype.fields,
        "single": ctype.single,
        "previewUrl": ctype.preview_url,
        "createdAt": ctype.created_at,
        "updatedAt": ctype.updated_at,
    }


def type_shape(ctype: ContentType) -> dict[str, Any]:
    """What the delivery API says about a type: its name and field shapes."""
    return {
        "name": ctype.name,
        "label": ctype.label,
        "single": ctype.single,
        "fields": ctype.fields,
    }
