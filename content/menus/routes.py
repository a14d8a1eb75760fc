"""Menus under /api/menus (read: content.read; change: menus.manage)."""

from __future__ import annotations

from aiohttp import web

from common.openapi import JSON, Schema, array, obj, operation, string
from common.web import json_response
from content.auth.credentials import admin_route
from content.auth.principal import Principal
from content.context import context
from content.http import read_body
from content.menus import service
from content.menus.serializers import menu_json

routes = web.RouteTableDef()

# One item of the tree; children nest (checked to MAX_DEPTH by the service).
ITEM = obj(
    {
        "label": string(min_length=1, max_length=service.MAX_LABEL),
        "url": string(min_length=1, max_length=service.MAX_URL),
        "entryId": string(min_length=1),
        "children": array({"type": "object"}),
    },
    required=["label"],
)
_ITEMS = array(ITEM, max_items=service.MAX_ITEMS)
_LABEL = string(min_length=1, max_length=service.MAX_LABEL)


def menu_body(*, creating: bool) -> Schema:
    """content.menus.service.create_menu / put_menu."""
    if creating:
        members = {"name": string(pattern=service.MENU_NAME_RE.pattern), "label": _LABEL}
        return obj({**members, "items": _ITEMS}, required=["name"])
    return obj({"name": string(), "label": _LABEL, "items": _ITEMS}, required=["items"])


@routes.get("/api/menus")
@admin_route("content.read")
@operation(auth="admin")
async def list_menus(request: web.Request, principal: Principal) -> web.Response:
    rows = await service.list_menus(context(request))
    return json_response({"data": [menu_json(r) for r in rows]})


@routes.post("/api/menus")
@admin_route("menus.manage")
@operation(status=201, body=menu_body(creating=True), auth="admin", errors=(409,))
async def create_menu(request: web.Request, principal: Principal) -> web.Response:
    row = await service.create_menu(context(request), principal, await read_body(request))
    return json_response(menu_json(row), status=201)


@routes.get("/api/menus/{name}")
@admin_route("content.read")
@operation(auth="admin")
async def get_menu(request: web.Request, principal: Principal) -> web.Response:
    return json_response(
        menu_json(await service.get_menu(context(request), request.match_info["name"]))
    )


@routes.put("/api/menus/{name}")
@admin_route("menus.manage")
@operation(
    body=menu_body(creating=False),
    auth="admin",
    errors=(409,),
    other={201: (JSON, {"type": "object"})},
)
async def put_menu(request: web.Request, principal: Principal) -> web.Response:
    """Replace a menu's label and items; a missing menu is created (201)."""
    body = await read_body(request)
    row, created = await service.put_menu(
        context(request), principal, request.match_info["name"], body
    )
    return json_response(menu_json(row), status=201 if created else 200)


@routes.delete("/api/menus/{name}")
@admin_route("menus.manage")
@operation(status=204, auth="admin")
async def delete_menu(request: web.Request, principal: Principal) -> web.Response:
    await service.delete_menu(context(request), principal, request.match_info["name"])
    return web.Response(status=204)
