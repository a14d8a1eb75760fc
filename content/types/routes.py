"""Content types under /api/types (read: content.read; change: types.manage)."""

from __future__ import annotations

from aiohttp import web

from common.openapi import Schema, array, boolean, obj, operation, string
from common.web import json_response
from content.auth.credentials import admin_route
from content.auth.principal import Principal
from content.context import context
from content.http import read_body
from content.types import service
from content.types.fields import FIELD_TYPES
from content.types.serializers import type_json
from content.types.service import TYPE_NAME_RE

routes = web.RouteTableDef()


def type_body(*, creating: bool) -> Schema:
    """The OpenAPI schema of a content type body (content.types.service.clean_type)."""
    return obj(
        {
            "name": string(pattern=TYPE_NAME_RE.pattern),
            "label": string(min_length=1, max_length=200),
            "fields": array({"type": "object"}),
            "single": boolean(),
            "previewUrl": string(nullable=True),
        },
        required=["name"] if creating else [],
    )


@routes.get("/api/field-types")
@admin_route("content.read")
@operation(auth="admin")
async def field_types(request: web.Request, principal: Principal) -> web.Response:
    """What the admin UI renders for each field type, its options and empty value."""
    return json_response({"data": [t.metadata() for t in FIELD_TYPES.values()]})


@routes.get("/api/types")
@admin_route("content.read")
@operation(auth="admin")
async def list_types(request: web.Request, principal: Principal) -> web.Response:
    rows = await service.list_types(context(request))
    return json_response({"data": [type_json(r) for r in rows]})


@routes.post("/api/types")
@admin_route("types.manage")
@operation(status=201, body=type_body(creating=True), auth="admin", errors=(409,))
async def create_type(request: web.Request, principal: Principal) -> web.Response:
    row = await service.create_type(context(request), principal, await read_body(request))
    return json_response(type_json(row), status=201)


@routes.get("/api/types/{name}")
@admin_route("content.read")
@operation(auth="admin")
async def get_type(request: web.Request, principal: Principal) -> web.Response:
    return json_response(
        type_json(await service.get_type(context(request), request.match_info["name"]))
    )


@routes.patch("/api/types/{name}")
@admin_route("types.manage")
@operation(body=type_body(creating=False), auth="admin", errors=(409,))
async def update_type(request: web.Request, principal: Principal) -> web.Response:
    body = await read_body(request)
    row = await service.update_type(context(request), principal, request.match_info["name"], body)
    return json_response(type_json(row))


@routes.delete("/api/types/{name}")
@admin_route("types.manage")
@operation(status=204, auth="admin", errors=(409,))
async def delete_type(request: web.Request, principal: Principal) -> web.Response:
    await service.delete_type(context(request), principal, request.match_info["name"])
    return web.Response(status=204)
