"""What the admin asks of visual editing: the website parts and their current values."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from content.context import Context
from content.types import store as type_store
from content.visual.definitions import VisualDefinition
from content.visual.website import website_json


def definition_json(type_name: str, definition: VisualDefinition) -> dict[str, Any]:
    """One definition as the admin reads it (selectors stay with the host)."""
    return {
        "type": type_name,
        "sections": [
            {
                "id": s.id,
                "label": s.label,
                "fields": list(s.fields),
                "movable": s.movable,
                "collection": (
                    {"type": s.collection.type, "label": s.collection.label}
                    if s.collection
                    else None
                ),
            }
            for s in definition.sections
        ],
        "fields": [
            {
                "key": key,
                "formatted": key in definition.formatted,
                "reference": (
                    {"type": ref.type, "label": ref.label}
                    if (ref := definition.references.get(key))
                    else None
                ),
            }
            for key in definition.fields
        ],
    }


def get_definitions(ctx: Context) -> list[dict[str, Any]]:
    """``GET /api/visual``: the types the host edits visually, and what their pages declare."""
    if ctx.visual is None:
        return []
    return [definition_json(name, d) for name, d in sorted(ctx.visual.definitions.items())]


async def get_website(ctx: Context) -> dict[str, Any]:
    """``GET /api/website``: the host's manifest, each part with its source's value."""
    async with ctx.db.connection() as conn:
        return await website_json(conn, ctx.visual.website if ctx.visual else None)


async def preview_origins(ctx: Context) -> list[str]:
    """The other origins the visual types' previews live on (an absolute preview
    URL template), which the admin's visual editor must be allowed to frame."""
    if ctx.visual is None or not ctx.visual.definitions:
        return []
    async with ctx.db.connection() as conn:
        types = await type_store.list_types(conn)
    origins = set()
    for ctype in types:
        if ctype.name not in ctx.visual.definitions or not ctype.preview_url:
            continue
        parts = urlsplit(ctype.preview_url)
        if parts.scheme in ("http", "https") and parts.netloc and "{" not in parts.netloc:
            origins.add(f"{parts.scheme}://{parts.netloc}")
    return sorted(origins)
