"""/api/design (settings.manage): the declared surfaces, their overrides, changes.

Delivery serves the effective values at ``GET /site/design``
(content/delivery/routes.py).
"""

from __future__ import annotations

from aiohttp import web

from common.openapi import array, obj, operation, string
from common.web import json_response
from content.auth.credentials import admin_route
from content.auth.principal import Principal
from content.context import context
from content.design import service
from content.design.service import Catalogue
from content.design.surfaces import PROPERTY_TYPES
from content.http import read_body

routes = web.RouteTableDef()

# The catalogue of the service object that built the app (content/service.py).
DESIGN = web.AppKey("content_design", Catalogue)

CHANGE_BODY = obj({}, additional=string(max_length=200, nullable=True))
_PROPERTY_FIELDS = {
    "key": string(),
    "type": string(enum=PROPERTY_TYPES),
    "label": string(),
    "description": string(),
    "default": string(nullable=True),
    "options": array(string()),
    "value": string(nullable=True),
    "effective": string(nullable=True),
}
_SURFACE_FIELDS = {
    "id": string(),
    "label": string(),
    "description": string(),
    "selector": string(),
    "source": string(),
    "properties": array(obj(_PROPERTY_FIELDS, required=list(_PROPERTY_FIELDS))),
}
SURFACE = obj(_SURFACE_FIELDS, required=list(_SURFACE_FIELDS))
# GET /site/design (content/delivery/routes.py).
DELIVERED = obj(
    {
        "surfaces": obj(
            {},
            additional=obj(
                {"selector": string(), "values": obj({}, additional=string())},
                required=["selector", "values"],
            ),
        ),
        "css": string(),
    },
    required=["surfaces", "css"],
)


@routes.get("/api/design")
@admin_route("settings.manage")
@operation(auth="admin", response=obj({"data": array(SURFACE)}, required=["data"]))
async def get_design(request: web.Request, principal: Principal) -> web.Response:
    """The declared design surfaces, their properties and overrides."""
    data = await service.get_design(context(request), request.app[DESIGN])
    return json_response({"data": data})


@routes.patch("/api/design/{surface}")
@admin_route("settings.manage")
@operation(auth="admin", body=CHANGE_BODY, response=SURFACE)
async def change_surface(request: web.Request, principal: Principal) -> web.Response:
    """Set properties of a surface; a property sent as null loses its override."""
    body = await read_body(request)
    surface = await service.change_surface(
        context(request), request.app[DESIGN], principal, request.match_info["surface"], body
    )
    return json_response(surface)


@routes.delete("/api/design/{surface}")
@admin_route("settings.manage")
@operation(auth="admin", response=SURFACE)
async def reset_surface(request: web.Request, principal: Principal) -> web.Response:
    """Remove every override of a surface (its defaults apply again)."""
    surface = await service.change_surface(
        context(request),
        request.app[DESIGN],
        principal,
        request.match_info["surface"],
        {},
        reset=True,
    )
    return json_response(surface)
