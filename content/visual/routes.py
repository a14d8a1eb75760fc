"""GET /api/website: the shared website parts and their current values (content.read);
GET /api/visual: the visual page definitions the admin's preview works from."""

from __future__ import annotations

from aiohttp import web

from common.openapi import array, boolean, obj, operation, string
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

LINK = {
    "anyOf": [
        obj({"type": string(), "label": string()}, required=["type", "label"]),
        {"type": "null"},
    ]
}
DEFINITION = obj(
    {
        "type": string(),
        "sections": array(
            obj(
                {
                    "id": string(),
                    "label": string(),
                    "fields": array(string()),
                    "movable": boolean(),
                    "collection": LINK,
                },
                required=["id", "label", "fields", "movable", "collection"],
            )
        ),
        "fields": array(
            obj(
                {"key": string(), "formatted": boolean(), "reference": LINK},
                required=["key", "formatted", "reference"],
            )
        ),
    },
    required=["type", "sections", "fields"],
)


@routes.get("/api/visual")
@admin_route("content.read")
@operation(auth="admin", response=obj({"data": array(DEFINITION)}, required=["data"]))
async def get_visual(request: web.Request, principal: Principal) -> web.Response:
    """The content types edited visually: each one's sections and click targets."""
    return json_response({"data": service.get_definitions(context(request))})


@routes.get("/api/website")
@admin_route("content.read")
@operation(auth="admin", response=WEBSITE)
async def get_website(request: web.Request, principal: Principal) -> web.Response:
    """The host's website manifest, each part with its source's current value."""
    return json_response(await service.get_website(context(request)))
