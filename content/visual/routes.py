"""GET /api/website: the shared website parts and their current values (content.read)."""

from __future__ import annotations

from aiohttp import web

from common.openapi import array, obj, operation, string
from common.web import json_response
from content.auth.credentials import admin_route
from content.auth.principal import Principal
from content.context import context
from content.visual import service

routes = web.RouteTableDef()

PART = obj(
    {
        "id": string(),
        "label": string(),
        "description": string(),
        "selector": string(),
        "source": {"type": "object"},
        "value": {"type": "object"},
    },
    required=["id", "label", "description", "selector", "source", "value"],
)
WEBSITE = obj(
    {"previewUrl": string(nullable=True), "parts": array(PART)},
    required=["previewUrl", "parts"],
)


@routes.get("/api/website")
@admin_route("content.read")
@operation(auth="admin", response=WEBSITE)
async def get_website(request: web.Request, principal: Principal) -> web.Response:
    """The host's website manifest, each part with its source's current value."""
    return json_response(await service.get_website(context(request)))
