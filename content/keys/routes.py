"""/api/agent-keys (anyone, for themselves) and /api/delivery-keys (keys.manage).

Minting either kind also needs ``keys.mint``, a capability no agent key holds.
"""

from __future__ import annotations

from aiohttp import web

from common.openapi import array, integer, obj, operation, string
from common.web import json_response
from content.auth.credentials import admin_route
from content.auth.permissions import PERMISSIONS
from content.auth.principal import Principal
from content.context import context
from content.http import read_body
from content.keys import service
from content.keys.serializers import agent_key_json, delivery_key_json

routes = web.RouteTableDef()
NO_STORE = {"Cache-Control": "no-store"}


@routes.get("/api/agent-keys")
@admin_route()
@operation(auth="admin")
async def list_agent_keys(request: web.Request, principal: Principal) -> web.Response:
    ctx = context(request)
    rows = await service.list_agent_keys(ctx, principal.user.id)
    now = ctx.clock.now()
    return json_response({"data": [agent_key_json(r, now) for r in rows]})


@routes.post("/api/agent-keys")
@admin_route("keys.mint")
@operation(
    status=201,
    body=obj(
        {
            "name": string(min_length=1, max_length=100),
            "grants": array(string(description=f"one of {', '.join(sorted(PERMISSIONS))}")),
            "expiresInDays": integer(minimum=1, maximum=service.MAX_DAYS),
            "password": string(),
        },
        required=["name", "grants"],
        additional=True,
    ),
    auth="admin",
    errors=(429,),
)
async def mint_agent_key(request: web.Request, principal: Principal) -> web.Response:
    ctx = context(request)
    row, token = await service.mint_agent_key(ctx, principal, await read_body(request))
    body = {**agent_key_json(row, ctx.clock.now()), "key": token}
    return json_response(body, status=201, headers=NO_STORE)


@routes.delete("/api/agent-keys/{id}")
@admin_route()
@operation(auth="admin")
async def revoke_agent_key(request: web.Request, principal: Principal) -> web.Response:
    ctx = context(request)
    row = await service.revoke_agent_key(ctx, principal, request.match_info["id"])
    return json_response(agent_key_json(row, ctx.clock.now()))


@routes.get("/api/delivery-keys")
@admin_route("keys.manage")
@operation(auth="admin")
async def list_delivery_keys(request: web.Request, principal: Principal) -> web.Response:
    ctx = context(request)
    rows = await service.list_delivery_keys(ctx)
    now = ctx.clock.now()
    return json_response({"data": [delivery_key_json(r, now) for r in rows]})


@routes.post("/api/delivery-keys")
@admin_route("keys.manage", "keys.mint")
@operation(
    status=201,
    body=obj(
        {"name": string(min_length=1, max_length=100), "types": array(string())},
        required=["name", "types"],
        additional=True,
    ),
    auth="admin",
)
async def mint_delivery_key(request: web.Request, principal: Principal) -> web.Response:
    ctx = context(request)
    row, token = await service.mint_delivery_key(ctx, principal, await read_body(request))
    body = {**delivery_key_json(row, ctx.clock.now()), "key": token}
    return json_response(body, status=201, headers=NO_STORE)


@routes.patch("/api/delivery-keys/{id}")
@admin_route("keys.manage")
@operation(
    body=obj({"name": string(min_length=1, max_length=100), "types": array(string())}),
    auth="admin",
)
async def update_delivery_key(request: web.Request, principal: Principal) -> web.Response:
    ctx = context(request)
    body = await read_body(request)
    row = await service.update_delivery_key(ctx, principal, request.match_info["id"], body)
    return json_response(delivery_key_json(row, ctx.clock.now()))


@routes.delete("/api/delivery-keys/{id}")
@admin_route("keys.manage")
@operation(auth="admin")
async def revoke_delivery_key(request: web.Request, principal: Principal) -> web.Response:
    ctx = context(request)
    row = await service.revoke_delivery_key(ctx, principal, request.match_info["id"])
    return json_response(delivery_key_json(row, ctx.clock.now()))
