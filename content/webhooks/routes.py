"""/api/webhooks (webhooks.manage): create (secret shown once), list, update, delete, attempts."""

from __future__ import annotations

from aiohttp import web

from common.openapi import array, boolean, obj, operation, string
from common.outbound import MAX_URL
from common.web import json_response
from content.auth.credentials import admin_route
from content.auth.principal import Principal
from content.context import context
from content.http import page_body, paging, read_body
from content.openapi import PAGE, PAGING
from content.webhooks import service
from content.webhooks.events import EVENTS
from content.webhooks.serializers import attempt_json, webhook_json

routes = web.RouteTableDef()
NO_STORE = {"Cache-Control": "no-store"}

_FIELDS = {
    "name": string(min_length=1, max_length=100),
    "url": string(max_length=MAX_URL),
    "events": array(string(enum=list(EVENTS))),
    "enabled": boolean(),
}


@routes.get("/api/webhooks")
@admin_route("webhooks.manage")
@operation(auth="admin")
async def list_webhooks(request: web.Request, principal: Principal) -> web.Response:
    rows = await service.list_webhooks(context(request), principal)
    return json_response({"data": [webhook_json(r) for r in rows]})


@routes.post("/api/webhooks")
@admin_route("webhooks.manage")
@operation(status=201, body=obj(_FIELDS, required=["name", "url"]), auth="admin")
async def create_webhook(request: web.Request, principal: Principal) -> web.Response:
    """Create a webhook; the answer carries its signing secret, this once."""
    ctx = context(request)
    row, secret = await service.create_webhook(ctx, principal, await read_body(request))
    return json_response({**webhook_json(row), "secret": secret}, status=201, headers=NO_STORE)


@routes.get("/api/webhooks/{id}")
@admin_route("webhooks.manage")
@operation(auth="admin")
async def get_webhook(request: web.Request, principal: Principal) -> web.Response:
    row = await service.get_webhook(context(request), principal, request.match_info["id"])
    return json_response(webhook_json(row))


@routes.patch("/api/webhooks/{id}")
@admin_route("webhooks.manage")
@operation(body=obj(_FIELDS), auth="admin")
async def update_webhook(request: web.Request, principal: Principal) -> web.Response:
    ctx = context(request)
    body = await read_body(request)
    row = await service.update_webhook(ctx, principal, request.match_info["id"], body)
    return json_response(webhook_json(row))


@routes.delete("/api/webhooks/{id}")
@admin_route("webhooks.manage")
@operation(status=204, auth="admin")
async def delete_webhook(request: web.Request, principal: Principal) -> web.Response:
    await service.delete_webhook(context(request), principal, request.match_info["id"])
    return web.Response(status=204)


@routes.get("/api/webhooks/{id}/attempts")
@admin_route("webhooks.manage")
@operation(response=PAGE, query=PAGING, auth="admin")
async def list_attempts(request: web.Request, principal: Principal) -> web.Response:
    """A webhook's delivery attempts, newest first, paged as every list is."""
    page = paging(request)
    rows, total = await service.list_attempts(
        context(request), principal, request.match_info["id"], page
    )
    return json_response(page_body([attempt_json(r) for r in rows], page, total))
