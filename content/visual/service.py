"""What the admin asks of visual editing: the website parts and their current values."""

from __future__ import annotations

from typing import Any

from content.context import Context
from content.visual.website import website_json


async def get_website(ctx: Context) -> dict[str, Any]:
    """``GET /api/website``: the host's manifest, each part with its source's value."""
    async with ctx.db.connection() as conn:
        return await website_json(conn, ctx.visual.website if ctx.visual else None)
